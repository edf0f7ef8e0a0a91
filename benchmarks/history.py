"""One sequence an episode vs one sequence a turn, for a template that rewrites history (Qwen3).

    python -m benchmarks.history --json benchmarks/results/history.json

The demo's demonstrations (recipes/demo.yaml's distill stage, rerun here into a temporary
folder) are encoded for training under the real Qwen3 chat template (../shared/chat_templates)
with a tokenizer trained on the world's text, two ways:

- per turn: the template's own rendering, which drops earlier turns' empty think blocks, so
  every assistant turn is a sequence of its own (its whole context, then its action);
- as generated: history rendered as the model wrote it (`hindsight.policy.chat.as_generated`,
  what the trainer and the local policies do), so a demonstration is one sequence.

Both train the same action tokens. Reported: sequences, tokens processed per epoch, and the time
of forward and backward passes over the first --timed rows with a small random Qwen3.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish

TEMPLATE = Path(__file__).resolve().parents[2] / "shared" / "chat_templates" / "qwen3.jinja"
QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]


def demonstrations(work: Path):
    from hindsight.distill import run_distillation
    from hindsight.stages import read_sft_set

    run_distillation(["recipes/demo.yaml", "--set", f"distill.out_dir={work / 'distill'}"])
    return read_sft_set(work / "distill" / "sft.jsonl")


def encode(rows, tokenizer, as_generated: bool):
    import hindsight.masking as masking

    if not as_generated:  # the template's own rendering of history
        original = masking.as_generated
        masking.as_generated = lambda messages: messages
    try:
        return [
            example
            for i, row in enumerate(rows)
            for example in masking.encode_conversation(tokenizer, row.messages, row.tools, where=f"row {i}")
        ]
    finally:
        if not as_generated:
            masking.as_generated = original


def timed_passes(examples, vocab_size: int) -> float:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    model = Qwen3ForCausalLM(
        Qwen3Config(
            vocab_size=vocab_size,
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=32,
            max_position_embeddings=16384,
        )
    )
    start = time.perf_counter()
    for example in examples:
        ids = torch.tensor([example.input_ids])
        model(input_ids=ids, labels=torch.tensor([example.labels])).loss.backward()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--template", type=Path, default=TEMPLATE, help="a Qwen3-style chat template")
    parser.add_argument("--timed", type=int, default=40, help="rows whose passes are timed")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.template.exists():
        raise SystemExit(f"{args.template}: no chat template there (it ships in ../shared/chat_templates)")
    from hindsight.models.tiny import train_tokenizer

    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-history-"))
    rows = demonstrations(work)
    texts = [json.dumps(row.messages) for row in rows[:200]]
    tokenizer = train_tokenizer(texts, 4096, special_tokens=QWEN_SPECIAL, chat_template=args.template.read_text())
    arms = {}
    for name, stable in (("per turn", False), ("as generated", True)):
        examples = encode(rows, tokenizer, stable)
        timed = encode(rows[: args.timed], tokenizer, stable)
        arms[name] = {
            "sequences": len(examples),
            "tokens": sum(len(e.input_ids) for e in examples),
            "trained_tokens": sum(e.trained for e in examples),
            "timed_rows": args.timed,
            "timed_seconds": timed_passes(timed, len(tokenizer)),
        }
    per_turn, stable = arms["per turn"], arms["as generated"]
    assert per_turn["trained_tokens"] == stable["trained_tokens"], "both arms must train the same tokens"
    report = {
        "rows": len(rows),
        "template": str(args.template),
        "arms": arms,
        "fewer_tokens": per_turn["tokens"] / stable["tokens"],
        "faster_passes": per_turn["timed_seconds"] / stable["timed_seconds"],
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
    }
    lines = [
        f"| rendering | sequences | tokens per epoch | trained tokens | passes over {args.timed} rows |",
        "|---|---|---|---|---|",
    ]
    for name, arm in arms.items():
        lines.append(
            f"| {name} | {arm['sequences']:,} | {arm['tokens']:,} | {arm['trained_tokens']:,} | "
            f"{arm['timed_seconds']:.1f} s |"
        )
    lines.append(
        f"\nas generated: {report['fewer_tokens']:.1f}x fewer tokens, passes {report['faster_passes']:.1f}x faster "
        f"({len(rows)} demonstrations)"
    )
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
