"""Training throughput: padded batches vs padding-free batches on the same examples, one run.

    python benchmarks/train.py --json benchmarks/results/train.json

The examples are a real SFT set (the scripted teacher on the synthetic world, masked by
train/masking.py) for a tiny Qwen3; both arms use TRL's collator (padding_free False / True),
the same seed, order and optimiser, and report trained-token throughput and the loss. First, a
check that the two collations give the same loss on the same batch: padding-free batches rely
on position ids to keep sequences apart, and an attention implementation that ignored them
would mix sequences silently.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.common import finish  # noqa: E402


def make_examples(work: Path, targets: int):
    from distill.replay import main as replay_main
    from distill.select import main as select_main
    from distill.teacher import main as teacher_main
    from hindsight.data import load_benchmark
    from hindsight.models.tiny import build_tiny_qwen
    from train.data import encode_rows, read_rows

    recipe = work / "recipe.yaml"
    recipe.write_text(json.dumps({"data": {"source": "world"}, "protocol": {"budget": 12, "abstract_words": 20},
                                  "distill": {"out_dir": str(work / "distill"), "candidates": 2, "max_targets": targets}}))
    for step in (teacher_main, replay_main, select_main):
        assert step([str(recipe)]) == 0
    corpus, _, _ = load_benchmark("world")
    model_dir = build_tiny_qwen(work / "tiny", [f"{p.title}\n{p.abstract}" for p in corpus.papers[:2000]])
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    examples, _ = encode_rows(read_rows(work / "distill" / "sft.jsonl"), tokenizer, 8192, 0.05, False)
    return model_dir, tokenizer, examples


def batches(examples, size):
    return [[{"input_ids": e.input_ids, "labels": e.labels} for e in examples[i:i + size]]
            for i in range(0, len(examples), size)]


def run(model_dir, tokenizer, examples, padding_free: bool, batch_size: int, steps: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir).train()
    collate = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id, padding_free=padding_free)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    work = batches(examples, batch_size)[:steps]
    trained = sum(sum(label != -100 for label in ex["labels"]) for batch in work for ex in batch)
    real = sum(len(ex["input_ids"]) for batch in work for ex in batch)
    losses, start = [], time.perf_counter()
    for batch in work:
        loss = model(**collate(batch)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "tokens_per_s": real / seconds, "trained_tokens_per_s": trained / seconds,
            "first_loss": losses[0], "final_loss": losses[-1], "steps": len(work)}


def same_loss(model_dir, tokenizer, examples) -> tuple[float, float]:
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    batch = batches(examples, 4)[0]
    with torch.no_grad():
        padded = model(**DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id)(batch)).loss
        free = model(**DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id, padding_free=True)(batch)).loss
    return float(padded), float(free)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-train-"))
    model_dir, tokenizer, examples = make_examples(work, args.targets)
    padded_loss, free_loss = same_loss(model_dir, tokenizer, examples)
    report = {"examples": len(examples), "lengths": sorted(len(e.input_ids) for e in examples),
              "same_batch_loss": {"padded": padded_loss, "padding_free": free_loss},
              "machine": f"{platform.machine()}, Python {platform.python_version()}, CPU"}
    report["padded"] = run(model_dir, tokenizer, examples, False, args.batch_size, args.steps)
    report["padding_free"] = run(model_dir, tokenizer, examples, True, args.batch_size, args.steps)
    report["speedup"] = report["padding_free"]["tokens_per_s"] / report["padded"]["tokens_per_s"]
    lengths = report["lengths"]
    report["markdown"] = (
        "| batches | tokens/s | loss first → last |\n|---|---:|---:|\n"
        + "".join(f"| {name.replace('_', '-')} | {report[name]['tokens_per_s']:.0f} | "
                  f"{report[name]['first_loss']:.3f} → {report[name]['final_loss']:.3f} |\n" for name in ("padded", "padding_free"))
        + f"\nPadding-free / padded: **{report['speedup']:.2f}×**; {len(examples)} examples of "
          f"{lengths[0]}–{lengths[-1]} tokens, batch {args.batch_size}, {args.steps} steps, tiny Qwen3 on the CPU. "
          f"Same batch, same weights: loss {padded_loss:.4f} padded vs {free_loss:.4f} padding-free.")
    return finish(report, args.json)


if __name__ == "__main__":
    main()
