"""TREC qrels and run files, so anyone can recheck our numbers with trec_eval.

Relevance in the qrels is the label gain times two (gains are multiples of 0.5; trec_eval wants
integers; nDCG is unchanged by the scale). Run files rank each target's canonical submission;
a malformed id keeps its rank as `malformed-<position>`.
    trec_eval -m ndcg_cut.10 -m recall.10 -m recip_rank qrels.txt <run>.run
"""

from __future__ import annotations

from pathlib import Path

from hindsight.metrics import MALFORMED, canonical_submission, eligible_gains
from hindsight.runs import Run
from hindsight.schema import Instance


def write_qrels(instances: list[Instance], path: Path) -> Path:
    with open(path, "w") as handle:
        for instance in instances:
            for paper_id, gain in eligible_gains(instance).items():
                handle.write(f"{instance.id} 0 {paper_id} {round(gain * 2)}\n")
    return path


def write_run_file(run: Run, instances: list[Instance], path: Path) -> Path:
    with open(path, "w") as handle:
        for instance in instances:
            episode = run.episodes.get(instance.id)
            if episode is None or episode.status != "submitted":
                continue
            ranked = canonical_submission([p.id for p in episode.submission])
            for rank, paper_id in enumerate(ranked, start=1):
                doc = paper_id.replace(MALFORMED, "malformed-").rstrip(">")
                handle.write(f"{instance.id} Q0 {doc} {rank} {len(ranked) - rank + 1} {run.name}\n")
    return path


def write_trec(runs: list[Run], instances: list[Instance], out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        write_qrels(instances, out_dir / "qrels.txt"),
        *(write_run_file(run, instances, out_dir / f"{run.name}.run") for run in runs),
    ]
