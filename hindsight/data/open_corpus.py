"""An open corpus: a benchmark's own papers merged with an external snapshot, so that its
antecedents are a few needles among many papers.

A converter that keeps only the papers its targets cite makes a closed corpus: every paper a
search can return is somebody's antecedent, and search looks easy. `ExternalCorpus` names a
snapshot (our JSONL, Parquet, or the arXiv metadata snapshot, see hindsight.corpus);
`with_open_corpus` writes the benchmark's instances beside the merged papers once, in the cache,
so every stage reads the same files. A paper in both keeps the snapshot's record (its exact date,
abstract and categories, where a converter may only have known the month).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from hindsight.corpus import CORPUS_FORMATS, CorpusError, LoadReport, load_papers
from hindsight.data.instances import InstanceError
from hindsight.errors import UserError
from hindsight.jsonl import sha256_file
from hindsight.schema import Paper


@dataclass(frozen=True)
class ExternalCorpus:
    path: str
    format: str = "auto"  # auto, jsonl, parquet or arxiv-snapshot
    date_field: str = "date"  # jsonl and parquet: the field holding the first-posted date
    categories: tuple[str, ...] = ()  # keep papers with a category starting with one of these ("cs.")

    def __post_init__(self):
        if self.format not in CORPUS_FORMATS:
            raise UserError(f"corpus format {self.format!r}: known are {', '.join(CORPUS_FORMATS)}")

    def load(self, skip_bad: bool = False) -> tuple[list[Paper], LoadReport]:
        return load_papers(
            self.path, date_field=self.date_field, skip_bad=skip_bad, format=self.format, categories=self.categories
        )


@dataclass
class MergeReport:
    own: int  # the benchmark's papers
    external: int  # the snapshot's papers kept
    replaced: int  # papers in both: the snapshot's record was kept
    merged: int
    load: dict  # the snapshot's LoadReport

    def summary(self) -> str:
        return (
            f"open corpus: {self.merged:,} papers = {self.own:,} of the benchmark's + {self.external:,} from "
            f"{self.load['path']} ({self.replaced:,} in both; {self.load['skipped']:,} bad records skipped, "
            f"{self.load['filtered']:,} outside the categories)"
        )


def merge_papers(own: Iterable[Paper], external: Iterable[Paper]) -> tuple[list[Paper], int]:
    """Own papers and external ones in (date, id) order, one per id, the external record winning;
    returns them and how many ids were in both."""
    by_id = {paper.id: paper for paper in own}
    replaced = 0
    for paper in external:
        replaced += paper.id in by_id
        by_id[paper.id] = paper
    return sorted(by_id.values(), key=lambda p: (p.date, p.id)), replaced


def with_open_corpus(
    folder: str | Path, external: ExternalCorpus, cache_dir: str | Path, skip_bad: bool = False
) -> Path:
    """A native folder holding `folder`'s instances and its papers merged with `external`'s,
    made once and reused: the cache key hashes all three files and the reading settings."""

    folder = Path(folder)
    own_path = corpus_file(folder)
    if not Path(external.path).exists():
        raise CorpusError(f"{external.path}: no such corpus file (data.corpus)")
    key = hashlib.sha256(
        json.dumps(
            {
                "own": sha256_file(own_path),
                "instances": sha256_file(folder / "instances.jsonl"),
                "external": sha256_file(external.path),
                "skip_bad": skip_bad,
                **{k: v for k, v in asdict(external).items() if k != "path"},
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]
    out = Path(cache_dir) / f"open-{key}"
    if (out / "merge.json").exists():
        return out
    own, _ = load_papers(own_path)
    papers, load_report = external.load(skip_bad=skip_bad)
    merged, replaced = merge_papers(own, papers)
    report = MergeReport(
        own=len(own), external=len(papers), replaced=replaced, merged=len(merged), load=load_report.to_dict()
    )
    # written beside the final folder and renamed into place: a crash leaves no half-merged corpus
    partial = out.with_name(out.name + f".partial-{os.getpid()}")
    partial.mkdir(parents=True, exist_ok=True)
    with open(partial / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in merged)
    shutil.copyfile(folder / "instances.jsonl", partial / "instances.jsonl")
    (partial / "merge.json").write_text(
        json.dumps({"source": str(folder), "external": asdict(external), **asdict(report)}, indent=2) + "\n"
    )
    try:
        partial.rename(out)
    except OSError:  # another process finished first
        shutil.rmtree(partial, ignore_errors=True)
    return out


def add_corpus_arguments(parser) -> None:
    parser.add_argument(
        "--corpus",
        help="a paper snapshot to merge into the corpus, making it open "
        "(our JSONL, Parquet, or the arXiv metadata snapshot)",
    )
    parser.add_argument("--corpus-format", default="auto", choices=CORPUS_FORMATS)
    parser.add_argument("--corpus-date-field", default="date", help="jsonl, parquet: the first-posted date's field")
    parser.add_argument("--corpus-categories", default="", help="comma-separated category prefixes to keep, e.g. cs.")


def external_from_args(args) -> ExternalCorpus | None:
    if not args.corpus:
        return None
    return ExternalCorpus(
        str(args.corpus),
        args.corpus_format,
        args.corpus_date_field,
        tuple(c for c in args.corpus_categories.split(",") if c),
    )


def merge_report(folder: str | Path) -> MergeReport | None:
    path = Path(folder) / "merge.json"
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    return MergeReport(**{key: record[key] for key in ("own", "external", "replaced", "merged", "load")})


def corpus_file(directory: Path) -> Path:
    """A native folder's corpus: corpus.jsonl, corpus.jsonl.gz or corpus.parquet."""
    for suffix in (".jsonl", ".jsonl.gz", ".parquet"):
        if (directory / f"corpus{suffix}").exists():
            return directory / f"corpus{suffix}"
    raise InstanceError(f"{directory}: no corpus.jsonl, corpus.jsonl.gz or corpus.parquet")
