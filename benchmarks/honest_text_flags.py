"""False positives of the disguise readings (hindsight/leaks.py, _disguise_readings) and of the
unreadable-text check (hindsight/lexicon.py) on honest, natural text: for each target, sentences
of corpus abstracts that are none of its labels nor its target are written as a query and a
rationale, judged by the rules alone, with the readings, and with the readings and the lexicon.

    python -m benchmarks.honest_text_flags --data ../shared/data/deepscholar-bench
    python -m benchmarks.honest_text_flags --data world --prose ../shared/reference/inspire.txt

With --prose, each rationale is instead a run of sentences of that English text (a paper's prose,
say), which no corpus holds: what an LLM teacher's own words look like to the lexicon.
A conversation flagged by the rules alone shares enough words with a label to be flagged by the
plain rules; the numbers to watch are the differences, and each newly flagged conversation is
listed with the reason.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import random
import re
from dataclasses import replace
from pathlib import Path
from unittest import mock

import hindsight.leaks as leaks
from benchmarks.common import finish
from hindsight.data import load_benchmark
from hindsight.leaks import PrivateText, check_messages
from hindsight.lexicon import Lexicon
from hindsight.prompts import initial_messages

NGRAM, SHARE = 5, 0.6


def honest_conversation(instance, query: str, rationale: str) -> list[dict]:
    def call(i, name, arguments):
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}],
        }

    return initial_messages(instance.task()) + [
        call(0, "search_papers", {"query": query}),
        {"role": "tool", "tool_call_id": "c0", "name": "search_papers", "content": '{"results": []}'},
        call(1, "submit_answer", {"papers": [{"id": "x", "rationale": rationale}]}),
    ]


def findings(conversations) -> dict[int, list[str]]:
    leaks.terms.cache_clear()  # both cache readings made under the other arm's patch
    leaks._texts.cache_clear()
    found = {}
    for i, (messages, private, brief) in enumerate(conversations):
        reasons = [str(f) for f in check_messages(messages, private, brief, NGRAM, SHARE) if f.flag != "unsurfaced"]
        if reasons:
            found[i] = reasons
    return found


def prose_sentences(path: Path) -> list[str]:
    """The sentences of an English text of 8 to 60 words, its lines joined."""
    text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if 8 <= len(s.split()) <= 60]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="world", help="a benchmark source (world, or a converted data folder)")
    parser.add_argument("--per-target", type=int, default=8, help="abstracts drawn per target")
    parser.add_argument("--prose", type=Path, help="an English text whose sentences are the rationales")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    corpus, instances, _ = load_benchmark(args.data)
    papers = list(corpus.values()) if isinstance(corpus, dict) else list(corpus)
    prose = prose_sentences(args.prose) if args.prose else []
    lexicon = Lexicon.of_corpus(corpus)
    rng = random.Random(args.seed)
    conversations = []
    for instance in instances:
        private = PrivateText.build(
            "\n".join(f"{lab.title}\n{lab.abstract}" for lab in instance.labels),
            instance.target.title,
            instance.target.id,
            instance.labels,
            NGRAM,
        )
        own = {instance.target.id, *(lab.id for lab in instance.labels)}
        for paper in [p for p in rng.sample(papers, 5 * args.per_target) if p.id not in own][: args.per_target]:
            sentences = (paper.abstract or paper.title).split(". ")
            query = " ".join(sentences[0].split()[:12])
            start = rng.randrange(len(prose) - 2) if prose else 0
            rationale = " ".join(prose[start : start + rng.randint(1, 3)]) if prose else ". ".join(sentences[:3])
            conversations.append((honest_conversation(instance, query, rationale), private, instance.brief))
    with mock.patch.object(leaks, "_disguise_readings", lambda folded, vocabulary: []):
        plain = findings(conversations)
    with_readings = findings(conversations)
    with_lexicon = findings([(m, replace(private, lexicon=lexicon), b) for m, private, b in conversations])
    arms = {"plain": plain, "with_readings": with_readings, "with_lexicon": with_lexicon}
    markdown = (
        "| honest conversations | flagged by the rules alone | with the disguise readings | "
        "with the readings and the lexicon |\n|---:|---:|---:|---:|\n"
        f"| {len(conversations)} | {len(plain)} | {len(with_readings)} | {len(with_lexicon)} |"
    )
    for label, arm, before in (("readings", with_readings, plain), ("lexicon", with_lexicon, with_readings)):
        for i in sorted(set(arm) - set(before)):
            markdown += f"\n- newly flagged by the {label}: {arm[i][-1][:300]}"
    return finish(
        {
            "data": args.data,
            "prose": str(args.prose or ""),
            "conversations": len(conversations),
            **{name: sorted(arm) for name, arm in arms.items()},
            "markdown": markdown,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
