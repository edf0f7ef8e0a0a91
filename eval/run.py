"""Run one policy over the evaluation split under a recipe's protocol, into runs/<name>/.

    python eval/run.py recipes/tiny.yaml --name base
    python eval/run.py recipes/tiny.yaml --name sft --adapter outputs/sft/adapter
    python eval/run.py recipes/tiny.yaml --name sft --student outputs/sft    # adapter or full model
    python eval/run.py recipes/tiny.yaml --name gpt --set policy.backend=litellm --set policy.model=openai/gpt-4.1

Resumable: run it again with the same name and it continues where it stopped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the checkout, not this script's folder

from eval.evaluation import evaluate  # noqa: E402
from hindsight.config import ConfigError  # noqa: E402
from hindsight.recipe import add_recipe_arguments, load_recipe  # noqa: E402
from hindsight.runner import RunDirError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_recipe_arguments(parser)
    parser.add_argument("--name", required=True, help="the run's folder under the recipe's runs_dir")
    student = parser.add_mutually_exclusive_group()
    student.add_argument("--adapter", help="a PEFT adapter to apply to the policy's model")
    student.add_argument("--student", help="a train/sft.py output_dir: its adapter on policy.model, or its "
                                           "fully fine-tuned model (train_manifest.json says which)")
    parser.add_argument("--split", help="the split to evaluate (default: the recipe's data.split)")
    parser.add_argument("--limit", type=int, help="only the first N targets of the split")
    args = parser.parse_args(argv)
    try:
        recipe = load_recipe(args.recipe, args.overrides)
        run_dir = evaluate(recipe, args.name, adapter=args.adapter, split=args.split, limit=args.limit,
                           student=args.student)
    except (ConfigError, RunDirError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"episodes: {run_dir / 'episodes.jsonl'}\nmanifest: {run_dir / 'manifest.json'}\n"
          f"next: python eval/report.py {args.name} --runs-dir {run_dir.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
