"""DeepScholar-Bench as builder input: its targets, their resolved bibliographies with the
sentence of the related-work section that cites each one, and the cited papers (a closed set:
name an open snapshot as the build's corpus and these as its `cited_papers`).

    python -m hindsight.builder from-deepscholar ../shared/data/deepscholar-bench --out inputs/
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hindsight.data.deepscholar import (
    CITATION_COLUMNS,
    CITE_COMMAND,
    PAPER_COLUMNS,
    RELATED_COLUMNS,
    id_month,
    read_csv,
)
from hindsight.ids import normalize_arxiv_id
from hindsight.schema import parse_date


def citation_contexts(latex: str) -> dict[str, str]:
    """cite key -> the first sentence of the LaTeX that cites it, cite commands removed."""
    contexts: dict[str, str] = {}
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z\\])", " ".join(latex.split())):
        keys = [key.strip() for match in CITE_COMMAND.finditer(sentence) for key in match.group(1).split(",")]
        text = " ".join(CITE_COMMAND.sub("", sentence).split())
        for key in keys:
            contexts.setdefault(key, text)
    return contexts


def write_inputs(src: Path, out: Path) -> dict[str, Path]:
    """targets.jsonl, bibliographies.jsonl and cited.jsonl under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    papers = read_csv(src / "papers.csv", PAPER_COLUMNS)
    citations = read_csv(src / "citations.csv", CITATION_COLUMNS)
    related = {
        normalize_arxiv_id(row["arxiv_id"]): citation_contexts(row["raw_latex_related_works"])
        for _, row in read_csv(src / "related_works_combined.csv", RELATED_COLUMNS)
    }
    targets = [
        {
            "id": normalize_arxiv_id(row["arxiv_id"]),
            "title": " ".join(row["title"].split()),
            "abstract": " ".join(row["abstract"].split()),
            "date": parse_date(row["published_date"], f"{src / 'papers.csv'}:{line}").isoformat(),
        }
        for line, row in papers
    ]
    references: dict[str, list[dict]] = {}
    cited: dict[str, dict] = {}
    for _, row in citations:
        paper_id, parent = (
            normalize_arxiv_id(row["cited_paper_arxiv_link"]),
            normalize_arxiv_id(row["parent_paper_arxiv_id"]),
        )
        if paper_id is None or parent is None:
            continue
        context = related.get(parent, {}).get(row["citation_shorthand"].strip(), "")
        references.setdefault(parent, []).append({"id": paper_id, "context": context})
        cited.setdefault(
            paper_id,
            {
                "id": paper_id,
                "title": " ".join(row["cited_paper_title"].split()) or paper_id,
                "abstract": " ".join(row["cited_paper_abstract"].split()),
                "date": id_month(paper_id).isoformat(),
            },
        )  # the month is all the CSVs give
    paths = {
        "targets": out / "targets.jsonl",
        "bibliographies": out / "bibliographies.jsonl",
        "cited_papers": out / "cited.jsonl",
    }
    rows = {
        "targets": targets,
        "bibliographies": [{"target": t, "references": refs} for t, refs in references.items()],
        "cited_papers": list(cited.values()),
    }
    for key, path in paths.items():
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows[key]), encoding="utf-8")
    return paths
