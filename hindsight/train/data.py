"""From SFT rows to tokenised examples: masking, the length report, and the too-long rule."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hindsight.masking import Encoded, MaskingError, encode_conversation
from hindsight.stages import SFTRow


@dataclass
class LengthReport:
    rows: int = 0
    examples: int = 0
    dropped_rows: int = 0
    lengths: list[int] = field(default_factory=list)
    trained_tokens: int = 0

    def summary(self) -> dict:
        lengths = np.asarray(self.lengths or [0])
        return {
            "rows": self.rows,
            "examples": self.examples,
            "dropped_rows_too_long": self.dropped_rows,
            "trained_tokens": self.trained_tokens,
            "tokens": {
                "min": int(lengths.min()),
                "p50": int(np.percentile(lengths, 50)),
                "p95": int(np.percentile(lengths, 95)),
                "max": int(lengths.max()),
                "total": int(lengths.sum()),
            },
        }


def encode_rows(
    rows: list[SFTRow], tokenizer, max_length: int, max_drop_share: float, enable_thinking: bool, source: str = "sft"
) -> tuple[list[Encoded], LengthReport]:
    """All examples of rows that fit `max_length` (a row is dropped whole, never cut mid-action)."""
    report = LengthReport(rows=len(rows))
    kept: list[Encoded] = []
    for i, row in enumerate(rows, start=1):
        examples = encode_conversation(
            tokenizer, row.messages, row.tools, enable_thinking=enable_thinking, where=f"{source} row {i}"
        )
        report.lengths += [len(e.input_ids) for e in examples]
        if any(len(e.input_ids) > max_length for e in examples):
            report.dropped_rows += 1
            continue
        kept += examples
        report.trained_tokens += sum(e.trained for e in examples)
    report.examples = len(kept)
    if report.dropped_rows / report.rows > max_drop_share:
        tokens = report.summary()["tokens"]
        raise MaskingError(
            f"{report.dropped_rows} of {report.rows} rows are longer than max_length {max_length} "
            f"(more than max_drop_share {max_drop_share:.0%}; example lengths p50 {tokens['p50']}, "
            f"p95 {tokens['p95']}, max {tokens['max']}): raise max_length or shorten the episodes"
        )
    if not kept:
        raise MaskingError("no example left to train on")
    return kept, report


def packed_logit_change(model, first: list[int], second: list[int]) -> float:
    """How far `second`'s logits move when it is packed after `first` (position ids restarting at
    0, no padding) instead of read alone, relative to their size. Padding-free batches rely on the
    attention implementation to keep packed sequences apart; where it does not (sdpa and eager
    on the CPU here), every sequence also attends to the ones before it."""
    import torch

    device = next(model.parameters()).device
    packed_ids = torch.tensor([first + second], device=device)
    positions = torch.tensor([list(range(len(first))) + list(range(len(second)))], device=device)
    with torch.no_grad():
        packed = model(input_ids=packed_ids, position_ids=positions).logits[0, len(first) :].float()
        alone = model(input_ids=torch.tensor([second], device=device)).logits[0].float()
    return float((packed - alone).abs().max() / alone.abs().max().clamp(min=1e-6))


def check_packing(model, examples: list[Encoded], tokens: int = 48) -> None:
    if len(examples) < 2:
        return
    change = packed_logit_change(model, examples[0].input_ids[:tokens], examples[1].input_ids[:tokens])
    if change > 0.01:
        implementation = getattr(model.config, "_attn_implementation", "?")
        raise MaskingError(
            f"train.packing: with attention {implementation!r} packed sequences see each other "
            f"(a sequence's logits move by {change:.0%} of their size when another is packed "
            f"before it); set train.packing: false, or train where flash attention is installed"
        )
