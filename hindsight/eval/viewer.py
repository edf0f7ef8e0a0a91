"""A static site for reading runs target by target (`--html DIR` on eval/report.py and eval/compare.py).

Open DIR/index.html from disk: no server, no network. The index lists every target with each
run's numbers, pages through them 100 at a time, sorts and filters; DIR/target.html#N shows
target N with the runs side by side. Data travels as JavaScript files (`data/index.js`,
`data/targets/N.js`) because a page opened from disk may load scripts but not fetch JSON; each
target's file is loaded only when its page is opened, so the index of 10,000 targets stays small.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hindsight.eval.comparison import OVERLAP, slice_value
from hindsight.ids import normalize_arxiv_id
from hindsight.leaks import papers_shown
from hindsight.metrics import eligible_gains
from hindsight.runs import Run
from hindsight.schema import Episode, Instance

ASSETS = Path(__file__).parent / "viewer_assets"
INDEX_METRICS = ("ndcg10", "exposed_gain", "selected_gain", "calls", "status", "zero_exposure")


def outcome(base: float, other: float) -> str:
    return "win" if other > base + 1e-12 else "loss" if other < base - 1e-12 else "tie"


def _js(name: str, value) -> str:
    # "</" would end an inline script; in a script file it is harmless, but keep the data inert anyway
    return f"window.{name} = {json.dumps(value, ensure_ascii=False).replace('</', '<' + chr(92) + '/')};\n"


def papers_seen(episode: Episode) -> dict[str, dict]:
    """id -> the fields a tool answer of this episode showed (title, date, ...)."""
    seen: dict[str, dict] = {}
    for message in episode.messages or []:
        if message.get("role") == "tool":
            for paper in papers_shown(message.get("content") or ""):
                pid = normalize_arxiv_id(paper.get("id"))
                if pid:
                    seen.setdefault(pid, {k: v for k, v in paper.items() if k in ("title", "date")})
    return seen


def episode_view(episode: Episode | None, score: dict, tiers: dict[str, str]) -> dict:
    """One run's side of a target page: its steps with what each returned, its submission, and
    where every antecedent was first exposed."""
    view = {key: score[key] for key in ("status", "ndcg10", "exposed_gain", "selected_gain", "calls", "hits")}
    if episode is None:
        return {
            **view,
            "error": "no episode recorded for this target",
            "steps": [],
            "submission": [],
            "first_exposed": {},
        }
    seen = papers_seen(episode)
    steps, first_exposed = [], {}
    for number, step in enumerate(episode.steps, start=1):
        returned = []
        for raw_id in step.returned_ids:
            pid = normalize_arxiv_id(raw_id) or raw_id
            if pid in tiers:
                first_exposed.setdefault(pid, number)
            returned.append({"id": pid, **seen.get(pid, {}), "tier": tiers.get(pid)})
        steps.append(
            {
                "tool": step.tool,
                "args": step.args,
                "error": step.error,
                "raw": step.raw if step.tool not in ("search_papers", "submit_answer", "read_paper") else None,
                "returned": returned,
            }
        )
    submission = []
    for rank, paper in enumerate(episode.submission, start=1):
        pid = normalize_arxiv_id(paper.id) or paper.id
        found = next(
            (n for n, step in enumerate(steps, start=1) if any(r["id"] == pid for r in step["returned"])), None
        )
        submission.append(
            {
                "rank": rank,
                "id": pid,
                "title": seen.get(pid, {}).get("title"),
                "rationale": paper.rationale,
                "tier": tiers.get(pid),
                "surfaced_at": found,
            }
        )
    return {**view, "error": episode.error, "steps": steps, "submission": submission, "first_exposed": first_exposed}


def target_view(instance: Instance, runs: list[Run], scores: dict[str, dict]) -> dict:
    gains = eligible_gains(instance)
    tiers = {label.id: label.tier for label in instance.labels if label.id in gains}
    return {
        "id": instance.id,
        "split": instance.split,
        "brief": instance.brief,
        "cutoff": instance.cutoff.isoformat(),
        # what only the evaluator knows: the agent saw none of it
        "evaluator": {
            "target": instance.target.to_dict(),
            "labels": [
                {"id": label.id, "tier": label.tier, "role": label.role, "gain": gains[label.id], "title": label.title}
                for label in instance.labels
                if label.id in gains
            ],
        },
        "runs": {run.name: episode_view(run.episodes.get(instance.id), scores[run.name], tiers) for run in runs},
    }


def index_row(
    number: int,
    instance: Instance,
    runs: list[Run],
    scores: dict[str, dict],
    slices: tuple[str, ...],
    demonstrated: set[str] | None,
) -> dict:
    row = {
        "n": number,
        "id": instance.id,
        "brief": instance.brief[:160],
        "labels": scores[runs[0].name]["n_labels"],
        "runs": {run.name: {key: scores[run.name][key] for key in INDEX_METRICS} for run in runs},
        "slices": {field: slice_value(instance, scores, field, demonstrated) for field in slices},
    }
    if len(runs) > 1:
        row["outcome"] = outcome(scores[runs[0].name]["ndcg10"], scores[runs[1].name]["ndcg10"])
    return row


def write_viewer(
    report: dict,
    runs: list[Run],
    instances: list[Instance],
    out_dir: str | Path,
    plots: list[Path] | None = None,
    demonstrated: set[str] | None = None,
) -> Path:
    """Write the site for `report` (compare_runs' output, per-target scores included); returns index.html."""
    out = Path(out_dir)
    targets_dir = out / "data" / "targets"
    targets_dir.mkdir(parents=True, exist_ok=True)
    for stale in targets_dir.glob("*.js"):  # a previous, larger comparison written here
        stale.unlink()
    for asset in ASSETS.iterdir():
        shutil.copyfile(asset, out / asset.name)
    slices = tuple(field for field in report.get("slices", {}) if field != OVERLAP or demonstrated is not None)
    rows = []
    for number, instance in enumerate(instances):
        scores = {run.name: report["per_target"][run.name][number] for run in runs}
        rows.append(index_row(number, instance, runs, scores, slices, demonstrated))
        (targets_dir / f"{number}.js").write_text(
            _js("HINDSIGHT_TARGET_DATA", target_view(instance, runs, scores)), encoding="utf-8"
        )
    plot_links = []
    for plot in plots or []:
        if plot.suffix == ".png":
            (out / "plots").mkdir(exist_ok=True)
            shutil.copyfile(plot, out / "plots" / plot.name)
            plot_links.append(f"plots/{plot.name}")
    summary = {
        name: {key: run["summary"][key] for key in ("targets", "ndcg10", "exposed_gain", "selected_gain")}
        for name, run in report["runs"].items()
    }
    index = {
        "runs": [run.name for run in runs],
        "comparison": f"{runs[1].name} - {runs[0].name}" if len(runs) > 1 else None,
        "slices": list(slices),
        "plots": plot_links,
        "summary": summary,
        "rows": rows,
    }
    (out / "data" / "index.js").write_text(_js("HINDSIGHT_INDEX", index), encoding="utf-8")
    return out / "index.html"
