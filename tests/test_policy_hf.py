"""The transformers backend on a tiny random-weight Qwen3."""

import datetime as dt

import pytest

from hindsight.corpus import Corpus
from hindsight.policy.base import Conversation
from hindsight.policy.hf import AdapterError, HFPolicy
from hindsight.prompts import initial_messages
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.runner import run_episodes
from hindsight.schema import Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import keyed, random_papers

TOOLS = tool_schemas(ProtocolConfig())


def conversations(n):
    tasks = [Task(f"t{i}", "graph attention " * (1 + i), dt.date(2021, 1, 1)) for i in range(n)]
    return [Conversation(task, initial_messages(task)) for task in tasks]


def test_batched_generation_equals_one_at_a_time(tiny_model):
    policy = HFPolicy(str(tiny_model), max_new_tokens=12)
    batch = conversations(4)
    together = policy.act(batch, TOOLS)
    alone = [policy.act([conv], TOOLS)[0] for conv in batch]
    assert [t.text for t in together] == [t.text for t in alone]
    assert all(t.prompt_tokens > 100 and 0 < t.completion_tokens <= 12 for t in together)


def test_sampling_is_seedable(tiny_model):
    first = HFPolicy(str(tiny_model), temperature=1.0, max_new_tokens=10, seed=3).act(conversations(2), TOOLS)
    second = HFPolicy(str(tiny_model), temperature=1.0, max_new_tokens=10, seed=3).act(conversations(2), TOOLS)
    other = HFPolicy(str(tiny_model), temperature=1.0, max_new_tokens=10, seed=4).act(conversations(2), TOOLS)
    assert [t.text for t in first] == [t.text for t in second] != [t.text for t in other]


def test_a_prompt_past_the_context_is_an_overflow_not_a_crash(tiny_model):
    policy = HFPolicy(str(tiny_model), max_new_tokens=8, max_context=64)
    turns = policy.act(conversations(1), TOOLS)
    assert turns[0].failure.startswith("context_overflow")


def test_random_model_output_ends_as_malformed_steps(tiny_model, tmp_path):
    backend = BM25Backend(Corpus(random_papers(100)))
    tasks = [conv.task for conv in conversations(3)]
    run_episodes(
        HFPolicy(str(tiny_model), max_new_tokens=16),
        keyed(tasks),
        backend,
        ProtocolConfig(budget=5),
        tmp_path / "run",
        progress=False,
    )
    import json

    rows = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and {r["status"] for r in rows} <= {"malformed", "budget_exhausted"}
    assert all(step["tool"] == "(unparsed)" and step["error"] for r in rows for step in r["steps"])


def make_adapter(tiny_model, out, trained: bool):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model),
        LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"]),
    )
    if trained:
        with torch.no_grad():
            for name, param in model.named_parameters():
                if "lora_B" in name:
                    param.normal_(0, 0.5)
    model.save_pretrained(out)
    return out


def test_an_adapter_that_changes_nothing_is_refused(tiny_model, tmp_path):
    untrained = make_adapter(tiny_model, tmp_path / "zero", trained=False)
    with pytest.raises(AdapterError, match="does not change the model's next-token logits"):
        HFPolicy(str(tiny_model), adapter=str(untrained))
    trained = make_adapter(tiny_model, tmp_path / "trained", trained=True)
    policy = HFPolicy(str(tiny_model), adapter=str(trained), max_new_tokens=4)
    assert policy.adapter_logit_change > 1e-3 and policy.describe()["adapter"] == str(trained)


def test_a_run_is_not_resumed_with_an_adapter_retrained_in_place(tiny_model, tmp_path):
    from hindsight.runner import RunDirError

    backend = BM25Backend(Corpus(random_papers(100)))
    tasks = [conv.task for conv in conversations(2)]
    adapter = make_adapter(tiny_model, tmp_path / "adapter", trained=True)
    policy = HFPolicy(str(tiny_model), adapter=str(adapter), max_new_tokens=4)
    run_episodes(policy, keyed(tasks[:1]), backend, ProtocolConfig(budget=2), tmp_path / "run", progress=False)
    make_adapter(tiny_model, adapter, trained=True)  # same path, new weights
    retrained = HFPolicy(str(tiny_model), adapter=str(adapter), max_new_tokens=4)
    with pytest.raises(RunDirError, match="another policy"):
        run_episodes(retrained, keyed(tasks), backend, ProtocolConfig(budget=2), tmp_path / "run", progress=False)
