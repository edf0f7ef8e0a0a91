"""Plain-text and Markdown tables of a comparison report (see hindsight.eval.comparison.compare_runs)."""

from __future__ import annotations

from hindsight.eval.comparison import END_TO_END, FUNNEL

PERCENT = {"zero_exposure", "anyhit10", "hits3", "hits5"}


def _value(metric: str, value) -> str:
    if value is None:
        return "–"
    if metric == "calls":
        return f"{value:.1f}"
    return f"{100 * value:.1f}%" if metric in PERCENT else f"{value:.3f}"


def _difference(metric: str, diff: dict) -> str:
    if diff.get("diff") is None:
        return "–"
    scale = 100 if metric in PERCENT else 1  # percentage points for rates
    digits = 1 if metric in PERCENT or metric == "calls" else 3
    unit = " pp" if metric in PERCENT else ""
    text = (
        f"{scale * diff['diff']:+.{digits}f}{unit} "
        f"[{scale * diff['low']:+.{digits}f}, {scale * diff['high']:+.{digits}f}]"
    )
    if diff.get("p_value") is not None:
        text += f" p={diff['p_value']:.3g}"
    return text


def _grid(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda row: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *map(fmt, rows)])


def counts_table(report: dict, markdown: bool = False) -> str:
    keys = ("expected", "attempted", "completed", "submitted", "scored")
    rows = [[name, *(str(run["counts"][k]) for k in keys)] for name, run in report["runs"].items()]
    return _grid(["run", *keys], rows, markdown)


def metric_table(report: dict, metrics, markdown: bool = False) -> str:
    names = list(report["runs"])
    diffs = report["differences"]
    header = ["metric", *names, *(f"{d} (95% CI)" for d in diffs)]
    rows = []
    for metric, label in metrics:
        if metric in ("hits3", "hits5"):
            eligible = report["runs"][names[0]]["summary"][f"{metric}_eligible"]
            label = f"{label} (n={eligible})"
        rows.append(
            [
                label,
                *(_value(metric, report["runs"][n]["summary"][metric]) for n in names),
                *(_difference(metric, d[metric]) for d in diffs.values()),
            ]
        )
    return _grid(header, rows, markdown)


def sources_table(report: dict, markdown: bool = False) -> str:
    """Per run: how many submitted ids and hits a search of the episode had returned, and how
    many targets had an antecedent of each tier surfaced."""
    header = [
        "run",
        "submitted ids",
        "of them surfaced",
        "hits",
        "hits surfaced",
        "distinct ids",
        "targets with T3 / T2 / T1 surfaced",
    ]
    rows = []
    for name, run in report["runs"].items():
        src = run["summary"]["sources"]
        tiers = " / ".join(str(src["targets_exposed_to"][t]) for t in ("T3", "T2", "T1"))
        rows.append(
            [
                name,
                str(src["submitted"]),
                str(src["submitted_surfaced"]),
                str(src["hits"]),
                str(src["hits_surfaced"]),
                str(src["distinct_submitted"]),
                tiers,
            ]
        )
    return _grid(header, rows, markdown)


def win_tie_loss_line(report: dict) -> str:
    parts = [
        f"{name}: {d['ndcg10']['win']} win / {d['ndcg10']['tie']} tie / {d['ndcg10']['loss']} loss"
        for name, d in report["differences"].items()
    ]
    return "Per-target nDCG@10 " + "; ".join(parts) if parts else ""


SLICE_LABELS = {"exposed_gain": "exposed", "selected_gain": "selected", "ndcg10": "final"}


def slice_tables(report: dict, markdown: bool = False) -> str:
    out = []
    names = list(report["runs"])
    for field, groups in report["slices"].items():
        header = [
            field,
            "targets",
            *(f"nDCG@10 {n}" for n in names),
            *(f"{label}, {d} (95% CI)" for d in report["differences"] for label in SLICE_LABELS.values()),
        ]
        rows = [
            [
                value,
                str(g["targets"]),
                *(_value("ndcg10", g["ndcg10"][n]) for n in names),
                *(
                    _difference(key, differences[key])
                    for differences in g["funnel_differences"].values()
                    for key in SLICE_LABELS
                ),
            ]
            for value, g in groups.items()
        ]
        out.append(_grid(header, rows, markdown))
    return "\n\n".join(out)


def render(report: dict, markdown: bool = False) -> str:
    heading = (lambda t: f"## {t}") if markdown else (lambda t: f"{t}\n{'=' * len(t)}")
    resamples = f"paired bootstrap over targets, {report['resamples']:,} resamples, seed {report['seed']}"
    sections = [
        heading("Counts"),
        counts_table(report, markdown),
        heading("Funnel: exposure → selection → ranking"),
        metric_table(report, FUNNEL, markdown),
        heading("End to end"),
        metric_table(report, END_TO_END, markdown),
    ]
    if report["differences"]:
        sections += [f"Intervals: {resamples}; p: paired sign-flip test. " + win_tie_loss_line(report)]
    sections += [
        heading("Where submissions came from"),
        sources_table(report, markdown),
        "Submitted ids and hits count each target's top ten once; surfaced: a search of the "
        "same episode had returned it.",
    ]
    if report["slices"]:
        sections += [heading("Slices"), slice_tables(report, markdown)]
    return "\n\n".join(sections) + "\n"
