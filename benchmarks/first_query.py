"""Does a student learn which query a brief calls for? A diagnostic for the demo (docs/experiments/demo-history.md).

    python -m benchmarks.first_query --model outputs/demo/base/model --sft outputs/demo/distill/sft.jsonl \
        --template without-system --steps 300 --json benchmarks/results/first_query.json

It fine-tunes the model on the *first keyword turns* of the selected demonstrations only (brief →
the teacher's first search after its opening one, which repeats the brief's first sentence and
is skipped) and, every `--every` steps, asks it greedily for its first query on training and eval
briefs of the synthetic world. A query counts as learned when it equals a teacher's first
keyword query for some training target of the same subproblem (the world's labels say which).
That isolates the one thing hindsight SFT must teach in the world — which mechanism a problem
needs — from selection, ranking and the length of whole episodes.

Arms (one per run, same model, data, order and seed): the chat template with or without the
system turn (`--template`), and full fine-tuning or LoRA (`--lora-rank`).
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import random
import time
from pathlib import Path

from benchmarks.common import finish
from hindsight.stages import SFTRow


def first_keyword_turns(rows: list[SFTRow]) -> list[tuple[SFTRow, str]]:
    """(row, query) for each row: the row as its opening messages followed directly by its first
    search that is not the brief's first sentence, and that search's query (rows without one are
    left out)."""
    from hindsight.policy.scripted import first_sentence_query
    from hindsight.prompts import brief_from_messages

    cut = []
    for row in rows:
        messages = row.messages
        opening = [m for m in messages[:2] if m["role"] in ("system", "user")]
        sentence = first_sentence_query(brief_from_messages(messages))
        for message in messages:
            call = (message.get("tool_calls") or [{}])[0].get("function", {}) if message["role"] == "assistant" else {}
            arguments = call.get("arguments")
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments or {}
            if call.get("name") == "search_papers" and arguments.get("query") != sentence:
                cut.append((SFTRow([*opening, message], row.tools), arguments.get("query")))
                break
    return cut


def first_query(turn_text: str) -> str | None:
    from hindsight.policy.parsing import parse_tool_calls

    calls = parse_tool_calls(turn_text).calls
    return calls[0].arguments.get("query") if calls and calls[0].name == "search_papers" else None


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--sft", required=True, type=Path, help="the selected demonstrations (sft.jsonl)")
    parser.add_argument("--data", default="world", help="a world source: the subproblem labels come from it")
    parser.add_argument("--template", choices=["model", "with-system", "without-system"], default="model")
    parser.add_argument("--lora-rank", type=int, default=0, help="0: full fine-tuning")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--briefs", type=int, default=20, help="briefs probed per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hindsight.data import load_benchmark
    from hindsight.models.tiny import CHAT_TEMPLATE, CHAT_TEMPLATE_WITHOUT_SYSTEM
    from hindsight.prompts import brief_from_messages, initial_messages
    from hindsight.stages import read_sft_set
    from hindsight.train.data import encode_rows

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    _, instances, _ = load_benchmark(args.data)
    subproblem = {inst.brief: inst.audit["subproblem"] for inst in instances}
    turns = first_keyword_turns(read_sft_set(args.sft))
    rows = [row for row, _ in turns]
    wanted = collections.defaultdict(set)  # subproblem -> the teacher's first keyword queries
    for row, query in turns:
        wanted[subproblem[brief_from_messages(row.messages)]].add(query)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if args.template != "model":
        tokenizer.chat_template = CHAT_TEMPLATE if args.template == "with-system" else CHAT_TEMPLATE_WITHOUT_SYSTEM
    model = AutoModelForCausalLM.from_pretrained(args.model)
    if args.lora_rank:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model,
            LoraConfig(
                r=args.lora_rank,
                lora_alpha=2 * args.lora_rank,
                target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
            ),
        )
    examples, lengths = encode_rows(rows, tokenizer, max_length=100_000, max_drop_share=0.0, enable_thinking=False)
    tools = rows[0].tools
    probes = {split: [inst for inst in instances if inst.split == split][: args.briefs] for split in ("train", "eval")}

    def learned_share(split: str) -> tuple[float, int]:
        model.eval()
        hits, queries = 0, set()
        for inst in probes[split]:
            prompt = tokenizer.apply_chat_template(
                initial_messages(inst.task()),
                tools=tools,
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
            with torch.no_grad():
                out = model.generate(**prompt, max_new_tokens=48, do_sample=False, pad_token_id=tokenizer.pad_token_id)
            query = first_query(tokenizer.decode(out[0, prompt["input_ids"].shape[1] :]))
            queries.add(query)
            hits += query in wanted[inst.audit["subproblem"]]
        model.train()
        return hits / len(probes[split]), len(queries)

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.learning_rate)
    pad = tokenizer.pad_token_id
    curve, start = [], time.perf_counter()
    model.train()
    for step in range(1, args.steps + 1):
        batch = rng.sample(examples, args.batch_size)
        width = max(len(e.input_ids) for e in batch)
        input_ids = torch.tensor([[pad] * (width - len(e.input_ids)) + e.input_ids for e in batch])
        labels = torch.tensor([[-100] * (width - len(e.labels)) + e.labels for e in batch])
        attention = torch.tensor([[0] * (width - len(e.input_ids)) + [1] * len(e.input_ids) for e in batch])
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % args.every == 0 or step == args.steps:
            (train_share, train_distinct), (eval_share, _) = learned_share("train"), learned_share("eval")
            curve.append(
                {
                    "step": step,
                    "loss": round(loss.item(), 4),
                    "train_briefs_learned": train_share,
                    "eval_briefs_learned": eval_share,
                    "distinct_train_queries": train_distinct,
                    "seconds": round(time.perf_counter() - start, 1),
                }
            )
            print(json.dumps(curve[-1]), flush=True)
    last = curve[-1]
    report = {
        "model": args.model,
        "sft": str(args.sft),
        "template": args.template,
        "lora_rank": args.lora_rank,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "tokens_per_example": lengths.summary()["tokens"]["p50"],
        "curve": curve,
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "markdown": f"| {args.template} | {'LoRA r' + str(args.lora_rank) if args.lora_rank else 'full'} "
        f"| {lengths.summary()['tokens']['p50']} | {last['step']} "
        f"| {last['train_briefs_learned']:.0%} | {last['eval_briefs_learned']:.0%} |",
    }
    return finish(report, args.json)


if __name__ == "__main__":
    main()
