"""Build a benchmark from your own targets: models judge the references, write the briefs and
audit them (hindsight.builder.builder; `python -m hindsight.builder`)."""

from hindsight.builder.builder import build, estimate_cost, verify_release
from hindsight.builder.config import BuildConfig, ModelSpec, load_build_config

__all__ = ["BuildConfig", "ModelSpec", "build", "estimate_cost", "load_build_config", "verify_release"]
