"""False positives of the disguise readings (hindsight/leaks.py, _disguise_readings) on honest,
natural text: for each target, sentences of corpus abstracts that are none of its labels nor its
target are written as a query and a rationale, judged with and without the readings.

    python -m benchmarks.honest_text_flags --data ../shared/data/deepscholar-bench

A conversation flagged without the readings shares enough words with a label to be flagged by
the plain rules; the number to watch is the difference, and each newly flagged conversation is
listed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import random
from pathlib import Path
from unittest import mock

import hindsight.leaks as leaks
from benchmarks.common import finish
from hindsight.data import load_benchmark
from hindsight.leaks import PrivateText, check_messages
from hindsight.prompts import initial_messages

NGRAM, SHARE = 5, 0.6


def honest_conversation(instance, query: str, rationale: str) -> list[dict]:
    def call(i, name, arguments):
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}]}

    return initial_messages(instance.task()) + [
        call(0, "search_papers", {"query": query}),
        {"role": "tool", "tool_call_id": "c0", "name": "search_papers", "content": '{"results": []}'},
        call(1, "submit_answer", {"papers": [{"id": "x", "rationale": rationale}]})]


def flagged(conversations) -> set[int]:
    leaks.terms.cache_clear()   # both cache readings made under the other arm's patch
    leaks._texts.cache_clear()
    return {i for i, (messages, private, brief) in enumerate(conversations)
            if any(f.flag != "unsurfaced" for f in check_messages(messages, private, brief, NGRAM, SHARE))}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="world", help="a benchmark source (world, or a converted data folder)")
    parser.add_argument("--per-target", type=int, default=8, help="abstracts drawn per target")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    corpus, instances, _ = load_benchmark(args.data)
    papers = list(corpus.values()) if isinstance(corpus, dict) else list(corpus)
    rng = random.Random(args.seed)
    conversations = []
    for instance in instances:
        private = PrivateText.build("\n".join(f"{lab.title}\n{lab.abstract}" for lab in instance.labels),
                                    instance.target.title, instance.target.id, instance.labels, NGRAM)
        own = {instance.target.id, *(lab.id for lab in instance.labels)}
        for paper in [p for p in rng.sample(papers, 5 * args.per_target) if p.id not in own][: args.per_target]:
            sentences = (paper.abstract or paper.title).split(". ")
            query = " ".join(sentences[0].split()[:12])
            conversations.append((honest_conversation(instance, query, ". ".join(sentences[:3])), private, instance.brief))
    with mock.patch.object(leaks, "_disguise_readings", lambda folded, vocabulary: []):
        plain = flagged(conversations)
    with_readings = flagged(conversations)
    new = sorted(with_readings - plain)
    markdown = (f"| honest conversations | flagged by the rules alone | flagged with the disguise readings | newly flagged |\n"
                f"|---:|---:|---:|---:|\n| {len(conversations)} | {len(plain)} | {len(with_readings)} | {len(new)} |")
    for i in new:
        markdown += f"\n- newly flagged: {conversations[i][0][-1]['tool_calls'][0]['function']['arguments']}"
    return finish({"data": args.data, "conversations": len(conversations), "plain": len(plain),
                   "with_readings": len(with_readings), "new": new, "markdown": markdown}, args.json)


if __name__ == "__main__":
    main()
