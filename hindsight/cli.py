"""One command for every stage: `hindsight STAGE ...` (or `python -m hindsight STAGE ...`).

The files under distill/, train/ and eval/ run the same functions; `hindsight validate` reads
recipes into every section's typed config, stage sections included, without running anything.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

COMMANDS = {
    "data": ("hindsight.data.__main__", "make a benchmark (world, DeepScholar) and describe it"),
    "build": ("hindsight.builder.__main__", "build a benchmark from your own targets with model judges"),
    "search": ("hindsight.search.__main__", "query a corpus under a cutoff"),
    "teacher": ("hindsight.distill.teacher", "candidate trajectories from the privileged teacher"),
    "replay": ("hindsight.distill.replay", "replay candidates through the ordinary interface, flag leaks"),
    "select": ("hindsight.distill.select", "the demonstrations: best flag-free replay per train target"),
    "audit": ("hindsight.distill.audit", "leak audit of an SFT set"),
    "naive": ("hindsight.distill.naive", "naive first-query demonstrations"),
    "sft": ("hindsight.train.sft", "LoRA SFT of the student (under accelerate launch for several GPUs)"),
    "rl": (
        "hindsight.rl.grpo",
        "GRPO of a student on the search environment (under accelerate launch for several GPUs)",
    ),
    "run": ("hindsight.eval.run", "run one policy over the evaluation split"),
    "compare": ("hindsight.eval.compare", "compare runs: funnel, end-to-end metrics, paired intervals"),
    "report": ("hindsight.eval.report", "print one run"),
    "gate": ("hindsight.eval.gate", "check a student can act at all (the recipe's gate section)"),
    "validate": ("hindsight.cli", "check recipes: every section's typed config, nothing run"),
}


# The stage sections' configs, by module like COMMANDS: each has recipe_summary(recipe), which
# reads its section into the typed config (raising ConfigError) and says what the stage would do.
# Named, not imported, so that the core depends on no stage.
RECIPE_SECTIONS = ("hindsight.distill.config", "hindsight.train.config", "hindsight.eval.gate", "hindsight.rl.config")


def validate(paths: list[str], overrides: list[str] | None = None) -> list[str]:
    """One line per recipe: what each stage would read and write. Raises ConfigError on the first
    bad recipe, naming its file and key. Reads the recipes; writes nothing."""
    from hindsight.config import read_chat_template
    from hindsight.recipe import load_recipe

    lines = []
    for path in paths:
        recipe = load_recipe(path, overrides)
        if recipe.policy.chat_template:
            read_chat_template(recipe.policy.chat_template, f"{path}: policy.chat_template")
        stages = [importlib.import_module(module).recipe_summary(recipe) for module in RECIPE_SECTIONS]
        lines.append(
            f"{path}: ok — {recipe.data.source}/{recipe.data.split}, policy {recipe.policy.backend}, "
            f"{', '.join(stages)}, runs in {recipe.runs_dir}"
        )
    return lines


def validate_main(argv: list[str]) -> int:
    import argparse

    from hindsight.config import ConfigError

    parser = argparse.ArgumentParser(prog="hindsight validate", description=validate.__doc__)
    parser.add_argument("recipes", nargs="+", type=Path)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    args = parser.parse_args(argv)
    try:
        print("\n".join(validate([str(p) for p in args.recipes], args.overrides)))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def usage() -> str:
    width = max(map(len, COMMANDS))
    return "usage: hindsight COMMAND [ARGS]   (hindsight COMMAND -h for its arguments)\n\n" + "\n".join(
        f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()
    )


def main(argv: list[str] | None = None) -> int:
    from hindsight.log import cli_logging

    cli_logging()
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] not in COMMANDS:
        print(f"error: unknown command {argv[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    if argv[0] == "validate":
        return validate_main(argv[1:])
    sys.argv[0] = f"hindsight {argv[0]}"  # argparse names the command in its usage lines
    return importlib.import_module(COMMANDS[argv[0]][0]).main(argv[1:]) or 0
