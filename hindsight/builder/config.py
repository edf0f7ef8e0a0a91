"""The builder's settings: one YAML file, read into typed configs that reject unknown keys.

targets: targets.jsonl            # {id, title, abstract, date}, one target a line
bibliographies: refs.jsonl        # {target, references: [{id, context?}]}
corpus: arxiv-metadata-oai-snapshot.json
judges: [openai/gpt-4.1, {model: openai/qwen, api_base: "http://127.0.0.1:8000/v1"}]
generator: openai/gpt-4.1
auditor: openai/gpt-4.1-mini
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import yaml

from hindsight.config import ConfigError, from_mapping
from hindsight.corpus import CORPUS_FORMATS
from hindsight.errors import UserError


@dataclass(frozen=True)
class ModelSpec:
    model: str  # any litellm model string
    api_base: str | None = None
    api_key: str | None = None  # a local server's; providers' keys come from the environment
    timeout_s: float = 120.0
    max_retries: int = 3
    max_tokens: int = 1200

    def public(self) -> dict:
        """What the manifest records: everything but the key."""
        return {key: value for key, value in asdict(self).items() if key != "api_key"}


@dataclass(frozen=True)
class BuildConfig:
    """Relative file and folder names are read from the settings file's folder."""

    targets: str
    bibliographies: str
    corpus: str
    judges: tuple[ModelSpec, ...]
    generator: ModelSpec
    auditor: ModelSpec
    cited_papers: str | None = None  # papers merged under the corpus (its records win): e.g. a converter's cited papers
    corpus_format: str = "auto"
    corpus_date_field: str = "date"
    corpus_categories: tuple[str, ...] = ()
    id_prefix: str = "build"
    cutoff_months: int = 3  # cutoff = the target's first-posted date minus this
    max_age_years: int = 4  # references older than this before the target are not graded
    flag_confidence: float = 0.5  # an identity guess at least this confident flags the instance
    overlap_flag: float = 0.5  # recorded beside the audit; does not flag on its own
    split_shares: tuple[float, ...] = (0.7, 0.1)  # train, dev by target date; the rest is eval
    concurrency: int = 8
    chunk_targets: int = 16  # targets finished and written together (the unit a rerun resumes from)
    cache_dir: str | None = None  # reply cache (default: $HINDSIGHT_CACHE/responses)
    path: str = field(default="", compare=False)

    def __post_init__(self):
        if self.corpus_format not in CORPUS_FORMATS:
            raise UserError(f"corpus_format {self.corpus_format!r}: known are {', '.join(CORPUS_FORMATS)}")
        if not self.judges:
            raise UserError("judges: name at least one model")
        if len(self.split_shares) != 2 or not 0 <= self.split_shares[0] + self.split_shares[1] <= 1:
            raise UserError(f"split_shares {self.split_shares}: two shares (train, dev) summing to at most 1")

    def settings(self) -> dict:
        """The construction settings a manifest records (no keys, no file paths' contents)."""
        out = asdict(self)
        out.pop("path")
        out["judges"] = [judge.public() for judge in self.judges]
        out["generator"], out["auditor"] = self.generator.public(), self.auditor.public()
        return out


def _model(value, where: str) -> ModelSpec:
    if isinstance(value, str):
        return ModelSpec(model=value)
    return from_mapping(ModelSpec, value, where)


def load_build_config(path: str | Path, overrides: dict | None = None) -> BuildConfig:
    """Read `path`; relative file names in it are taken from the file's folder."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of settings")
    raw = {**raw, **(overrides or {})}
    models = {}
    for key in ("generator", "auditor"):
        if key not in raw:
            raise ConfigError(f"{path}: {key}: missing (a litellm model string or a mapping with model:)")
        models[key] = _model(raw.pop(key), f"{path}: {key}")
    judges = raw.pop("judges", None)
    if not isinstance(judges, list):
        raise ConfigError(f"{path}: judges: expected a list of models")
    models["judges"] = tuple(_model(judge, f"{path}: judges[{i}]") for i, judge in enumerate(judges))
    placeholder = ModelSpec(model="")
    config = from_mapping(
        BuildConfig, {**raw, "judges": (placeholder,), "generator": placeholder, "auditor": placeholder}, str(path)
    )
    for key in ("targets", "bibliographies", "corpus", "cited_papers", "cache_dir"):
        if getattr(config, key) is not None:
            value = Path(getattr(config, key))
            models[key] = str(value if value.is_absolute() else path.parent / value)
    return replace(config, path=str(path), **models)
