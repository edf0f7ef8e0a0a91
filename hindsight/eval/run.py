"""Run one policy over the evaluation split under a recipe's protocol, into runs/<name>/.

    python eval/run.py recipes/tiny.yaml --name base
    python eval/run.py recipes/tiny.yaml --name sft --adapter outputs/sft/adapter
    python eval/run.py recipes/tiny.yaml --name sft --student outputs/sft    # adapter or full model
    python eval/run.py recipes/tiny.yaml --name gpt --set policy.backend=litellm --set policy.model=openai/gpt-4.1

Reads the recipe's benchmark (data), search index and policy (its model, --adapter or
--student). Writes <runs_dir>/<name>/episodes.jsonl (one episode a target), manifest.json and
instances.jsonl (the targets). Resumable: run it again with the same name and it continues where
it stopped.

One engine per GPU: shard the targets, then merge into the run an unsharded command would write:
    python eval/run.py RECIPE --name sft --student outputs/sft --shard 3/8    # → <name>/shards/3-of-8/
    python eval/run.py RECIPE --name sft --merge 8
"""

from __future__ import annotations

import sys

from hindsight.eval.evaluation import evaluate, merge_evaluation
from hindsight.recipe import recipe_command
from hindsight.runner import RunDirError, error_summary
from hindsight.shards import parse_shard


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--name", required=True, help="the run's folder under the recipe's runs_dir")
        student = parser.add_mutually_exclusive_group()
        student.add_argument("--adapter", help="a PEFT adapter to apply to the policy's model")
        student.add_argument(
            "--student",
            help="a train/sft.py output_dir: its adapter on policy.model, or its "
            "fully fine-tuned model (train_manifest.json says which)",
        )
        parser.add_argument("--split", help="the split to evaluate (default: the recipe's data.split)")
        parser.add_argument("--limit", type=int, help="only the first N targets of the split")
        sharding = parser.add_mutually_exclusive_group()
        sharding.add_argument(
            "--shard", metavar="I/N", help="only every N-th target starting at the I-th (one job of N)"
        )
        sharding.add_argument("--merge", type=int, metavar="N", help="merge the run's N complete shards into one run")

    def work(recipe, args):
        if args.merge:
            run_dir = merge_evaluation(recipe, args.name, args.merge, split=args.split, limit=args.limit)
        else:
            shard = parse_shard(args.shard) if args.shard else None
            run_dir = evaluate(
                recipe,
                args.name,
                adapter=args.adapter,
                split=args.split,
                limit=args.limit,
                student=args.student,
                shard=shard,
            )
            failed = error_summary(run_dir)
            if failed:  # the run is not a measurement of the policy until these are played again
                return f"error: {failed}", 1
            if shard:
                return (
                    f"shard episodes: {run_dir / 'episodes.jsonl'}\nnext, once every shard is done: --merge {shard[1]}"
                )
        return (
            f"episodes: {run_dir / 'episodes.jsonl'}\nmanifest: {run_dir / 'manifest.json'}\n"
            f"next: python eval/report.py {args.name} --runs-dir {run_dir.parent}"
        )

    return recipe_command(__doc__, work, argv, options, errors=(RunDirError,))


if __name__ == "__main__":
    sys.exit(main())
