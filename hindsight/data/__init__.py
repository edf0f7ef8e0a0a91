"""Benchmark data: instances and corpora in the native (Inspire) format, from three sources."""

from hindsight.data.instances import InstanceError, load_instances
from hindsight.data.loader import load_benchmark, materialise

__all__ = ["InstanceError", "load_instances", "load_benchmark", "materialise"]
