"""A tiny random-weight Qwen3 model with a tokenizer trained on local text, built offline.

Used by the tests and the embedded demo: nothing is downloaded. The chat template writes tool
calls the way Qwen models do (`<tool_call>{"name": …, "arguments": …}</tool_call>`), so the same
parser serves the tiny model and real Qwen students; it lists the tools by name and parameters
only (a real template prints their JSON schemas), which keeps the demo's sequences short.

For the demo, `id_tokens` gives the corpus's paper ids two tokens each, "2401." and "00017",
where a byte-level BPE of this size spends five or six on digits: copying an id becomes two
tokens to get right instead of ten. Both arms of a comparison share the tokenizer, so neither
is favoured. Two tokens a paper rather than one keeps the vocabulary small: one token per id
(22,600 tokens) made a training step 8.5 times slower through TRL on the CPU.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from hindsight.log import get_logger

logger = get_logger(__name__)

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]

_SPLIT_SYSTEM = (
    "{% if messages[0].role == 'system' %}{% set system = messages[0].content %}{% set rest = messages[1:] %}"
    "{% else %}{% set system = '' %}{% set rest = messages %}{% endif %}"
)
_SYSTEM_TURN = (
    "{% if system or tools %}<|im_start|>system\n{{ system }}"
    '{% if tools %}\n\n# Tools\nCall a function by writing <tool_call>{"name": NAME, "arguments": {...}}</tool_call>.\n'
    "{% for tool in tools %}- {{ tool.function.name }}({{ tool.function.parameters.properties | list | join(', ') }})\n"
    "{% endfor %}{% endif %}<|im_end|>\n{% endif %}"
)
_TURNS = (
    "{% for m in rest %}"
    "{% if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{% if m.content %}{{ m.content }}{% endif %}"
    '{% for tc in m.tool_calls or [] %}<tool_call>{"name": "{{ tc.function.name }}", "arguments": '
    "{% if tc.function.arguments is string %}{{ tc.function.arguments }}{% else %}{{ tc.function.arguments | tojson }}{% endif %}}"
    "</tool_call>{% endfor %}<|im_end|>\n"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CHAT_TEMPLATE = _SPLIT_SYSTEM + _SYSTEM_TURN + _TURNS
# For a model that has never learned to read instructions: the system turn (instructions and
# tool listing, the same in every conversation) is left out. See build_tiny_qwen.
CHAT_TEMPLATE_WITHOUT_SYSTEM = _SPLIT_SYSTEM + _TURNS


def train_tokenizer(
    texts: Iterable[str],
    vocab_size: int = 2048,
    *,
    special_tokens: list[str] | None = None,
    eos_token: str = "<|im_end|>",
    pad_token: str = "<|endoftext|>",
    bos_token: str | None = None,
    chat_template: str = CHAT_TEMPLATE,
):
    """A byte-level BPE tokenizer (any text round-trips) with a chat template's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens or SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=eos_token,
        pad_token=pad_token,
        bos_token=bos_token,
        chat_template=chat_template,
        padding_side="left",
    )


def id_pieces(ids: Iterable[str]) -> set[str]:
    """ "2401.00017" → {"2401.", "00017"}: an id's head (with its dot) and its tail."""
    pieces = set()
    for paper_id in ids:
        head, dot, tail = paper_id.rpartition(".")
        pieces.update([head + dot, tail] if head else [tail])
    return pieces


def build_tiny_qwen(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    vocab_size: int = 2048,
    max_positions: int = 8192,
    seed: int = 0,
    id_tokens: Iterable[str] = (),
    copy_steps: int = 0,
    id_copy_steps: int = 0,
    id_copy_papers: Sequence = (),
    system_turn: bool = True,
    copy_until: float | None = None,
    id_copy_until: float | None = None,
    query_copy_steps: int = 0,
    query_copy_until: float | None = None,
    id_rehearsal: float = 0.0,
    attempts: int = 1,
) -> Path:
    """Save a random-weight Qwen3ForCausalLM and its tokenizer to `out_dir`; returns the path.
    With `copy_steps`, the model is first taught to copy from its context (`teach_copying`), and
    with `id_copy_steps` then to copy ids out of search results of `id_copy_papers` (`teach_id_copying`).
    With `query_copy_steps`, last, to search a brief's first sentence (`teach_query_copying`, on
    briefs of random words of `texts`; `id_rehearsal` of its examples copy ids of `id_copy_papers`
    again). `copy_until`, `id_copy_until` and `query_copy_until` end
    each phase at that loss, its steps then being the cap; a phase that misses its loss within its
    cap restarts the curriculum from a fresh initialisation (`RESTART_SEED_STRIDE`), up to `attempts`
    in all. What each phase took is written to `curriculum.json` beside the model, with the
    attempts that were given up.

    `system_turn=False` gives a chat template that leaves the system turn out. A model trained
    from scratch cannot follow instructions, and to it a system turn is a few hundred tokens that
    never change; at the demo's size they slow down learning anything about the brief: fine-tuned
    on first turns alone for 300 steps, the demo student opened 9 of 20 training briefs with the
    teacher's query when shown the system turn, 18 of 20 without it, and trained 2.7 times faster
    (benchmarks/first_query.py; docs/experiments/demo-history.md)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out_dir = Path(out_dir)
    texts = list(texts)
    tokenizer = train_tokenizer([*texts, *protocol_texts() * 20], vocab_size, chat_template=chat_template(system_turn))
    tokenizer.add_tokens(sorted(id_pieces(id_tokens)))
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=hidden_size // heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    papers = list(id_copy_papers)
    vocabulary = vocabulary_of(texts) if query_copy_steps else []

    def curriculum(model, seed: int) -> dict:
        phases = {}
        if copy_steps:
            losses = teach_copying(
                model, first_ordinary=len(SPECIAL_TOKENS), steps=copy_steps, seed=seed, until_loss=copy_until
            )
            phases["copying"] = _phase_record(losses, copy_steps, copy_until)
        if id_copy_steps and all(p["reached"] for p in phases.values()):
            losses = teach_id_copying(
                model, tokenizer, papers, steps=id_copy_steps, seed=seed, until_loss=id_copy_until
            )
            phases["copying ids"] = _phase_record(losses, id_copy_steps, id_copy_until)
        if query_copy_steps and all(p["reached"] for p in phases.values()):
            losses = teach_query_copying(
                model,
                tokenizer,
                vocabulary,
                steps=query_copy_steps,
                seed=seed,
                until_loss=query_copy_until,
                rehearsed_papers=papers,
                rehearsal=id_rehearsal,
            )
            phases["copying queries"] = _phase_record(losses, query_copy_steps, query_copy_until)
        return phases

    given_up = []
    for attempt in range(max(1, attempts)):
        # The first attempt keeps `seed` itself, so a curriculum that succeeds at once is unchanged.
        attempt_seed = seed + RESTART_SEED_STRIDE * attempt
        torch.manual_seed(attempt_seed)
        model = Qwen3ForCausalLM(config)
        phases = curriculum(model, attempt_seed)
        missed = [name for name, phase in phases.items() if not phase["reached"]]
        if not missed or attempt + 1 >= attempts:
            break
        given_up.append({"seed": attempt_seed, **phases})
        logger.info(
            f"curriculum: '{missed[0]}' missed its loss within its cap; restarting from a fresh initialisation "
            f"(attempt {attempt + 2} of {attempts})"
        )
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    if phases:
        record = {**phases, "seed": attempt_seed, "given_up": given_up}
        (out_dir / "curriculum.json").write_text(json.dumps(record, indent=1) + "\n")
    return out_dir


# A restarted curriculum's seed is this far from the last one's: clear of the seeds a user runs.
RESTART_SEED_STRIDE = 1000


def protocol_texts() -> list[str]:
    """The deployment prompt, the tool schemas and a call, result and answer of each kind: in
    every conversation, so the tokenizer should encode them compactly, as a real one would."""
    from hindsight.prompts import FULL_TOOL_SYSTEM, SEARCH_ONLY_SYSTEM, USER_TEMPLATE
    from hindsight.protocol import ProtocolConfig, tool_schemas

    return [
        SEARCH_ONLY_SYSTEM,
        FULL_TOOL_SYSTEM,
        USER_TEMPLATE,
        *(json.dumps(tool) for tool in tool_schemas(ProtocolConfig(read_paper=True))),
        json.dumps({"name": "search_papers", "arguments": {"query": "graph attention", "limit": 10}}),
        json.dumps({"name": "submit_answer", "arguments": {"papers": [{"id": "2401.00001", "rationale": "r"}]}}),
        json.dumps(
            {"results": [{"id": "2401.00001", "title": "t", "date": "2024-01-01", "abstract": "a"}], "calls_left": 1}
        ),
        "<|im_start|>system\n<|im_start|>user\n<|im_start|>assistant\n",
    ]


def chat_template(system_turn: bool) -> str:
    return CHAT_TEMPLATE if system_turn else CHAT_TEMPLATE_WITHOUT_SYSTEM


def build_inputs(
    texts: Sequence[str], id_tokens: Iterable[str], id_copy_papers: Sequence, system_turn: bool, settings: dict
) -> dict:
    """Everything a build of `build_tiny_qwen` depends on, as digests and settings: the key a
    shipped build is checked against (hindsight.models.shipped)."""
    from hindsight.models.shipped import digest

    return {
        "texts_sha256": digest(list(texts)),
        "protocol_sha256": digest(protocol_texts()),
        "chat_template_sha256": digest(chat_template(system_turn)),
        "id_pieces_sha256": digest(sorted(id_pieces(id_tokens))),
        "id_copy_papers_sha256": digest([[p.id, p.title] for p in id_copy_papers]),
        **settings,
    }


def _phase_record(losses: list[float], cap: int, until_loss: float | None, window: int = 20) -> dict:
    tail = losses[-window:]
    return {
        "steps": len(losses),
        "cap": cap,
        "until_loss": until_loss,
        "final_mean_loss": round(sum(tail) / len(tail), 4),
        "reached": until_loss is None or sum(tail) / len(tail) <= until_loss,
    }


def teach_copying(
    model,
    *,
    first_ordinary: int,
    steps: int,
    seed: int = 0,
    length: int = 64,
    batch: int = 24,
    learning_rate: float = 2e-3,
    log_every: int = 50,
    until_loss: float | None = None,
) -> list[float]:
    """Train on random token strings shown twice, with the loss on the repeat: the cheapest way
    to give a from-scratch model the induction heads every pretrained LLM has. Without them a
    tiny student cannot copy a brief's words into a query or an id into a submission, and
    fine-tuning on demonstrations teaches it one memorised answer instead (about 200 steps,
    a minute on two cores, take copying accuracy from ~0 to ~99%). Knows nothing of any task."""
    import torch

    generator = torch.Generator().manual_seed(seed)

    def repeated_strings() -> dict:
        tokens = torch.randint(first_ordinary, model.config.vocab_size, (batch, length), generator=generator)
        sequence = torch.cat([tokens, tokens], dim=1)
        labels = sequence.clone()
        labels[:, : length + 1] = -100  # the first repeated token cannot be predicted
        return {"input_ids": sequence, "labels": labels}

    return _train(
        model,
        repeated_strings,
        steps=steps,
        learning_rate=learning_rate,
        log_every=log_every,
        what="copying",
        until_loss=until_loss,
    )


def _train(
    model,
    next_batch,
    *,
    steps: int,
    learning_rate: float,
    log_every: int,
    what: str,
    until_loss: float | None = None,
    window: int = 20,
) -> list[float]:
    """AdamW steps on the batches `next_batch()` makes (model keyword arguments); the losses.
    With `until_loss`, it stops once the mean loss of the last `window` steps is at most that,
    `steps` being the cap: the skill's fall comes at a step that varies with the seed and the
    machine's float kernels, and a fixed count left some bases half-taught."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses: list[float] = []
    for step in range(1, steps + 1):
        loss = model(**next_batch()).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        mean = sum(losses[-window:]) / len(losses[-window:])
        reached = until_loss is not None and step >= window and mean <= until_loss
        if log_every and (step % log_every == 0 or reached):
            logger.info(f"{what} {step}/{steps}: loss {losses[-1]:.3f}")
        if reached:
            logger.info(f"{what}: mean loss of the last {window} steps {mean:.3f} <= {until_loss} at step {step}")
            break
    model.eval()
    return losses


def id_copying_example(tokenizer, papers, rng) -> tuple[list[int], list[int]]:
    """A search result of 3-5 random papers (ids and titles, written as the search tool writes
    them), then a submission of its ids in the order shown: (input ids, labels on the
    submission only)."""
    hits = rng.sample(papers, rng.randint(3, 5))
    content = json.dumps(
        {"results": [{"id": hit.id, "title": hit.title} for hit in hits], "calls_left": rng.randint(1, 7)},
        ensure_ascii=False,
    )
    result = {"role": "tool", "tool_call_id": "c0", "name": "search_papers", "content": content}
    submit = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "submit_answer", "arguments": {"papers": [{"id": hit.id} for hit in hits]}},
            }
        ],
    }
    return _labelled_reply(tokenizer, result, submit)


def teach_id_copying(
    model,
    tokenizer,
    papers,
    *,
    steps: int,
    seed: int = 0,
    batch: int = 16,
    learning_rate: float = 2e-3,
    log_every: int = 50,
    until_loss: float | None = None,
) -> list[float]:
    """Train on search results followed by a submission of the ids they showed: `teach_copying`
    alone leaves a student that copies a brief's words but almost never an id (given an id's
    first token, its second was right 1-9% of the time). The loss stays near 0.8 for a few
    hundred steps, then falls; a single result at a time is what lets it fall at all
    (docs/experiments/demo-history.md, "Teaching a tiny student to copy ids").
    The papers are random and no brief or label is ever shown: it teaches the format of copying,
    not which papers matter."""
    return _train_on_examples(
        model,
        tokenizer,
        lambda rng: id_copying_example(tokenizer, papers, rng),
        steps=steps,
        seed=seed,
        batch=batch,
        learning_rate=learning_rate,
        log_every=log_every,
        what="copying ids",
        until_loss=until_loss,
    )


def query_copying_example(tokenizer, vocabulary: Sequence[str], rng) -> tuple[list[int], list[int]]:
    """A user turn in the deployment format holding a brief of 2-5 sentences of random words, then a
    search_papers call whose query is its first sentence: (input ids, labels on the call only)."""
    import datetime as dt

    from hindsight.policy.scripted import first_sentence_query
    from hindsight.prompts import USER_TEMPLATE

    sentences = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(5, 14))) for _ in range(rng.randint(2, 5))]
    brief = " ".join(sentence[0].upper() + sentence[1:] + "." for sentence in sentences)
    cutoff = dt.date(2015, 1, 1) + dt.timedelta(days=rng.randrange(3650))
    user = {"role": "user", "content": USER_TEMPLATE.format(cutoff=cutoff.isoformat(), brief=brief)}
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "search_papers", "arguments": {"query": first_sentence_query(brief)}},
            }
        ],
    }
    return _labelled_reply(tokenizer, user, call)


def teach_query_copying(
    model,
    tokenizer,
    vocabulary: Sequence[str],
    *,
    steps: int,
    seed: int = 0,
    batch: int = 16,
    learning_rate: float = 2e-3,
    log_every: int = 50,
    until_loss: float | None = None,
    rehearsed_papers: Sequence = (),
    rehearsal: float = 0.0,
) -> list[float]:
    """Train on briefs of random words followed by a search for their first sentence
    (`query_copying_example`). Random strings repeated at a fixed distance can be copied by
    position alone, and a base taught only `teach_copying` and `teach_id_copying` copied its
    brief into its first query for one seed and thread count (95% of 60 dev briefs) and wrote one
    memorised sentence for every brief for another (0 of 60); a sentence that starts wherever the
    brief puts it is copied by content. After this phase the second base copied 60 of 60.
    The words are random and no real brief is shown: it teaches where a first query comes from,
    not what any brief asks.

    With `rehearsal`, that share of the examples are `id_copying_example`s of `rehearsed_papers`:
    taught after the ids with none, the phase undid them (a base's submitted ids came from its
    results 82% of the time without the phase and 13% with it for one seed, 26% and 0% for another)."""

    def example(rng):
        if rehearsal and rng.random() < rehearsal:
            return id_copying_example(tokenizer, rehearsed_papers, rng)
        return query_copying_example(tokenizer, vocabulary, rng)

    return _train_on_examples(
        model,
        tokenizer,
        example,
        steps=steps,
        seed=seed,
        batch=batch,
        learning_rate=learning_rate,
        log_every=log_every,
        what="copying queries",
        until_loss=until_loss,
    )


def _labelled_reply(tokenizer, context: dict, reply: dict) -> tuple[list[int], list[int]]:
    """(input ids, labels) of `context` then `reply` in the chat template, the loss on the reply only."""
    prompt = tokenizer.apply_chat_template([context], add_generation_prompt=True, tokenize=False)
    full = tokenizer.apply_chat_template([context, reply], tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    full_ids = tokenizer(full, add_special_tokens=False)["input_ids"]
    return full_ids, [-100] * len(prompt_ids) + full_ids[len(prompt_ids) :]


def _train_on_examples(
    model,
    tokenizer,
    make_example,
    *,
    steps: int,
    seed: int,
    batch: int,
    learning_rate: float,
    log_every: int,
    what: str,
    until_loss: float | None,
) -> list[float]:
    """`_train` on left-padded batches of `make_example(rng)`, the rng seeded with `seed`."""
    import random

    rng = random.Random(seed)
    return _train(
        model,
        lambda: _left_padded([make_example(rng) for _ in range(batch)], tokenizer.pad_token_id),
        steps=steps,
        learning_rate=learning_rate,
        log_every=log_every,
        what=what,
        until_loss=until_loss,
    )


def _left_padded(examples: list[tuple[list[int], list[int]]], pad: int) -> dict:
    import torch

    longest = max(len(ids) for ids, _ in examples)
    return {
        "input_ids": torch.tensor([[pad] * (longest - len(ids)) + ids for ids, _ in examples]),
        "attention_mask": torch.tensor([[0] * (longest - len(ids)) + [1] * len(ids) for ids, _ in examples]),
        "labels": torch.tensor([[-100] * (longest - len(lab)) + lab for _, lab in examples]),
    }


def vocabulary_of(texts: Iterable[str], limit: int = 5000) -> list[str]:
    """The most frequent lower-case words of `texts`: what the random briefs are made of."""
    from collections import Counter

    counts = Counter(word for text in texts for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 1)
    return sorted(word for word, _ in counts.most_common(limit))


def main(argv: list[str] | None = None) -> int:
    """python -m hindsight.models.tiny --out outputs/tiny-qwen [--data world]: a tiny base model
    with a tokenizer trained on the benchmark's paper text (offline, seconds)."""
    from hindsight.log import cli_logging

    cli_logging()
    import argparse
    import shutil
    import sys
    import time

    from hindsight.data import load_benchmark
    from hindsight.models.shipped import StaleModel, check, seal

    parser = argparse.ArgumentParser(prog="python -m hindsight.models.tiny", description=main.__doc__)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--data", default="world", help="benchmark whose corpus text trains the tokenizer")
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--id-tokens", action="store_true", help="two tokens per paper id of the corpus")
    parser.add_argument("--copy-steps", type=int, default=0, help="first teach the model to copy (see teach_copying)")
    parser.add_argument(
        "--id-copy-steps",
        type=int,
        default=0,
        help="then to copy ids out of search results of the corpus's papers (see teach_id_copying)",
    )
    parser.add_argument("--copy-until", type=float, help="end copying at this mean loss (--copy-steps is the cap)")
    parser.add_argument(
        "--id-copy-until", type=float, help="end copying ids at this mean loss (--id-copy-steps is the cap)"
    )
    parser.add_argument(
        "--query-copy-steps",
        type=int,
        default=0,
        help="last, to search a brief's first sentence (see teach_query_copying)",
    )
    parser.add_argument(
        "--query-copy-until", type=float, help="end copying queries at this mean loss (the steps are the cap)"
    )
    parser.add_argument(
        "--id-rehearsal",
        type=float,
        default=0.0,
        help="share of the query phase's examples that copy ids again (see teach_query_copying)",
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=1,
        help="restart the curriculum from a fresh initialisation when a phase misses its loss, this many tries in all",
    )
    parser.add_argument(
        "--no-system-turn", action="store_true", help="a chat template without the system turn (see build_tiny_qwen)"
    )
    parser.add_argument(
        "--seal",
        action="store_true",
        help="write provenance.json: the build's inputs, its files' sha256, where it was built",
    )
    parser.add_argument(
        "--from-init",
        type=Path,
        metavar="DIR",
        help="build nothing: copy DIR to --out if it was sealed by a build with these very "
        "inputs and settings (exit 3 naming what differs otherwise)",
    )
    args = parser.parse_args(argv)
    corpus, _, _ = load_benchmark(args.data)
    texts = [f"{p.title}\n{p.abstract}" for p in corpus.papers[:5000]]
    id_tokens = [p.id for p in corpus.papers] if args.id_tokens else []
    settings = {key: value for key, value in vars(args).items() if key not in ("out", "data", "seal", "from_init")}
    inputs = (
        build_inputs(texts, id_tokens, corpus.papers, not args.no_system_turn, settings)
        if args.seal or args.from_init
        else None
    )
    if args.from_init:
        try:
            record = check(args.from_init, inputs)
        except StaleModel as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3
        shutil.rmtree(args.out, ignore_errors=True)
        shutil.copytree(args.from_init, args.out)
        print(
            f"tiny Qwen3 at {args.out}: copied from {args.from_init}, built {record['built']['date']} on "
            f"{record['built']['cpu']} in {record['built']['seconds']} s (its provenance.json)"
        )
        return 0
    start = time.monotonic()
    path = build_tiny_qwen(
        args.out,
        texts,
        hidden_size=args.hidden_size,
        layers=args.layers,
        seed=args.seed,
        id_tokens=id_tokens,
        copy_steps=args.copy_steps,
        id_copy_steps=args.id_copy_steps,
        id_copy_papers=corpus.papers,
        system_turn=not args.no_system_turn,
        copy_until=args.copy_until,
        id_copy_until=args.id_copy_until,
        query_copy_steps=args.query_copy_steps,
        query_copy_until=args.query_copy_until,
        id_rehearsal=args.id_rehearsal,
        attempts=args.attempts,
    )
    if args.seal:
        seal(
            path,
            inputs,
            ["python", "-m", "hindsight.models.tiny", *(argv if argv is not None else sys.argv[1:])],
            time.monotonic() - start,
        )
    print(f"tiny Qwen3 ({args.layers} layers, hidden {args.hidden_size}) at {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
