"""Build a benchmark from your own targets: models judge the references, write the briefs and
audit them (hindsight.build.builder; `python -m hindsight.build`)."""

from hindsight.build.builder import build, estimate_cost, verify_release
from hindsight.build.config import BuildConfig, ModelSpec, load_build_config

__all__ = ["BuildConfig", "ModelSpec", "build", "estimate_cost", "load_build_config", "verify_release"]
