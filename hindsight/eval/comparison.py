"""Joining runs by target, checking they are comparable, and the paired differences."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from hindsight.errors import UserError
from hindsight.metrics import aggregate, score_episode
from hindsight.runs import COMPARED_FIELDS, Run
from hindsight.schema import Instance
from hindsight.stats import (
    percentile_interval,
    resampled_means,
    sign_flip_pvalues,
    win_tie_loss,
)

FUNNEL = (
    ("exposed_gain", "Exposed gain"),
    ("zero_exposure", "Zero-exposure rate"),
    ("selected_gain", "Selected gain"),
    ("gain_kept", "Gain kept"),
    ("rank_quality", "Rank quality"),
    ("ndcg10", "Final nDCG@10"),
)
END_TO_END = (
    ("ndcg10", "nDCG@10"),
    ("recall10", "Recall@10"),
    ("mrr", "MRR"),
    ("anyhit10", "AnyHit@10"),
    ("hits3", "≥3 hits"),
    ("hits5", "≥5 hits"),
    ("calls", "Mean calls"),
)
PER_TARGET = ("ndcg10", "recall10", "mrr", "anyhit10", "exposed_gain", "selected_gain", "zero_exposure", "calls")
RATIOS = {"gain_kept": ("ndcg10", "exposed_gain"), "rank_quality": ("ndcg10", "selected_gain")}


class ComparisonError(UserError):
    pass


def check_comparable(runs: list[Run]) -> None:
    """Refuse runs whose protocol, scorer or instance set differ, naming the field."""
    for field in COMPARED_FIELDS:
        values = {run.name: run.field(field) for run in runs}
        missing = [name for name, value in values.items() if value in (None, "")]
        if missing:
            raise ComparisonError(f"manifest of run(s) {', '.join(missing)} lacks '{field}'")
        if len(set(values.values())) > 1:
            shown = ", ".join(f"{name}={str(value)[:16]}" for name, value in values.items())
            raise ComparisonError(f"runs differ in '{field}' ({shown}): they were not run under one protocol")


def run_counts(run: Run, instances: list[Instance]) -> dict:
    wanted = {instance.id for instance in instances}
    extra = sorted(set(run.episodes) - wanted)
    if extra:
        raise ComparisonError(
            f"run {run.name} has {len(extra)} episode(s) for targets outside its instance set, e.g. {extra[:3]}"
        )
    statuses = [run.episodes[i].status for i in wanted if i in run.episodes]
    return {
        "expected": len(wanted),
        "attempted": len(statuses),
        "completed": sum(s in ("submitted", "budget_exhausted") for s in statuses),
        "submitted": sum(s == "submitted" for s in statuses),
        "scored": len(wanted),
    }


def score_run(run: Run, instances: list[Instance]) -> list[dict]:
    """One score row per instance, in instance order; a missing episode scores as a failure."""
    return [score_episode(run.episodes.get(instance.id), instance) for instance in instances]


def _interval(samples: np.ndarray, point: float | None) -> dict:
    finite = samples[np.isfinite(samples)]
    if point is None or len(finite) == 0:
        return {"diff": None, "low": None, "high": None}
    low, high = percentile_interval(finite, 0.95)
    return {"diff": point, "low": low, "high": high}


def _columns(scores: list[dict]) -> np.ndarray:
    """Per-target columns: the PER_TARGET metrics, then for 3 and 5 hits the indicator
    (zero where ineligible) and the eligibility, so multi-hit rates are ratios of means."""
    rows = []
    for s in scores:
        row = [float(s[m]) for m in PER_TARGET]
        for need in (3, 5):
            eligible = float(s["n_labels"] >= need)
            row += [eligible * (s["hits"] >= need), eligible]
        rows.append(row)
    return np.array(rows)


def paired_differences(a: list[dict], b: list[dict], n: int = 10_000, seed: int = 0) -> dict:
    """B - A for every reported metric: mean difference, paired bootstrap 95% interval,
    sign-flip p-value (not for the ratios gain kept and rank quality) and win/tie/loss."""
    cols_a, cols_b = _columns(a), _columns(b)
    width = cols_a.shape[1]
    # One set of resamples serves every metric and both runs: targets are drawn jointly.
    means = resampled_means(np.hstack([cols_a, cols_b]), n, seed)
    boot_a, boot_b = means[:, :width], means[:, width:]
    p_values = sign_flip_pvalues(cols_b - cols_a, n, seed)
    index = {metric: j for j, metric in enumerate(PER_TARGET)}
    out = {}
    for metric, j in index.items():
        point = float(cols_b[:, j].mean() - cols_a[:, j].mean())
        out[metric] = {
            **_interval(boot_b[:, j] - boot_a[:, j], point),
            "p_value": float(p_values[j]),
            **win_tie_loss(cols_a[:, j], cols_b[:, j]),
        }
    ratios = {name: (index[num], index[den]) for name, (num, den) in RATIOS.items()}
    for k, need in enumerate((3, 5)):
        hit = len(PER_TARGET) + 2 * k
        ratios[f"hits{need}"] = (hit, hit + 1)
    for name, (num, den) in ratios.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            samples = boot_b[:, num] / boot_b[:, den] - boot_a[:, num] / boot_a[:, den]
        mean_a, mean_b = cols_a.mean(axis=0), cols_b.mean(axis=0)
        point = (
            float(mean_b[num] / mean_b[den] - mean_a[num] / mean_a[den])
            if mean_a[den] > 0 and mean_b[den] > 0
            else None
        )
        out[name] = {**_interval(samples, point), "p_value": None}
        if name.startswith("hits"):
            eligible = cols_a[:, den] > 0
            out[name].update(
                p_value=float(p_values[num]),
                eligible=int(eligible.sum()),
                **win_tie_loss(cols_a[eligible, num], cols_b[eligible, num]),
            )
    return out


OVERLAP = "overlap"
BOTH_SUBMITTED = "both-submitted"
SLICE_FUNNEL = ("exposed_gain", "selected_gain", "ndcg10")


def demonstrated_ids(sft_path) -> set[str]:
    """Every paper id a demonstration of the SFT set shows: returned by its searches or submitted."""
    from hindsight.jsonl import read_jsonl
    from hindsight.leaks import call_arguments, paper_ids, papers_shown

    papers: list[dict] = []
    for line_no, row, error in read_jsonl(sft_path):
        if error or not isinstance(row, dict):
            raise ComparisonError(f"{sft_path}:{line_no}: {error or 'not an SFT row'}")
        for message in row.get("messages", []):
            if message.get("role") == "tool":
                papers += papers_shown(message.get("content") or "")
            for call in message.get("tool_calls") or []:
                arguments = call_arguments(call["function"]["arguments"]) or {}
                papers += [paper for paper in arguments.get("papers", []) if isinstance(paper, dict)]
    return paper_ids(papers)


def slice_value(instance: Instance, scores: dict[str, dict], field: str, demonstrated: set[str] | None = None) -> str:
    """The group `instance` falls in; `scores` maps each run's name to its score row for the
    instance, the baseline first."""
    score = next(iter(scores.values()))
    if field == BOTH_SUBMITTED:
        # targets where no arm's answer was lost to its format: what is left is search and choice
        submitted = all(row["status"] == "submitted" for row in scores.values())
        return "every run submitted" if submitted else "not every run submitted"
    if field == OVERLAP:
        if demonstrated is None:
            raise ComparisonError("the overlap slice needs the SFT set the student was trained on (--training-set)")
        shown = sum(label.id in demonstrated for label in instance.labels)
        return "antecedent in training demos" if shown else "no antecedent in training demos"
    if field == "flagged":
        return "flagged" if instance.audit.get("flagged") else "clean"
    if field == "labels":
        return str(score["n_labels"])
    value: object = instance.to_dict()
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "(none)" if value is None else str(value)


def _natural(item: tuple[str, list]) -> tuple:
    value = item[0]
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def compare_runs(
    runs: list[Run],
    instances: list[Instance],
    n: int = 10_000,
    seed: int = 0,
    slices: tuple[str, ...] = (),
    demonstrated: set[str] | None = None,
    every_pair: bool = False,
) -> dict:
    """`demonstrated`: the paper ids of the SFT set, for the training-antecedent overlap slice.
    Each later run is reported against the first; with `every_pair`, also against every run
    before it (with base, format control and hindsight student: sft - format as well)."""
    if len(runs) < 1:
        raise ComparisonError("name at least one run")
    check_comparable(runs)
    scores = {run.name: score_run(run, instances) for run in runs}
    report = {
        "runs": {
            run.name: {
                "counts": run_counts(run, instances),
                "summary": aggregate(scores[run.name]),
                "manifest": run.manifest,
            }
            for run in runs
        },
        "differences": {},
        "slices": {},
        "resamples": n,
        "seed": seed,
        "per_target": scores,
    }
    pairs = run_pairs([run.name for run in runs], every_pair)
    for earlier, later in pairs:
        report["differences"][f"{later} - {earlier}"] = paired_differences(scores[earlier], scores[later], n, seed)
    for field in slices:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, instance in enumerate(instances):
            groups[slice_value(instance, {name: scores[name][i] for name in scores}, field, demonstrated)].append(i)
        report["slices"][field] = {
            value: _slice_group(rows, scores, pairs, n, seed) for value, rows in sorted(groups.items(), key=_natural)
        }
    return report


def run_pairs(names: list[str], every_pair: bool) -> list[tuple[str, str]]:
    """(earlier, later) for each difference reported, later - earlier: each run against the first,
    and with `every_pair` against each run before it too."""
    if every_pair:
        return [(names[i], names[j]) for j in range(1, len(names)) for i in range(j)]
    return [(names[0], name) for name in names[1:]]


def _slice_group(
    rows: list[int], scores: dict[str, list[dict]], pairs: list[tuple[str, str]], n: int, seed: int
) -> dict:
    """One slice group: its size, each run's funnel means, and each reported difference with its
    paired interval (nDCG@10 under `differences`, the funnel under `funnel_differences`)."""
    means = {name: aggregate([scores[name][i] for i in rows]) for name in scores}
    differences = {
        f"{later} - {earlier}": paired_differences(
            [scores[earlier][i] for i in rows], [scores[later][i] for i in rows], n, seed
        )
        for earlier, later in pairs
    }
    return {
        "targets": len(rows),
        "ndcg10": {name: means[name]["ndcg10"] for name in scores},
        "funnel": {name: {key: means[name][key] for key in SLICE_FUNNEL} for name in scores},
        "differences": {name: d["ndcg10"] for name, d in differences.items()},
        "funnel_differences": {name: {key: d[key] for key in SLICE_FUNNEL} for name, d in differences.items()},
    }
