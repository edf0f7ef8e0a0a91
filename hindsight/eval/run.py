"""Run one policy over the evaluation split under a recipe's protocol, into runs/<name>/.

    python eval/run.py recipes/tiny.yaml --name base
    python eval/run.py recipes/tiny.yaml --name sft --adapter outputs/sft/adapter
    python eval/run.py recipes/tiny.yaml --name sft --student outputs/sft    # adapter or full model
    python eval/run.py recipes/tiny.yaml --name gpt --set policy.backend=litellm --set policy.model=openai/gpt-4.1

Reads the recipe's benchmark (data), search index and policy (its model, --adapter or
--student). Writes <runs_dir>/<name>/episodes.jsonl (one episode a target), manifest.json and
instances.jsonl (the targets). Resumable: run it again with the same name and it continues where
it stopped.
"""

from __future__ import annotations

import sys

from hindsight.eval.evaluation import evaluate
from hindsight.recipe import recipe_command
from hindsight.runner import RunDirError


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--name", required=True, help="the run's folder under the recipe's runs_dir")
        student = parser.add_mutually_exclusive_group()
        student.add_argument("--adapter", help="a PEFT adapter to apply to the policy's model")
        student.add_argument("--student", help="a train/sft.py output_dir: its adapter on policy.model, or its "
                                               "fully fine-tuned model (train_manifest.json says which)")
        parser.add_argument("--split", help="the split to evaluate (default: the recipe's data.split)")
        parser.add_argument("--limit", type=int, help="only the first N targets of the split")

    def work(recipe, args):
        run_dir = evaluate(recipe, args.name, adapter=args.adapter, split=args.split, limit=args.limit,
                           student=args.student)
        return (f"episodes: {run_dir / 'episodes.jsonl'}\nmanifest: {run_dir / 'manifest.json'}\n"
                f"next: python eval/report.py {args.name} --runs-dir {run_dir.parent}")

    return recipe_command(__doc__, work, argv, options, errors=(RunDirError,))


if __name__ == "__main__":
    sys.exit(main())
