"""What building a benchmark costs: the builder's recorded tokens on DeepScholar-Bench's 43
targets, priced at API models' list prices (litellm's local price table).

    python -m benchmarks.build_cost --json benchmarks/results/build_cost.json

The prompts are the builder's real requests over the real targets and references; the replies
come from tests/scripted_server.py, shaped like a real model's (a one-sentence rationale per
reference, briefs of 180 and 103 words as the Inspire paper reports for its generator, a short
audit). Tokens are counted with OpenAI's cl100k tokenizer, so prompt tokens are what an OpenAI
model would bill and completion tokens an estimate of a real model's. Three judges, one writer
and one auditor, every request once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
from pathlib import Path

from benchmarks.common import finish
from hindsight.builder import build, estimate_cost, load_build_config
from hindsight.builder.deepscholar import write_inputs
from tests.scripted_server import ScriptedServer

DEEPSCHOLAR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "deepscholar-bench"
PRICED = ("gpt-4.1", "gpt-4.1-mini", "gpt-4o")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, default=DEEPSCHOLAR)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-build-"))
    inputs = write_inputs(args.src, work / "inputs")
    server = ScriptedServer(brief_words=(180, 103), count_tokens=True)
    try:
        model = {"api_base": server.url, "api_key": "none"}
        config = {
            "targets": str(inputs["targets"]),
            "bibliographies": str(inputs["bibliographies"]),
            "corpus": str(inputs["cited_papers"]),
            "cache_dir": str(work / "replies"),
            "judges": [{"model": f"openai/judge-{name}", **model} for name in "abc"],
            "generator": {"model": "openai/writer", **model},
            "auditor": {"model": "openai/auditor", **model},
        }
        (work / "build.yaml").write_text(json.dumps(config))
        manifest = json.loads(build(load_build_config(work / "build.yaml"), work / "release").read_text())
    finally:
        server.close()
    counts, calls = manifest["counts"], manifest["calls_this_run"]
    roles = {
        "judges (3)": [f"openai/judge-{n}" for n in "abc"],
        "writer (2 briefs)": ["openai/writer"],
        "auditor": ["openai/auditor"],
    }
    lines = [
        f"{counts['targets']} targets, {counts['instances']} instances, "
        f"{sum(c['requests'] for c in calls.values())} requests",
        "",
        "| role | requests | prompt tokens | completion tokens |",
        "|---|---:|---:|---:|",
    ]
    for role, models in roles.items():
        lines.append(
            f"| {role} | {sum(calls[m]['requests'] for m in models)} | "
            f"{sum(calls[m]['prompt_tokens'] for m in models):,} | {sum(calls[m]['completion_tokens'] for m in models):,} |"
        )
    prices = {name: estimate_cost(manifest, name) for name in PRICED}
    lines += ["", "| every call at the price of | in all | a target | an instance |", "|---|---:|---:|---:|"]
    lines += [
        f"| {name} | ${cost['total_usd']:.2f} | ${cost['per_target_usd']:.4f} | ${cost['per_instance_usd']:.4f} |"
        for name, cost in prices.items()
    ]
    report = {
        "benchmark": "build_cost",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "counts": counts,
        "calls": calls,
        "tokens": manifest["tokens_all_targets"],
        "prices": prices,
        "markdown": "\n".join(lines),
    }
    return finish(report, args.json)


if __name__ == "__main__":
    main()
