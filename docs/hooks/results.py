"""Result tables in the README and the docs, generated from committed result files.

A page holds a marked block; the comment names each row's label and file, the rows below it are
generated, and `make docs` (and tests/test_docs.py) fail when what the files give differs from what
the page shows:

    <!-- results: funnel
    seed 0 = benchmarks/results/demo/seed0/comparison.json
    seed 0, RL = benchmarks/results/demo/seed0/comparison-rl.json#rl - sft
    -->
    | ...generated rows... |
    <!-- /results -->

Kinds: `funnel` and `outcomes` (rows of paired comparisons, below) and `markdown` (`table =
benchmarks/results/NAME.json`: the markdown a benchmark script wrote into its result file).

A `funnel` file is either a comparison report (`eval/compare.py --json`; `#A - B` picks one of its
differences, the only one when it has one) or a paired report (`scripts/paired_records.py
--json`). Each row: the first arm's and the second arm's value and their paired difference with
its 95% bootstrap interval, for exposed gain, selected gain and final nDCG@10.

    python docs/hooks/results.py     # regenerate every block in place
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/**/*.md"]
METRICS = [("exposed_gain", "exposed gain"), ("selected_gain", "selected gain"), ("ndcg10", "final nDCG@10")]
BLOCK = re.compile(r"(<!-- results: (?P<kind>[\w-]+)\n(?P<spec>.*?)-->\n)(?P<body>.*?)(<!-- /results -->)", re.S)


class ResultsError(ValueError):
    pass


def load_report(root: Path, source: str) -> tuple[dict, str]:
    """(the JSON of `path`, what follows its '#') for a spec's `path[#A - B]`."""
    path, _, wanted = source.partition("#")
    file = root / path.strip()
    if not file.exists():
        raise ResultsError(f"{path}: no such result file")
    return json.loads(file.read_text()), wanted.strip()


def pick_difference(report: dict, source: str, wanted: str) -> tuple[str, str, str]:
    """(difference name, A, B) of a comparison report: the one named after '#', or its only one."""
    differences = report["differences"]
    name = wanted or (next(iter(differences)) if len(differences) == 1 else "")
    if name not in differences:
        raise ResultsError(f"{source}: name one of its differences after '#': {', '.join(differences)}")
    later, earlier = name.split(" - ")
    return name, later, earlier


def read_pair(root: Path, source: str) -> dict:
    """{metric: (first value, second value, difference)} and the arms' names, from one file."""
    report, wanted = load_report(root, source)
    if "differences" in report:  # eval/compare.py --json
        name, later, earlier = pick_difference(report, source, wanted)
        runs = report["runs"]
        values = {
            key: (runs[earlier]["summary"][key], runs[later]["summary"][key], report["differences"][name][key])
            for key, _ in METRICS
        }
        return {"earlier": earlier, "later": later, "values": values}
    if "all" in report:  # scripts/paired_records.py --json
        values = {
            key: (report["all"][key]["earlier"], report["all"][key]["later"], report["all"][key]) for key, _ in METRICS
        }
        arm = lambda ref: ref.rpartition("#")[2]  # noqa: E731
        return {"earlier": arm(report["earlier"]), "later": arm(report["later"]), "values": values}
    raise ResultsError(f"{source.partition('#')[0]}: neither a comparison report nor a paired report")


def signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")  # the typographic minus, as the pages write it


def cell(earlier: float, later: float, difference: dict) -> str:
    interval = f"[{signed(difference['low'])}, {signed(difference['high'])}]"
    return f"{earlier:.3f} → {later:.3f}, {signed(difference['diff'])} {interval}"


def funnel_rows(root: Path, spec: list[tuple[str, str]]) -> str:
    header = ["run", "A − B"] + [f"{label}: B → A, A − B [95% CI]" for _, label in METRICS]
    lines = ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * len(METRICS)]
    for label, source in spec:
        pair = read_pair(root, source)
        cells = [cell(*pair["values"][key]) for key, _ in METRICS]
        lines.append(f"| {label} | {pair['later']} − {pair['earlier']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def outcome_rows(root: Path, spec: list[tuple[str, str]]) -> str:
    """Per row: how many targets each arm submitted on, A's hits and how many its own searches
    returned, and A's per-target wins, ties and losses against B on final nDCG@10."""
    lines = [
        "| run | A − B | submitted, B / A | A's hits returned by its own searches | final nDCG@10 per target, W / T / L |",
        "|---|---|---:|---:|---:|",
    ]
    for label, source in spec:
        report, wanted = load_report(root, source)
        if "differences" not in report:
            raise ResultsError(
                f"{source.partition('#')[0]}: the outcomes table needs a comparison report (eval/compare.py --json)"
            )
        name, later, earlier = pick_difference(report, source, wanted)
        runs, final = report["runs"], report["differences"][name]["ndcg10"]
        sources = runs[later]["summary"]["sources"]
        submitted = f"{runs[earlier]['counts']['submitted']} / {runs[later]['counts']['submitted']}"
        lines.append(
            f"| {label} | {later} − {earlier} | {submitted} | {sources['hits_surfaced']} of {sources['hits']} | "
            f"{final['win']} / {final['tie']} / {final['loss']} |"
        )
    return "\n".join(lines) + "\n"


def benchmark_markdown(root: Path, spec: list[tuple[str, str]]) -> str:
    """The `markdown` a benchmark script wrote into its result file (benchmarks/*.py --json),
    as it wrote it; `key` picks another field holding markdown."""
    parts = []
    for key, source in spec:
        report, _ = load_report(root, source)
        field = "markdown" if key in ("table", "") else key
        if not isinstance(report.get(field), str):
            raise ResultsError(f"{source}: no {field!r} field holding markdown (benchmarks/*.py --json write one)")
        parts.append(report[field].strip() + "\n")
    return "\n".join(parts)


KINDS = {"funnel": funnel_rows, "outcomes": outcome_rows, "markdown": benchmark_markdown}


def parse_spec(text: str, where: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.strip().splitlines():
        label, sep, source = line.partition(" = ")
        if not sep:
            raise ResultsError(f"{where}: '{line}' is not 'label = path[#A - B]'")
        rows.append((label.strip(), source.strip()))
    return rows


def render(text: str, root: Path = ROOT, where: str = "") -> str:
    """The page with every results block regenerated from its files."""

    def replace(match: re.Match) -> str:
        kind = match["kind"]
        if kind not in KINDS:
            raise ResultsError(f"{where}: unknown results kind {kind!r}; known: {', '.join(KINDS)}")
        body = KINDS[kind](root, parse_spec(match["spec"], where))
        return match.group(1) + body + match.group(5)

    return BLOCK.sub(replace, text)


def pages(root: Path = ROOT) -> list[Path]:
    found = []
    for pattern in PAGES:
        found += sorted(root.glob(pattern))
    return [page for page in found if "<!-- results:" in page.read_text()]


def stale_pages(root: Path = ROOT) -> list[str]:
    """The pages whose blocks differ from what their files give now."""
    return [
        str(page.relative_to(root))
        for page in pages(root)
        if render(page.read_text(), root, str(page.relative_to(root))) != page.read_text()
    ]


def on_pre_build(config, **_):  # mkdocs hook
    stale = stale_pages()
    if stale:
        raise SystemExit(
            f"result tables differ from their files in {', '.join(stale)}: run python docs/hooks/results.py"
        )


def main() -> int:
    for page in pages():
        text = page.read_text()
        new = render(text, ROOT, str(page.relative_to(ROOT)))
        if new != text:
            page.write_text(new)
            print(f"regenerated {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
