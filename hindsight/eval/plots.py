"""The comparison's three figures, as PNG files (matplotlib's Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hindsight.metrics import PROGRESS_POINTS  # noqa: E402


def score_distribution(report: dict, path: Path) -> Path:
    """Per-target nDCG@10 of each run: the share at exactly zero as its own bar, the rest binned."""
    names = list(report["runs"])
    edges = np.linspace(0, 1, 11)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        values = np.array([s["ndcg10"] for s in report["per_target"][name]])
        zero = (values == 0).mean() * 100
        counts, _ = np.histogram(values[values > 0], bins=edges)
        shares = counts / len(values) * 100
        ax.bar(
            -1 + j * width,
            zero,
            width,
            color=f"C{j}",
            hatch="//",
            edgecolor="black",
            label=f"{name} (at zero: {zero:.0f}%)",
        )
        ax.bar(np.arange(10) + j * width, shares, width, color=f"C{j}")
    ax.set_xticks([-1 + 0.4 - width / 2] + list(np.arange(10) + 0.4 - width / 2))
    ax.set_xticklabels(["0"] + [f"({edges[i]:.1f},{edges[i + 1]:.1f}]" for i in range(10)], rotation=45, ha="right")
    ax.set_ylabel("targets (%)")
    ax.set_xlabel("per-target nDCG@10")
    ax.set_title("Per-target nDCG@10 (hatched: mass at exactly zero)")
    ax.legend()
    return _save(fig, path)


def exposure_curves(report: dict, path: Path) -> Path:
    """Mean oracle gain of what was exposed so far, against normalised trajectory progress."""
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for j, (name, run) in enumerate(report["runs"].items()):
        ax.plot(PROGRESS_POINTS, run["summary"]["prefix_curve"], marker="o", color=f"C{j}", label=name)
    ax.set_xlabel("normalised progress through the trajectory")
    ax.set_ylabel("exposed gain so far (mean φ)")
    ax.set_ylim(bottom=0)
    ax.set_title("Exposure progress")
    ax.legend()
    return _save(fig, path)


def hit_histogram(report: dict, path: Path) -> Path:
    """How many graded antecedents each target's top 10 recovered."""
    names = list(report["runs"])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        hits = np.array([s["hits"] for s in report["per_target"][name]])
        counts = np.bincount(hits, minlength=11)[:11] / len(hits) * 100
        ax.bar(np.arange(11) + j * width, counts, width, color=f"C{j}", label=name)
    ax.set_xticks(np.arange(11) + 0.4 - width / 2)
    ax.set_xticklabels([str(i) for i in range(11)])
    ax.set_xlabel("graded antecedents recovered in the top 10")
    ax.set_ylabel("targets (%)")
    ax.set_title("Recovered antecedents per target")
    ax.legend()
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_plots(report: dict, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    return [
        score_distribution(report, out_dir / "ndcg_distribution.png"),
        exposure_curves(report, out_dir / "exposure_progress.png"),
        hit_histogram(report, out_dir / "hits_histogram.png"),
    ]
