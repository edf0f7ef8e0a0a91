"""Benchmark data: instances and corpora in the native (Inspire) format."""

from hindsight.data.instances import InstanceError, load_instances

__all__ = ["InstanceError", "load_instances"]
