"""One entry point for the three kinds of data a user brings:

    load_benchmark("data/my-benchmark")      # native: instances.jsonl + corpus.jsonl
    load_benchmark("world")                  # the synthetic world, seed 0 ("world:7" for seed 7)
    load_benchmark("../shared/data/deepscholar-bench")   # DeepScholar-Bench CSVs, converted once
    load_benchmark(folder, corpus=ExternalCorpus("arxiv-metadata-oai-snapshot.json"))  # an open corpus

Generated and converted data are cached (by seed, or by the CSVs' hashes) under
$HINDSIGHT_CACHE, so every stage reads the same files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hindsight.corpus import Corpus
from hindsight.data.native import DataReport, load_native
from hindsight.data.open_corpus import ExternalCorpus, with_open_corpus
from hindsight.schema import Instance
from hindsight.search.base import default_cache_dir


def materialise(source: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The folder holding `instances.jsonl` and `corpus.jsonl` for `source`, made if needed."""
    cache = Path(cache_dir or default_cache_dir())
    text = str(source)
    if text == "world" or text.startswith("world:"):
        from hindsight.data.world import WORLD_VERSION, write_world

        seed = int(text.split(":", 1)[1]) if ":" in text else 0
        out = cache / f"{WORLD_VERSION}-seed{seed}"
        if not (out / "world.json").exists():
            write_world(out, seed)
        return out
    path = Path(source)
    if (path / "papers.csv").exists() and (path / "citations.csv").exists():
        from hindsight.data.deepscholar import convert_to

        digest = hashlib.sha256()
        for name in ("papers.csv", "citations.csv", "related_works_combined.csv"):
            digest.update((path / name).read_bytes())
        out = cache / f"deepscholar-{digest.hexdigest()[:16]}"
        if not (out / "instances.jsonl").exists():
            convert_to(path, out)
        return out
    if not (path / "instances.jsonl").exists():
        raise FileNotFoundError(
            f"{path}: not a benchmark (no instances.jsonl, no DeepScholar CSVs; or use 'world' / 'world:SEED')"
        )
    return path


def load_benchmark(
    source: str | Path,
    cache_dir: str | Path | None = None,
    skip_bad: bool = False,
    corpus: ExternalCorpus | None = None,
) -> tuple[Corpus, list[Instance], DataReport]:
    """`corpus`: a paper snapshot merged with the benchmark's own papers (hindsight.data.open_corpus)."""
    folder = materialise(source, cache_dir)
    if corpus is not None:
        folder = with_open_corpus(folder, corpus, cache_dir or default_cache_dir(), skip_bad=skip_bad)
    return load_native(folder, skip_bad=skip_bad)
