"""The capability gate: before a student is compared, can it act at all?

A Base-vs-SFT comparison means nothing when the base cannot do what every demonstration does:
write a query from its brief, submit what its searches returned, end with a valid answer. The
gate measures those three things on episodes of targets it never trained on (the recipe's
`gate` section names the split and the thresholds) and says which one is missing.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher

from hindsight.config import ConfigError, from_mapping
from hindsight.schema import Episode

USAGE = """The capability gate: run a student on the recipe's gate split and check it can act at all.

    python eval/gate.py recipes/demo.yaml --name gate-base                  # policy.model
    python eval/gate.py recipes/demo.yaml --name gate-sft --student outputs/demo/sft

Writes runs/<name>/ (episodes, manifest) and runs/<name>/gate.json; prints the three numbers
(first queries copied from the brief, submitted ids surfaced, malformed endings) and exits 1
naming each capability below the recipe's `gate` thresholds. The code is hindsight.eval.gate.
"""

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class GateConfig:
    split: str = "dev"  # the targets the gate runs on: never the eval split, never trained on
    max_targets: int | None = None  # only the first N of them
    min_copied_first_queries: float = 0.5  # share of episodes whose first query is copied from the brief
    min_surfaced_submissions: float = 0.5  # share of submitted ids that a search of the same episode returned
    max_malformed: float = 0.2  # share of episodes that end in an unreadable action
    retrain_epochs: int = 2  # the demo's base stage: further epochs it may take before it gives up

    @classmethod
    def from_recipe(cls, recipe) -> GateConfig:
        config = from_mapping(cls, recipe.stages.get("gate"), f"{recipe.path}: gate")
        if config.split == "eval":
            raise ConfigError(
                f"{recipe.path}: gate.split may not be eval: the gate must not see the targets "
                "the comparison is made on"
            )
        return config


def recipe_summary(recipe) -> str:
    """For `hindsight validate`: the gate section read and checked."""
    cfg = GateConfig.from_recipe(recipe)
    return (
        f"gate on {cfg.split}: copied first queries ≥ {cfg.min_copied_first_queries:.0%}, "
        f"surfaced submissions ≥ {cfg.min_surfaced_submissions:.0%}, malformed ≤ {cfg.max_malformed:.0%}"
    )


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def copied_from(query: str, brief: str, share: float = 0.8, min_words: int = 3) -> bool:
    """Whether `query` is the brief's text: at least `share` of its words match the brief's in
    order. A sentence learned by heart shares the briefs' stock phrases ("we work on", "problems
    in") but not their rare words, and falls short of the share."""
    query_words, brief_words = words(query), words(brief)
    if len(query_words) < min_words:
        return False
    blocks = SequenceMatcher(None, query_words, brief_words, autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks) >= share * len(query_words)


def first_query(episode: Episode) -> str | None:
    for step in episode.steps:
        if step.tool == "search_papers" and isinstance(step.args, dict) and isinstance(step.args.get("query"), str):
            return step.args["query"]
    return None


@dataclass
class Capabilities:
    episodes: int
    copied_first_queries: float  # share of episodes whose first query is copied from the brief
    surfaced_submissions: float  # share of submitted ids that a search of the same episode returned
    malformed: float  # share of episodes that ended malformed
    submitted_ids: int

    def to_dict(self) -> dict:
        return asdict(self)


def measure(episodes: list[Episode], briefs: dict[str, str]) -> Capabilities:
    """The three capabilities over `episodes`; `briefs` maps an episode's instance id to its brief."""
    if not episodes:
        raise ValueError("the gate needs at least one episode")
    copied = sum(1 for ep in episodes if (query := first_query(ep)) and copied_from(query, briefs[ep.instance_id]))
    submitted = surfaced = 0
    for ep in episodes:
        returned = set(ep.exposure_order())
        submitted += len(ep.submission)
        surfaced += sum(1 for paper in ep.submission if paper.id in returned)
    return Capabilities(
        episodes=len(episodes),
        copied_first_queries=copied / len(episodes),
        surfaced_submissions=surfaced / submitted if submitted else 0.0,
        malformed=sum(1 for ep in episodes if ep.status == "malformed") / len(episodes),
        submitted_ids=submitted,
    )


# What a student that fails each check lacks, and what to try.
ADVICE = {
    "copied_first_queries": "it does not copy its brief into a query: the query-copying phase did not take "
    "(check curriculum.json: did 'copying queries' reach its loss? raise BASE_QUERY_COPY_STEPS "
    "or BASE_ATTEMPTS)",
    "surfaced_submissions": "it submits ids it never saw: copying ids out of results did not take "
    "(check curriculum.json: did 'copying ids' reach its loss? raise BASE_ID_COPY_STEPS "
    "or BASE_ATTEMPTS)",
    "malformed": "its actions do not parse: more epochs on the naive demonstrations (BASE_EPOCHS)",
}


def failures(measured: Capabilities, config: GateConfig) -> list[str]:
    """One line for each capability below its threshold, saying what it means."""
    checks = [
        ("copied_first_queries", measured.copied_first_queries, config.min_copied_first_queries, ">="),
        ("surfaced_submissions", measured.surfaced_submissions, config.min_surfaced_submissions, ">="),
        ("malformed", measured.malformed, config.max_malformed, "<="),
    ]
    lines = []
    for name, value, threshold, sense in checks:
        ok = value >= threshold if sense == ">=" else value <= threshold
        if not ok:
            lines.append(f"{name} {value:.1%} (needs {sense} {threshold:.0%}): {ADVICE[name]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """eval/gate.py RECIPE --name NAME [--student DIR]: see the module's command-line help."""
    from hindsight.data import load_instances
    from hindsight.eval.evaluation import evaluate
    from hindsight.recipe import recipe_command
    from hindsight.runner import RunDirError
    from hindsight.runs import load_run

    def options(parser):
        parser.add_argument("--name", required=True, help="the gate run's folder under the recipe's runs_dir")
        parser.add_argument("--student", help="a train/sft.py output_dir (default: the recipe's policy.model)")

    def work(recipe, args):
        config = GateConfig.from_recipe(recipe)
        run_dir = evaluate(
            recipe, args.name, split=config.split, limit=config.max_targets, student=args.student, progress=False
        )
        run = load_run(run_dir)
        briefs = {inst.id: inst.brief for inst in load_instances(run.instances_path)}
        measured = measure(list(run.episodes.values()), briefs)
        missing = failures(measured, config)
        verdict = {
            "passed": not missing,
            "split": config.split,
            **measured.to_dict(),
            "failures": missing,
            "thresholds": {
                "min_copied_first_queries": config.min_copied_first_queries,
                "min_surfaced_submissions": config.min_surfaced_submissions,
                "max_malformed": config.max_malformed,
            },
        }
        (run_dir / "gate.json").write_text(json.dumps(verdict, indent=1) + "\n")
        line = (
            f"gate on {measured.episodes} {config.split} targets: first queries copied from the brief "
            f"{measured.copied_first_queries:.1%}, submitted ids surfaced {measured.surfaced_submissions:.1%} "
            f"(of {measured.submitted_ids}), malformed {measured.malformed:.1%}"
        )
        if missing:
            return line + "\nFAILED: the student lacks a capability the comparison needs:\n  " + "\n  ".join(missing), 1
        return line + "\npassed", 0

    return recipe_command(USAGE, work, argv, options, errors=(RunDirError,))
