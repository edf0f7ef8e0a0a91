"""Candidate trajectories from the privileged teacher.

    python distill/teacher.py recipes/tiny.yaml

For every train and dev target, K candidates (tasks "<instance>#<k>", seeds seed+k) run through
the ordinary SearchEnv under the protocol, with the teacher's prompt: the deployment system
prompt, demonstration instructions and a private block of antecedent titles and abstracts.
Output: <out_dir>/candidates/episodes.jsonl (transcripts with the private text, for audit) and
its manifest. Resumable like every run.

On a cluster, shard the targets (all K candidates of a target stay in one shard) and merge:
    python distill/teacher.py RECIPE --shard 3/8      # → <out_dir>/candidates/shards/3-of-8/
    python distill/teacher.py RECIPE --merge 8        # → <out_dir>/candidates/episodes.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hindsight.distill.config import DistillConfig
from hindsight.distill.guard import LeakGuard
from hindsight.distill.prompts import (
    DEMONSTRATION_INSTRUCTIONS,
    PRIVATE_RULES,
    corpus_idf,
    private_texts,
    teacher_messages,
)
from hindsight.log import get_logger
from hindsight.provenance import git_commit, software_versions
from hindsight.recipe import Recipe, recipe_command
from hindsight.runner import run_episodes
from hindsight.schema import CandidateId, Task
from hindsight.shards import merge_runs, merged_manifest, parse_shard, shard_folder, shard_of

logger = get_logger(__name__)


def make_teacher(cfg: DistillConfig, recipe: Recipe, idf: dict[str, float], seed_names: dict[str, str] | None = None):
    if cfg.teacher == "scripted":
        from hindsight.distill.scripted_teacher import ScriptedTeacher

        return ScriptedTeacher(
            idf,
            seed=cfg.seed,
            queries=cfg.scripted_searches,
            opening_at=cfg.scripted_opening_at,
            anchor_words=cfg.scripted_anchor_words,
            max_query_words=recipe.protocol.max_query_words,
            seed_names=seed_names,
        )
    from dataclasses import replace

    from hindsight.policy import make_policy

    policy_config = replace(
        recipe.policy,
        backend=cfg.teacher,
        model=cfg.model,
        api_base=cfg.api_base,
        temperature=cfg.temperature,
        seed=cfg.seed,
        concurrency=cfg.concurrency,
        adapter=None,
    )
    return make_policy(policy_config, recipe.protocol)


def shard_dir(cfg: DistillConfig, index: int, count: int) -> Path:
    return shard_folder(cfg.output.candidates, index, count)


def generate_candidates(recipe: Recipe, progress: bool = True, shard: tuple[int, int] | None = None) -> Path:
    """The privileged teacher's K candidate trajectories for every target of distill.splits; the
    folder holding them (resumable per candidate).

    Args:
        recipe: the loaded recipe (its distill section: teacher, candidates, splits, guard).
        progress: show a progress bar.
        shard: (I, N): only every N-th target from the I-th, all K candidates of a target together,
            into candidates/shards/I-of-N (`merge_shards` joins them).
    """
    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = recipe.data.load()
    chosen = {}
    for split in cfg.splits:
        in_split = [inst for inst in instances if inst.split == split]
        chosen.update((inst.id, inst) for inst in in_split[: cfg.max_targets or len(in_split)])
    chosen = dict(shard_of(list(chosen.items()), shard))
    idf = corpus_idf(corpus)
    tasks = {
        str(CandidateId(inst.id, k)): inst.task(sample=k) for inst in chosen.values() for k in range(cfg.candidates)
    }
    instance_of = {task.task_id: chosen[CandidateId.parse(record_id).instance_id] for record_id, task in tasks.items()}

    def first_messages(task: Task) -> list[dict]:
        return teacher_messages(
            task, instance_of[task.task_id], idf, cfg.private_max, cfg.abstract_chars, recipe.protocol.read_paper
        )

    backend = recipe.search.build(corpus)
    out = cfg.output.candidates if shard is None else shard_dir(cfg, *shard)
    manifest = {
        "shard": list(shard) if shard else None,
        "stage": "distill/teacher",
        "recipe": recipe.to_dict(),
        "data_source": recipe.data.source,
        "teacher_prompt": {"instructions": DEMONSTRATION_INSTRUCTIONS, "private_rules": PRIVATE_RULES},
        "targets": len(chosen),
        "candidates_per_target": cfg.candidates,
        "corpus_hash": corpus.hash,
        "software": software_versions(),
        "git_commit": git_commit(),
    }
    # the scripted teacher seeds each plan from its target's name, so a candidate does not depend on
    # which other targets (or shard) share the run
    seed_names = {task.task_id: instance_of[task.task_id].id for task in tasks.values()}
    teacher = make_teacher(cfg, recipe, idf, seed_names)
    if cfg.leak_retries:
        private = private_texts(chosen.values(), corpus, cfg, idf)
        teacher = LeakGuard(
            teacher,
            {task_id: private[inst.id] for task_id, inst in instance_of.items()},
            cfg.ngram,
            cfg.title_share,
            cfg.leak_retries,
            backend,
            cfg.retrieval_words,
        )
    final = run_episodes(
        teacher,
        tasks,
        backend,
        recipe.protocol,
        out,
        manifest,
        batch_size=cfg.batch_size,
        progress=progress,
        first_messages=first_messages,
    )
    if isinstance(teacher, LeakGuard):  # this invocation's turns: a resumed run counts only its own
        final["leak_guard"] = teacher.counts
        (out / "manifest.json").write_text(json.dumps(final, indent=2, default=str) + "\n")
        counts = teacher.counts
        logger.info(
            f"leak guard: {counts['refused']} replies refused and asked again over {counts['turns']} teacher turns; "
            f"{counts['sent_leaking']} turns still leaking after {cfg.leak_retries} retries went through (replay rejects them)"
        )
    return out


def merge_shards(recipe: Recipe, count: int) -> Path:
    """The shards' complete runs as one run in <out_dir>/candidates (hindsight.shards.merge_runs)."""
    out = DistillConfig.from_recipe(recipe).output.candidates
    manifests, _ = merge_runs(out, count)
    merged = merged_manifest(manifests, targets=sum(m["targets"] for m in manifests))
    (out / "manifest.json").write_text(json.dumps(merged, indent=2, default=str) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--shard", metavar="I/N", help="only every N-th target starting at I (an array task)")
        group.add_argument("--merge", type=int, metavar="N", help="merge the N shards' runs into candidates/")

    def work(recipe, args):
        out = (
            merge_shards(recipe, args.merge)
            if args.merge
            else generate_candidates(recipe, shard=parse_shard(args.shard) if args.shard else None)
        )
        return f"candidates: {out / 'episodes.jsonl'}\nnext: python distill/replay.py {args.recipe}"

    return recipe_command(__doc__, work, argv, options)


if __name__ == "__main__":
    sys.exit(main())
