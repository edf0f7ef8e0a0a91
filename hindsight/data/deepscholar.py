"""Convert DeepScholar-Bench's published CSVs to the native format.

    python -m hindsight.data.deepscholar ../shared/data/deepscholar-bench --out data/deepscholar

Rules (all deterministic, no model):
- cutoff = the target's first-posted date minus 3 calendar months;
- a cited paper's date is the first day of the month in its arXiv id (YYMM), the best the CSVs
  give; labels are the cited arXiv papers dated before the cutoff and at most 4 years before
  the target;
- tier from how often the related-work LaTeX cites the key (`\\cite`, `\\citep`, `\\citet`, …,
  each key of a multi-key cite counted): 3 or more → T3, 2 → T2, 1 or 0 → T1;
- role `infrastructural` when the cited title names a dataset, benchmark, corpus, library,
  toolkit or suite, else `conceptual`;
- brief = the target abstract up to its first contribution sentence (see `redact`), with the
  target's own name and acronyms replaced, closed by a question in our words;
  `audit.title_overlap` is the share of the target title's content words left in the brief,
  and `audit.flagged` is set when it exceeds 0.5;
- corpus = every cited arXiv paper with its title and abstract, plus the targets, one per base id:
  a closed corpus, which the report warns about; `--corpus SNAPSHOT` merges a paper snapshot
  into it (hindsight.data.open_corpus).
Targets split by date: earliest 70% train, next 10% dev, latest 20% eval.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import re
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from hindsight.data.native import months_before, prepare_instances, split_by_date
from hindsight.data.open_corpus import (
    ExternalCorpus,
    MergeReport,
    add_corpus_arguments,
    external_from_args,
    merge_papers,
)
from hindsight.errors import UserError
from hindsight.ids import normalize_arxiv_id
from hindsight.schema import Instance, Label, Paper, SchemaError, Target, parse_date

FLAG_OVERLAP = 0.5
MAX_AGE_YEARS = 4
CLOSING = "Which earlier papers should we study before tackling this?"
CITE_COMMAND = re.compile(r"\\(?:no)?cite[a-zA-Z]*\*?(?:\[[^\]]*\])*\{([^}]*)\}")
_INFRA = re.compile(
    r"\b(data ?sets?|benchmarks?|corpus|corpora|librar(?:y|ies)|toolkits?|toolbox|suites?|leaderboards?)\b", re.I
)
_CONTRIBUTION = re.compile(
    r"^(?:here,? |to (?:this end|address|tackle|overcome|bridge|fill|solve)\b.*?,\s*)?"
    r"(?:we|this (?:paper|work|study|article)|our (?:work|paper|method|approach|framework)|in this (?:paper|work))\b"
    r"|\b(?:we|this paper|this work)\s+(?:\w+\s+){0,2}(?:propose|introduce|present|develop|design|describe|"
    r"show|demonstrate|address|tackle|study|investigate|explore|offer|build|leverage|formulate|contribute)",
    re.I,
)
_STOP = set(
    "a an and are as at be by for from in into is it of on or our the their this to via we with without "
    "towards toward using based new".split()
)
GENERIC_ACRONYMS = {
    "AI",
    "ML",
    "NLP",
    "LLM",
    "LLMS",
    "GPU",
    "GPUS",
    "CPU",
    "CNN",
    "RNN",
    "RL",
    "2D",
    "3D",
    "AR",
    "VR",
    "API",
    "APIS",
    "IOT",
    "MLLM",
    "MLLMS",
    "VLM",
    "VLMS",
    "LM",
    "LMS",
    "QA",
    "SQL",
}


class ConversionError(UserError):
    pass


# The columns each of the benchmark's files must have (the builder reads the same files).
PAPER_COLUMNS = ("arxiv_id", "title", "abstract", "published_date")
CITATION_COLUMNS = (
    "parent_paper_arxiv_id",
    "citation_shorthand",
    "cited_paper_title",
    "cited_paper_arxiv_link",
    "cited_paper_abstract",
)
RELATED_COLUMNS = ("arxiv_id", "raw_latex_related_works")


def read_csv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    """(first line of the record, row) pairs; a missing column or file is an error naming it."""
    if not path.exists():
        raise ConversionError(f"{path}: missing (expected DeepScholar-Bench's {path.name})")
    csv.field_size_limit(1 << 30)
    rows = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise ConversionError(f"{path}:1: missing column(s) {', '.join(missing)}")
        start = 2
        for row in reader:
            if None in row or any(v is None for v in row.values()):
                raise ConversionError(
                    f"{path}:{start}: row has {len(row) - (None in row)} fields, the header {len(reader.fieldnames)}"
                )
            rows.append((start, row))
            start = reader.line_num + 1
    return rows


def id_month(paper_id: str) -> dt.date:
    digits = paper_id.split("/")[-1][:4]
    year = int(digits[:2])
    return dt.date(2000 + year if year < 90 else 1900 + year, int(digits[2:4]), 1)


def cite_counts(latex: str) -> Counter:
    return Counter(
        key.strip() for match in CITE_COMMAND.finditer(latex) for key in match.group(1).split(",") if key.strip()
    )


def target_names(title: str) -> list[str]:
    """The target's own name and acronyms: the part before a colon when it is short, and any
    title word (hyphenated parts count alone) with two or more capitals or an inner capital that
    is not a generic acronym."""
    names = []
    head = title.split(":")[0].strip() if ":" in title else ""
    if head and len(head.split()) <= 4:
        names.append(head)
    for word in re.findall(r"[A-Za-z][A-Za-z0-9]*[A-Za-z0-9]", title):
        capitals = sum(c.isupper() for c in word)
        if (
            (capitals >= 2 or (capitals == 1 and not word[0].isupper()))
            and word.upper().rstrip("S") not in GENERIC_ACRONYMS
            and word.upper() not in GENERIC_ACRONYMS
        ):
            names.append(word)
    return sorted(set(names), key=len, reverse=True)


def redact(abstract: str, title: str) -> str | None:
    """The problem and motivation sentences of `abstract`, names removed; None if none remain."""
    text = re.sub(r"\s+", " ", abstract).strip()
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
    kept = []
    for sentence in sentences:
        if _CONTRIBUTION.search(sentence):
            break
        kept.append(sentence)
    if not kept:
        return None
    return f"{remove_names(' '.join(kept), title)} {CLOSING}"


def remove_names(text: str, title: str) -> str:
    for name in target_names(title):
        text = re.sub(rf"(?<![\w-]){re.escape(name)}(?:'s|s)?(?!\w)", "this approach", text)
    return text


def content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _STOP]


def title_overlap(title: str, brief: str) -> float:
    words = set(content_words(title))
    return len(words & set(content_words(brief))) / len(words) if words else 0.0


def convert(src: Path, briefs: dict | None = None) -> tuple[list[Paper], list[Instance], dict]:
    """`briefs` (--briefs) asks a model for the briefs; a target whose request fails keeps the
    model-free brief."""
    papers_rows = read_csv(src / "papers.csv", PAPER_COLUMNS)
    citation_rows = read_csv(src / "citations.csv", CITATION_COLUMNS)
    related = {
        normalize_arxiv_id(row["arxiv_id"]): row["raw_latex_related_works"]
        for _, row in read_csv(src / "related_works_combined.csv", RELATED_COLUMNS)
    }
    corpus: dict[str, Paper] = {}
    cited: dict[str, list[dict]] = {}
    for line, row in citation_rows:
        if not row["cited_paper_arxiv_link"].strip():
            continue
        paper_id = normalize_arxiv_id(row["cited_paper_arxiv_link"])
        parent = normalize_arxiv_id(row["parent_paper_arxiv_id"])
        if paper_id is None or parent is None:
            raise ConversionError(
                f"{src / 'citations.csv'}:{line}: not an arXiv id in "
                f"{row['cited_paper_arxiv_link']!r} or {row['parent_paper_arxiv_id']!r}"
            )
        title = re.sub(r"\s+", " ", row["cited_paper_title"]).strip() or paper_id
        corpus.setdefault(
            paper_id,
            Paper(
                id=paper_id,
                title=title,
                date=id_month(paper_id),
                abstract=re.sub(r"\s+", " ", row["cited_paper_abstract"]).strip(),
            ),
        )
        cited.setdefault(parent, []).append({"id": paper_id, "key": row["citation_shorthand"], "title": title})
    written, failed = {}, {}
    if briefs:
        from hindsight.data.briefs import write_briefs

        written, failed = write_briefs(
            [(normalize_arxiv_id(row["arxiv_id"]) or "", row["title"], row["abstract"]) for _, row in papers_rows],
            briefs,
        )
    instances, dropped = [], Counter()
    for line, row in papers_rows:
        where = f"{src / 'papers.csv'}:{line}"
        target_id = normalize_arxiv_id(row["arxiv_id"])
        if target_id is None:
            raise ConversionError(f"{where}: arxiv_id {row['arxiv_id']!r} is not an arXiv id")
        try:
            posted = parse_date(row["published_date"], where, "published_date")
        except SchemaError as exc:
            raise ConversionError(str(exc)) from None
        title = re.sub(r"\s+", " ", row["title"]).strip()
        corpus[target_id] = Paper(
            id=target_id, title=title, date=posted, abstract=re.sub(r"\s+", " ", row["abstract"]).strip()
        )
        instance = _instance(
            target_id,
            title,
            posted,
            row["abstract"],
            cited.get(target_id, []),
            cite_counts(related.get(target_id, "")),
            corpus,
            written.get(target_id),
        )
        if isinstance(instance, str):
            dropped[instance] += 1
        else:
            instances.append(instance)
    info = {"dropped": dropped, "model_briefs": len(written), "model_brief_failures": failed}
    return sorted(corpus.values(), key=lambda p: (p.date, p.id)), instances, info


def _instance(target_id, title, posted, abstract, citations, counts, corpus, model_brief=None) -> Instance | str:
    cutoff = months_before(posted, 3)
    oldest = months_before(posted, 12 * MAX_AGE_YEARS)
    labels, seen = [], set()
    for cite in citations:
        paper = corpus[cite["id"]]
        if cite["id"] in seen or cite["id"] == target_id or not oldest <= paper.date < cutoff:
            continue
        seen.add(cite["id"])
        uses = counts.get(cite["key"], 0)
        tier = "T3" if uses >= 3 else "T2" if uses == 2 else "T1"
        role = "infrastructural" if _INFRA.search(paper.title) else "conceptual"
        labels.append(
            Label.from_dict(
                {
                    "id": paper.id,
                    "tier": tier,
                    "role": role,
                    "title": paper.title,
                    "abstract": paper.abstract,
                    "date": paper.date.isoformat(),
                }
            )
        )
    brief = remove_names(model_brief, title) if model_brief else redact(abstract, title)
    if brief is None:
        return "no problem sentence before the first contribution sentence"
    overlap = title_overlap(title, brief)
    return Instance(
        id=f"ds-{target_id}",
        split="train",
        brief=brief,
        cutoff=cutoff,
        target=Target(id=target_id, title=title, date=posted),
        labels=tuple(labels),
        audit={
            "flagged": overlap > FLAG_OVERLAP,
            "title_overlap": round(overlap, 3),
            "source": "deepscholar",
            "brief_by": "model" if model_brief else "rules",
        },
    )


def write_native(out: Path, papers: list[Paper], instances: list[Instance]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in papers)
    with open(out / "instances.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(i.to_dict(), ensure_ascii=False) + "\n" for i in instances)


def summary(papers, instances, report, dropped: Counter) -> str:
    tiers = Counter(label.tier for inst in instances for label in inst.labels)
    roles = Counter(label.role for inst in instances for label in inst.labels)
    per_target = [len(inst.labels) for inst in instances]
    brief_words = [len(inst.brief.split()) for inst in instances]
    lines = [f"corpus: {len(papers)} papers", report.summary()]
    lines += [f"  dropped before labelling: {n} × {reason}" for reason, n in dropped.items()]
    if instances:
        lines += [
            f"labels per target: min {min(per_target)}, mean {sum(per_target) / len(per_target):.1f}, "
            f"max {max(per_target)}",
            f"tiers: {', '.join(f'{t} {tiers[t]}' for t in ('T3', 'T2', 'T1'))}; roles: "
            f"{', '.join(f'{r} {n}' for r, n in sorted(roles.items()))}",
            f"brief words: mean {sum(brief_words) / len(brief_words):.1f}; "
            f"flagged by title overlap > {FLAG_OVERLAP}: {sum(i.audit['flagged'] for i in instances)}",
        ]
    return "\n".join(lines)


def convert_to(src: Path, out: Path, briefs: dict | None = None, external: ExternalCorpus | None = None) -> str:
    """Convert `src` into the native files under `out`; returns the printed summary. `external`
    (--corpus) is merged into the corpus, its records winning over the CSVs' cited papers."""
    from hindsight.corpus import Corpus

    papers, instances, info = convert(src, briefs)
    merged = None
    if external is not None:
        snapshot, load_report = external.load()
        own = len(papers)
        papers, replaced = merge_papers(papers, snapshot)
        merged = MergeReport(
            own=own, external=len(snapshot), replaced=replaced, merged=len(papers), load=load_report.to_dict()
        )
    corpus = Corpus(papers)
    kept, report = prepare_instances(instances, corpus)
    kept = split_by_date(kept)
    report.kept_by_split = Counter(inst.split for inst in kept)
    report.measure_openness(kept, corpus)
    report.open_corpus = asdict(merged) if merged else None
    write_native(out, papers, kept)
    text = summary(papers, kept, report, info["dropped"])
    if briefs:
        text += (
            f"\nmodel-written briefs: {info['model_briefs']}; kept the rule-based brief after a failed request: "
            f"{len(info['model_brief_failures'])}"
        )
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hindsight.data.deepscholar",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("src", type=Path, help="folder with DeepScholar-Bench's CSV files")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--briefs",
        metavar="model=MODEL[,api_base=URL,concurrency=N]",
        help="have a model (any litellm model) write the briefs; replies are cached",
    )
    add_corpus_arguments(parser)
    args = parser.parse_args(argv)
    try:
        from hindsight.data.briefs import parse_options

        print(
            convert_to(
                args.src, args.out, parse_options(args.briefs) if args.briefs else None, external_from_args(args)
            )
        )
    except (ConversionError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out / 'instances.jsonl'} and {args.out / 'corpus.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
