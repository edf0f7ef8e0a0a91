"""The demo's tiny student: paper ids as two tokens, a template without the system turn, and
learning to copy before any task."""

import datetime as dt

import pytest

from hindsight.models.tiny import build_tiny_qwen, id_pieces, teach_copying
from hindsight.prompts import initial_messages
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.schema import Task
from tests.helpers import random_papers

pytestmark = pytest.mark.slow


def test_id_pieces_split_head_and_tail():
    assert id_pieces(["2401.00017", "2401.00018", "cs/0112017"]) == {"2401.", "00017", "00018", "cs/0112017"}


def test_with_id_tokens_an_id_is_two_tokens_and_round_trips(tmp_path):
    from transformers import AutoTokenizer

    papers = random_papers(200, seed=3)
    path = build_tiny_qwen(tmp_path / "m", [p.title for p in papers], id_tokens=[p.id for p in papers])
    tokenizer = AutoTokenizer.from_pretrained(path)
    for paper in papers[:20]:
        text = f'{{"id": "{paper.id}"}}'
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == text
        assert len(tokenizer.tokenize(paper.id)) == 2


def test_teaching_to_copy_makes_a_random_model_copy_unseen_strings(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    path = build_tiny_qwen(tmp_path / "m", [p.title for p in random_papers(200, seed=4)], hidden_size=64, layers=2)
    model = AutoModelForCausalLM.from_pretrained(path)

    def copy_accuracy() -> float:
        tokens = torch.randint(9, model.config.vocab_size, (16, 32), generator=torch.Generator().manual_seed(99))
        sequence = torch.cat([tokens, tokens], dim=1)
        with torch.no_grad():
            predicted = model(input_ids=sequence).logits[:, 32:-1].argmax(-1)
        return (predicted == sequence[:, 33:]).float().mean().item()

    before = copy_accuracy()
    losses = teach_copying(model, first_ordinary=9, steps=300, length=32, batch=16, log_every=0)
    after = copy_accuracy()
    assert before < 0.05 and after > 0.9, (before, after, losses[-1])


def test_without_the_system_turn_a_conversation_renders_the_same_turns_and_nothing_else(tmp_path):
    from transformers import AutoTokenizer

    texts = [p.title for p in random_papers(100, seed=5)]
    with_system = AutoTokenizer.from_pretrained(build_tiny_qwen(tmp_path / "a", texts))
    without = AutoTokenizer.from_pretrained(build_tiny_qwen(tmp_path / "b", texts, system_turn=False))
    messages = initial_messages(Task("t", "Faster graph attention.", dt.date(2021, 1, 1))) + [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "search_papers", "arguments": {"query": "sparse attention"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "name": "search_papers", "content": '{"results": []}'},
    ]
    tools = tool_schemas(ProtocolConfig())
    full = with_system.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
    short = without.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
    assert full.startswith("<|im_start|>system\n" + messages[0]["content"])
    assert "<|im_start|>system" not in short and messages[0]["content"] not in short
    assert full.endswith(short) and short.startswith("<|im_start|>user\nLiterature cutoff")


def test_a_query_copying_example_trains_only_the_search_of_the_first_sentence(tmp_path):
    import random

    from transformers import AutoTokenizer

    from hindsight.models.tiny import query_copying_example, vocabulary_of

    papers = random_papers(200, seed=5)
    path = build_tiny_qwen(tmp_path / "m", [p.title for p in papers], system_turn=False)
    tokenizer = AutoTokenizer.from_pretrained(path)
    vocabulary = vocabulary_of(p.title for p in papers)
    ids, labels = query_copying_example(tokenizer, vocabulary, random.Random(0))
    prompt = tokenizer.decode([i for i, label in zip(ids, labels) if label == -100])
    trained = tokenizer.decode([label for label in labels if label != -100])
    brief = prompt.split("Research brief:\n", 1)[1].split("<|im_end|>")[0]
    first_sentence = brief.split(". ")[0].rstrip(".")
    assert trained.startswith('<tool_call>{"name": "search_papers"')
    assert f'"query": "{first_sentence}"' in trained and trained.endswith("<|im_end|>\n")
    assert all(word in vocabulary for word in brief.lower().replace(".", "").split())


@pytest.mark.parametrize("rehearsal", [0.0, 0.25])
def test_the_query_phase_rehearses_copying_ids_in_the_share_asked(tmp_path, monkeypatch, rehearsal):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import hindsight.models.tiny as tiny

    papers = random_papers(200, seed=5)
    path = build_tiny_qwen(
        tmp_path / "m", [p.title for p in papers], system_turn=False, id_tokens=[p.id for p in papers]
    )
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path)
    batches = []
    monkeypatch.setattr(tiny, "_train", lambda model, next_batch, **kw: batches.append(next_batch()) or [0.0])
    tiny.teach_query_copying(
        model,
        tokenizer,
        tiny.vocabulary_of(p.title for p in papers),
        steps=1,
        batch=200,
        rehearsed_papers=papers,
        rehearsal=rehearsal,
    )
    trained = [tokenizer.decode([t for t in row if t != -100]) for row in batches[0]["labels"].tolist()]
    submissions = sum('"name": "submit_answer"' in text for text in trained)
    assert submissions + sum('"name": "search_papers"' in text for text in trained) == 200
    assert (submissions == 0) if rehearsal == 0 else (30 <= submissions <= 70)  # 50 expected


def _weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_a_phase_that_misses_its_loss_restarts_the_curriculum_from_a_fresh_initialisation(tmp_path):
    import json

    from hindsight.models.tiny import RESTART_SEED_STRIDE

    texts = [p.title for p in random_papers(100, seed=5)]
    # a loss of zero is never reached: every attempt misses, and the last one is kept
    path = build_tiny_qwen(
        tmp_path / "m", texts, hidden_size=32, layers=1, seed=7, copy_steps=25, copy_until=0.0, attempts=3
    )
    curriculum = json.loads((path / "curriculum.json").read_text())
    assert [attempt["seed"] for attempt in curriculum["given_up"]] == [7, 7 + RESTART_SEED_STRIDE]
    assert curriculum["seed"] == 7 + 2 * RESTART_SEED_STRIDE
    assert not curriculum["copying"]["reached"] and curriculum["copying"]["steps"] == 25


def test_a_curriculum_that_succeeds_at_once_is_the_same_whatever_attempts_it_was_allowed(tmp_path):
    import json

    import torch

    texts = [p.title for p in random_papers(100, seed=5)]
    # a loss every first step beats: reached at once
    kwargs = dict(hidden_size=32, layers=1, seed=7, copy_steps=25, copy_until=100.0)
    once = build_tiny_qwen(tmp_path / "once", texts, **kwargs)
    allowed = build_tiny_qwen(tmp_path / "allowed", texts, attempts=3, **kwargs)
    curriculum = json.loads((allowed / "curriculum.json").read_text())
    assert curriculum["given_up"] == [] and curriculum["seed"] == 7 and curriculum["copying"]["reached"]
    a, b = _weights(once), _weights(allowed)
    assert a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)
