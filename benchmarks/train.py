"""Training throughput: padded batches vs padding-free batches on the same examples, one run;
with --threads-arms, also one example a step under 1 and under 2 torch threads; with
--precision-arms, padded batches in float32 against bf16 autocast (what `precision: bf16` and, on a
CPU with AMX, `auto` train in), with the same batch's loss under both.

    python -m benchmarks.train --json benchmarks/results/train.json
    python -m benchmarks.train --model ~/.cache/hindsight-models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        --lora-rank 16 --targets 12 --batch-size 2 --steps 3 --threads-arms --json benchmarks/results/train-qwen05.json
    python -m benchmarks.train --model ~/.cache/hindsight-models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        --lora-rank 16 --targets 12 --batch-size 2 --steps 3 --precision-arms --json benchmarks/results/train-bf16-qwen05.json

The examples are a real SFT set (the scripted teacher on the synthetic world, masked by
hindsight/masking.py) for a tiny Qwen3, or for --model (a .gguf file or a folder, with
LoRA of --lora-rank on every linear layer and the protocol of recipes/qwen05_world.yaml); every arm uses TRL's
collator (padding_free False / True), the same seed, order and optimiser, and reports token
throughput and the loss. First, a check that the two collations give the same loss on the same
batch: padding-free batches rely on position ids to keep sequences apart, and an attention
implementation that ignored them would mix sequences silently.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish, machine


def make_examples(work: Path, targets: int, model: str | None):
    from hindsight.data import load_benchmark
    from hindsight.distill import run_distillation
    from hindsight.models.tiny import build_tiny_qwen
    from hindsight.stages import read_sft_set
    from hindsight.train.data import encode_rows

    recipe = work / "recipe.yaml"
    # a real model gets the real-Qwen experiment's protocol (recipes/qwen05_world.yaml): shorter episodes
    protocol = {"k": 5, "budget": 8, "fields": ["id", "title"]} if model else {"budget": 12, "abstract_words": 20}
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": protocol,
                "distill": {"out_dir": str(work / "distill"), "candidates": 2, "max_targets": targets},
            }
        )
    )
    run_distillation([str(recipe)])
    if model:
        from hindsight.models.gguf import resolve_model

        model_dir = resolve_model(model)
    else:
        corpus, _, _ = load_benchmark("world")
        model_dir = build_tiny_qwen(work / "tiny", [f"{p.title}\n{p.abstract}" for p in corpus.papers[:2000]])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    examples, _ = encode_rows(read_sft_set(work / "distill" / "sft.jsonl"), tokenizer, 8192, 0.05, False)
    return model_dir, tokenizer, examples


def batches(examples, size):
    return [
        [{"input_ids": e.input_ids, "labels": e.labels} for e in examples[i : i + size]]
        for i in range(0, len(examples), size)
    ]


def load_model(model_dir, lora_rank: int):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if lora_rank:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model, LoraConfig(r=lora_rank, lora_alpha=2 * lora_rank, lora_dropout=0.0, target_modules="all-linear")
        )
    return model


def run(
    model_dir,
    tokenizer,
    examples,
    padding_free: bool,
    batch_size: int,
    steps: int,
    lora_rank: int = 0,
    threads: int | None = None,
    bf16: bool = False,
) -> dict:
    import torch
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    if threads:
        torch.set_num_threads(threads)
    model = load_model(model_dir, lora_rank).train()
    collate = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id, padding_free=padding_free)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4 if lora_rank else 1e-3)
    work = batches(examples, batch_size)[:steps]
    trained = sum(sum(label != -100 for label in ex["labels"]) for batch in work for ex in batch)
    real = sum(len(ex["input_ids"]) for batch in work for ex in batch)
    losses, start = [], time.perf_counter()
    for batch in work:
        # what accelerate does for mixed precision bf16: the forward under autocast, weights float32
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**collate(batch)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "tokens_per_s": real / seconds,
        "trained_tokens_per_s": trained / seconds,
        "first_loss": losses[0],
        "final_loss": losses[-1],
        "steps": len(work),
        "losses": losses,
    }


def same_loss(model_dir, tokenizer, examples, batch_size: int) -> dict[str, float]:
    """The first batch's loss at the starting weights: padded, padding-free, and padded under bf16
    autocast (each against the padded float32 loss: the collations' check and the precision's)."""
    import torch
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    model = load_model(model_dir, 0).eval()
    batch = batches(examples, batch_size)[0]
    padded = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id)(batch)
    free = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id, padding_free=True)(batch)
    with torch.no_grad():
        losses = {"padded": model(**padded).loss, "padding_free": model(**free).loss}
        with torch.autocast("cpu", dtype=torch.bfloat16):
            losses["bf16_autocast"] = model(**padded).loss
    return {name: float(loss) for name, loss in losses.items()}


BF16_LOSS_TOLERANCE = 0.02  # relative: bf16 keeps 8 bits of mantissa, a loss differs in its third digit


def precision_report(report: dict, losses: dict[str, float]) -> str:
    """bf16 autocast against float32 (the padded arm): the speed ratio and the check that the same
    batch's loss at the same weights (`losses`, from same_loss) agrees within BF16_LOSS_TOLERANCE,
    then how far the steps' losses drifted apart."""
    full, autocast = losses["padded"], losses["bf16_autocast"]
    drift = max(abs(a - b) / abs(b) for a, b in zip(report["bf16 autocast"]["losses"], report["padded"]["losses"]))
    report["bf16"] = {
        "speedup": report["bf16 autocast"]["tokens_per_s"] / report["padded"]["tokens_per_s"],
        "same_batch_loss": {"float32": full, "bf16_autocast": autocast},
        "relative_difference": abs(autocast - full) / abs(full),
        "tolerance": BF16_LOSS_TOLERANCE,
        "largest_step_loss_drift": drift,
    }
    report["bf16"]["agrees"] = report["bf16"]["relative_difference"] <= BF16_LOSS_TOLERANCE
    return (
        f"bf16 autocast / float32: **{report['bf16']['speedup']:.2f}×**. Same batch, same weights: loss "
        f"{full:.4f} float32 vs {autocast:.4f} bf16 autocast ({report['bf16']['relative_difference']:.2%} apart, "
        f"tolerance {BF16_LOSS_TOLERANCE:.0%}: {'within' if report['bf16']['agrees'] else 'OUTSIDE'}); the "
        f"training steps' losses at most {drift:.2%} apart."
    )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--model", help="a real model (.gguf file or folder) instead of a tiny random Qwen3")
    parser.add_argument("--lora-rank", type=int, default=0, help="0: full fine-tuning")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="for the padding arms")
    parser.add_argument("--threads-arms", action="store_true", help="also time batch 1 under 1 and 2 threads")
    parser.add_argument(
        "--precision-arms", action="store_true", help="also time the padded batches under bf16 autocast"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-train-"))
    model_dir, tokenizer, examples = make_examples(work, args.targets, args.model)
    losses = same_loss(model_dir, tokenizer, examples, args.batch_size)
    padded_loss, free_loss = losses["padded"], losses["padding_free"]
    student = f"{Path(args.model).name if args.model else 'tiny Qwen3'}, " + (
        f"LoRA r {args.lora_rank}" if args.lora_rank else "full fine-tuning"
    )
    report = {
        "examples": len(examples),
        "lengths": [len(e.input_ids) for e in examples],
        "student": student,
        "same_batch_loss": {"padded": padded_loss, "padding_free": free_loss},
        "machine": machine(),
    }
    # name: (padding_free, batch size, threads, bf16 autocast)
    arms = {
        "padded": (False, args.batch_size, args.threads, False),
        "padding_free": (True, args.batch_size, args.threads, False),
    }
    if args.threads_arms:
        arms |= {"1 thread": (False, 1, 1, False), "2 threads": (False, 1, 2, False)}
    if args.precision_arms:
        arms["bf16 autocast"] = (False, args.batch_size, args.threads, True)
    for name, (padding_free, batch_size, threads, bf16) in arms.items():
        report[name] = run(
            model_dir, tokenizer, examples, padding_free, batch_size, args.steps, args.lora_rank, threads, bf16
        )
        print(name, json.dumps(report[name]), flush=True)
    report["speedup"] = report["padding_free"]["tokens_per_s"] / report["padded"]["tokens_per_s"]
    shown = report["lengths"][: args.batch_size * args.steps]
    lines = ["| arm | tokens/s | loss first → last |", "|---|---:|---:|"]
    lines += [
        f"| {name.replace('_', '-')}{f', batch {args.batch_size}' if arms[name][1] == args.batch_size else ', batch 1'} "
        f"| {report[name]['tokens_per_s']:.0f} | {report[name]['first_loss']:.3f} → {report[name]['final_loss']:.3f} |"
        for name in arms
    ]
    lines.append(
        f"\nPadding-free / padded: **{report['speedup']:.2f}×**; {student}, examples of "
        f"{min(shown)}–{max(shown)} tokens, {report['padded']['steps']} steps an arm, CPU. Same batch, same weights: "
        f"loss {padded_loss:.4f} padded vs {free_loss:.4f} padding-free."
    )
    if args.threads_arms:
        report["threads_speedup"] = report["2 threads"]["tokens_per_s"] / report["1 thread"]["tokens_per_s"]
        lines.append(f"2 threads / 1 thread: **{report['threads_speedup']:.2f}×**.")
    if args.precision_arms:
        lines.append(precision_report(report, losses))
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
