"""Recipes: one YAML file per experiment, a section per stage, read into typed configs.

    data:     where instances and corpus come from (see hindsight.data.load_benchmark)
    search:   the search backend
    protocol: the evaluation protocol (hindsight.protocol.ProtocolConfig)
    policy:   the agent that is evaluated (eval/run.py)
    distill, train, rl: read by their own stages
    gate:     the capability gate a student passes before it is compared (eval/gate.py)

Unknown sections and keys are errors that name the file, section and key. `--set
section.key=value` on any command line overrides a value (parsed as YAML).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from hindsight.config import ConfigError, from_mapping
from hindsight.errors import UserError
from hindsight.protocol import ProtocolConfig

STAGE_SECTIONS = ("distill", "train", "gate", "rl")


@dataclass(frozen=True)
class DataConfig:
    source: str = "world"  # a native folder, a DeepScholar-Bench folder, or world[:SEED]
    split: str = "eval"  # the split eval/run.py evaluates
    max_targets: int | None = None  # eval/run.py: only the first N targets of that split (a smaller experiment)
    corpus: str | None = None  # a paper snapshot merged into the benchmark's corpus (an open corpus)
    corpus_format: str = "auto"  # auto, jsonl, parquet or arxiv-snapshot (the arXiv metadata snapshot)
    corpus_date_field: str = "date"  # jsonl, parquet: the field holding the first-posted date
    corpus_categories: tuple[str, ...] = ()  # keep only snapshot papers with a category starting so, e.g. [cs.]

    def load(self):
        """(corpus, instances, report) for every stage of a recipe: one place, so they cannot drift apart."""
        from hindsight.data import load_benchmark
        from hindsight.data.open_corpus import ExternalCorpus

        external = None
        if self.corpus:
            external = ExternalCorpus(self.corpus, self.corpus_format, self.corpus_date_field, self.corpus_categories)
        return load_benchmark(self.source, corpus=external)


@dataclass(frozen=True)
class SearchConfig:
    backend: str = "bm25"  # bm25, dense or hybrid
    model: str | None = None  # the dense model (default: the bundled MiniLM)
    cache_dir: str | None = None  # where indexes live (default: $HINDSIGHT_CACHE)

    def build(self, corpus):
        """The search backend every stage of a recipe uses: one place, so they cannot drift apart."""
        from hindsight.search import make_backend

        options = {"cache_dir": self.cache_dir} if self.cache_dir else {}
        if self.model and self.backend in ("dense", "hybrid"):
            options["model"] = self.model
        return make_backend(self.backend, corpus, **options)


@dataclass(frozen=True)
class PolicyConfig:
    backend: str = "bm25-oneshot"  # bm25-oneshot, hf, vllm or litellm
    model: str | None = None  # hub id or local path (hf, vllm) or a litellm model string
    revision: str | None = None  # hf, vllm: the hub revision (branch, tag or commit) of the model
    adapter: str | None = None  # a PEFT adapter folder (hf, vllm)
    api_base: str | None = None  # litellm: an OpenAI-compatible server
    temperature: float = 0.0  # sampling temperature; 0 is greedy
    top_p: float = 1.0  # nucleus sampling mass
    max_new_tokens: int = 512  # most tokens one reply may have
    seed: int = 0  # sampling seed
    batch_size: int = 32  # episodes in progress at once
    concurrency: int = 8  # litellm requests in flight
    enable_thinking: bool = False  # Qwen3 templates: let the model think before it acts
    max_context: int | None = (
        None  # prompt + reply tokens beyond which an episode ends as context_overflow (default: the model's; vllm 32768)
    )
    tool_style: str = "auto"  # how tool calls are written in text: auto, qwen or llama
    chat_template: str | None = None  # hf, vllm: a .jinja file to render prompts with; default: the model's own
    dtype: str = "auto"  # hf, vllm: weights' dtype (auto, float32, bfloat16, float16)
    reuse_cache: bool = True  # keep an episode's keys/values across its turns (hf: its cache; vllm: prefix caching)
    merge_adapter: bool = False  # hf, vllm: fold the adapter into the weights once and serve them without LoRA
    enforce_eager: bool = False  # vllm: no torch.compile or CUDA graphs (a CPU engine starts ~100 s sooner)


@dataclass(frozen=True)
class Recipe:
    path: str
    data: DataConfig = field(default_factory=DataConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    runs_dir: str = "runs"
    stages: dict = field(default_factory=dict)  # distill/train sections, validated by their stage

    def to_dict(self) -> dict:
        out = {key: asdict(getattr(self, key)) for key in ("data", "search", "policy")}
        return {**out, "protocol": self.protocol.to_dict(), "runs_dir": self.runs_dir, **self.stages}


SECTIONS = {"data": DataConfig, "search": SearchConfig, "protocol": ProtocolConfig, "policy": PolicyConfig}


def apply_overrides(raw: dict, overrides: list[str], where: str) -> dict:
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or ("." not in key and key != "runs_dir"):
            raise ConfigError(f"--set {item!r}: write section.key=value (or runs_dir=PATH)")
        if key == "runs_dir":
            raw["runs_dir"] = value
            continue
        section, name = key.split(".", 1)
        raw.setdefault(section, {})
        if not isinstance(raw[section], dict):
            raise ConfigError(f"{where}: section {section!r} is not a mapping")
        raw[section][name] = yaml.safe_load(value)
    return raw


def load_recipe(path: str | Path, overrides: list[str] | None = None) -> Recipe:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such recipe")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a recipe is a mapping of sections")
    raw = apply_overrides(raw, overrides or [], str(path))
    known = set(SECTIONS) | set(STAGE_SECTIONS) | {"runs_dir"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    sections = {name: from_mapping(cls, raw.get(name), f"{path}: {name}") for name, cls in SECTIONS.items()}
    return Recipe(
        path=str(path),
        runs_dir=str(raw.get("runs_dir", "runs")),
        stages={name: raw[name] for name in STAGE_SECTIONS if name in raw},
        **sections,
    )


def add_recipe_arguments(parser) -> None:
    """The recipe path and `--set section.key=value`, shared by every stage's command line."""
    parser.add_argument("recipe", type=Path, help="the experiment's YAML recipe")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a recipe value (parsed as YAML); repeatable",
    )


def recipe_command(
    doc: str, work, argv: list[str] | None = None, add_arguments=None, errors: tuple[type[Exception], ...] = ()
) -> int:
    """Every stage's command line: parse `RECIPE [--set ...]` and the stage's own options, run
    `work(recipe, args)`, print what it returns, and turn bad input (a UserError, a missing file,
    or one of `errors`) into `error: ...`, exit 2; any other exception keeps its traceback.
    `work` returns the message (empty: nothing to print), or (message, exit status)."""
    import argparse
    import sys

    from hindsight.log import cli_logging

    cli_logging()

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_recipe_arguments(parser)
    if add_arguments:
        add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        outcome = work(load_recipe(args.recipe, args.overrides), args)
    except (UserError, FileNotFoundError, *errors) as exc:  # ConfigError is a UserError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    message, status = outcome if isinstance(outcome, tuple) else (outcome, 0)
    if message:
        print(message)
    return status


def recipe_value(recipe: Recipe, dotted: str):
    """A value the recipe states, by `section.key` (for shell scripts: Slurm, the demo)."""
    value = recipe.to_dict()
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ConfigError(f"{recipe.path}: {dotted} is not set in the recipe")
        value = value[part]
    return value


def main(argv: list[str] | None = None) -> int:
    """python -m hindsight.recipe RECIPE --get SECTION.KEY [--set ...]: print one recipe value."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m hindsight.recipe", description=main.__doc__)
    add_recipe_arguments(parser)
    parser.add_argument("--get", required=True, metavar="SECTION.KEY")
    args = parser.parse_args(argv)
    try:
        value = recipe_value(load_recipe(args.recipe, args.overrides), args.get)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(value if isinstance(value, str) else json.dumps(value))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
