"""Demonstrations: per train target, the best flag-free replay scoring at least a threshold
chosen on dev and frozen before any training.

    python distill/select_demos.py recipes/tiny.yaml

The threshold keeps the top `keep_quantile` of dev's flag-free candidates; it is written to
<out_dir>/selection.json the first time and reused after (frozen). The SFT set
(<out_dir>/sft.jsonl, `datasets`-loadable: `messages` with structured `tool_calls`, and `tools`)
holds deployment transcripts only. Every row is leak-audited first (hindsight/distill/audit.py); a row with
a finding is dropped and counted, and the run fails when more than `distill.max_rejected_share`
of the rows would be dropped (then nothing is written).
<out_dir>/candidates_manifest.jsonl records, per candidate: source instance, teacher, seed,
score, action count, flags, transcript hash and whether it was selected.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from hindsight.distill.audit import audit_recipe
from hindsight.distill.config import DistillConfig
from hindsight.distill.replay import Replay
from hindsight.protocol import tool_schemas
from hindsight.schema import CandidateId
from hindsight.stages import SFTRow


class SelectionError(RuntimeError):
    pass


def frozen_threshold(replays: list[Replay], cfg: DistillConfig, path: Path) -> dict:
    if path.exists():
        return {**json.loads(path.read_text()), "reused": True}
    dev = [r.ndcg10 for r in replays if r.split == "dev" and not r.flags]
    if not dev:
        raise SelectionError("no flag-free dev candidates to choose the threshold on (is distill.splits missing dev?)")
    threshold = float(np.quantile(dev, 1 - cfg.keep_quantile))
    frozen = {
        "threshold": threshold,
        "metric": "ndcg10",
        "keep_quantile": cfg.keep_quantile,
        "dev_candidates": len(dev),
        "frozen_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    path.write_text(json.dumps(frozen, indent=2) + "\n")
    return {**frozen, "reused": False}


def choose(replays: list[Replay], threshold: float) -> dict[str, Replay]:
    """Per train target, the highest-scoring flag-free replay at or above the threshold."""
    best: dict[str, Replay] = {}
    for replay in replays:
        if replay.split != "train" or replay.flags or replay.ndcg10 < threshold:
            continue
        current = best.get(replay.instance_id)
        key = (replay.ndcg10, -CandidateId.parse(replay.candidate_id).index)
        if current is None or key > (current.ndcg10, -CandidateId.parse(current.candidate_id).index):
            best[replay.instance_id] = replay
    return best


def select(recipe) -> dict:
    """Freeze the threshold on dev, keep the best flag-free replay per train target at or above
    it, audit the rows and write the SFT set; a summary of what was selected.

    Args:
        recipe: the loaded recipe; reads and writes <distill.out_dir> (replays.jsonl in,
            selection.json, sft.jsonl, audit.json and candidates_manifest.jsonl out).
    """
    cfg = DistillConfig.from_recipe(recipe)
    out = cfg.output
    replays = [Replay.from_dict(json.loads(line)) for line in open(out.replays, encoding="utf-8")]
    frozen = frozen_threshold(replays, cfg, out.selection)
    chosen = choose(replays, frozen["threshold"])
    if not chosen:
        flags = Counter(flag for r in replays if r.split == "train" for flag in r.flags)
        raise SelectionError(
            f"no train candidate passed replay at or above the threshold {frozen['threshold']:.3f}; nothing "
            f"written. Flags on train candidates: {dict(flags.most_common()) or 'none'} ({out.replays})"
        )
    tools = tool_schemas(recipe.protocol)
    order = sorted(chosen)
    rows = [SFTRow(chosen[iid].messages, tools).to_line() for iid in order]
    staging = out.sft_set.with_suffix(".jsonl.partial")
    staging.write_text("".join(rows), encoding="utf-8")
    _, audit = audit_recipe(recipe, staging)
    out.audit.write_text(
        json.dumps({"rows": audit.rows, "rejected": audit.rejected, "findings": audit.lines(out.sft_set)}, indent=2)
        + "\n"
    )
    if audit.rejected > cfg.max_rejected_share * max(audit.rows, 1):
        raise SelectionError(
            f"the leak audit rejected {audit.rejected} of {audit.rows} rows, more than "
            f"distill.max_rejected_share {cfg.max_rejected_share:.0%}; nothing written "
            f"({out.audit} lists them). First: {audit.lines(out.sft_set)[0]}"
        )
    rejected = {order[row - 1] for row in audit.findings}
    staging.write_text("".join(row for iid, row in zip(order, rows) if iid not in rejected), encoding="utf-8")
    staging.replace(out.sft_set)
    chosen = {iid: replay for iid, replay in chosen.items() if iid not in rejected}
    selected_ids = {r.candidate_id for r in chosen.values()}
    teacher = {"teacher": cfg.teacher, "model": cfg.model, "revision": recipe.policy.revision}
    with open(out.candidates_manifest, "w", encoding="utf-8") as handle:
        for r in replays:
            handle.write(
                json.dumps(
                    {
                        "source_instance": r.instance_id,
                        "candidate": r.candidate_id,
                        **teacher,
                        "seed": cfg.seed + CandidateId.parse(r.candidate_id).index,
                        "score": r.ndcg10,
                        "actions": r.actions,
                        "flags": r.flags,
                        "transcript_hash": r.transcript_hash,
                        "selected": r.candidate_id in selected_ids,
                    }
                )
                + "\n"
            )
    train_targets = len({r.instance_id for r in replays if r.split == "train"})
    scores = [r.ndcg10 for r in chosen.values()]
    return {
        "threshold": frozen,
        "train_targets": train_targets,
        "selected": len(chosen),
        "audit_rejected": len(rejected),
        "mean_selected_ndcg10": float(np.mean(scores)) if scores else None,
        "sft_set": str(out.sft_set),
    }


def main(argv: list[str] | None = None) -> int:
    from hindsight.recipe import recipe_command

    def work(recipe, args):
        summary = select(recipe)
        frozen = summary["threshold"]
        return (
            f"threshold nDCG@10 ≥ {frozen['threshold']:.3f} ({'reused, frozen' if frozen['reused'] else 'chosen on'} "
            f"{frozen['dev_candidates']} dev candidates, keeping the top {frozen['keep_quantile']:.0%})\n"
            f"selected {summary['selected']} of {summary['train_targets']} train targets, mean nDCG@10 "
            f"{summary['mean_selected_ndcg10']:.3f}; the leak audit dropped {summary['audit_rejected']} row(s)\n"
            f"SFT set: {summary['sft_set']}"
        )

    return recipe_command(__doc__, work, argv, errors=(SelectionError,))


if __name__ == "__main__":
    sys.exit(main())
