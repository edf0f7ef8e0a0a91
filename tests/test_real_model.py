"""A real pretrained Qwen2.5 (0.5B, its own tokenizer and chat template with tools) through every
stage: GGUF loading, action-token masking, hf episodes on the world, LoRA SFT launched by
accelerate, the adapter probe, and the litellm policy against `transformers serve`.

The model comes from ../shared/models/fetch (a verified GGUF file from the package registry);
every test here skips with the reason where it cannot be had.
"""

import json
import time

import pytest

from hindsight.jsonl import sha256_file
from hindsight.protocol import ProtocolConfig
from tests.helpers import QWEN_PROTOCOL

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


def test_a_gguf_file_becomes_one_cached_folder_named_by_its_hash(qwen_gguf, qwen_folder):
    from hindsight.models.gguf import materialize, model_provenance

    source = json.loads((qwen_folder / "gguf_source.json").read_text())
    assert source["sha256"] == sha256_file(qwen_gguf) == qwen_folder.name
    assert model_provenance(str(qwen_gguf)) == {"gguf_sha256": source["sha256"]}
    start = time.perf_counter()
    assert materialize(qwen_gguf) == qwen_folder
    assert time.perf_counter() - start < 5  # converted once, then found by hash


def test_trained_tokens_are_the_actions_and_each_context_is_the_evaluators_prompt(qwen_tokenizer, world_sft):
    from hindsight.masking import IGNORE, encode_conversation, trained_text
    from hindsight.policy.base import Conversation
    from hindsight.policy.chat import ChatRenderer
    from hindsight.schema import Task
    from hindsight.stages import read_sft_set

    root, _ = world_sft
    row = read_sft_set(root / "distill" / "sft.jsonl")[0]
    messages, tools = row.messages, row.tools
    examples = encode_conversation(qwen_tokenizer, messages, tools)
    actions = [m for m in messages if m["role"] == "assistant"]
    expected = [
        f"<tool_call>\n{json.dumps({'name': c['function']['name'], 'arguments': c['function']['arguments']}, ensure_ascii=False)}"
        f"\n</tool_call><|im_end|>"
        for m in actions
        for c in m["tool_calls"]
    ]
    assert [span for example in examples for span in trained_text(qwen_tokenizer, example)] == expected
    renderer = ChatRenderer(qwen_tokenizer)
    contexts = [
        example.input_ids[:start]
        for example in examples
        for start in range(len(example.labels))
        if example.labels[start] != IGNORE and (start == 0 or example.labels[start - 1] == IGNORE)
    ]
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    assert contexts == [renderer.prompt_ids(Conversation(Task("t", "b", None), messages[:i]), tools) for i in turns]


def test_the_hf_policy_runs_a_batch_of_world_episodes(qwen_gguf, world_sft):
    from hindsight.eval.evaluation import evaluate
    from hindsight.recipe import load_recipe

    root, recipe = world_sft
    run_dir = evaluate(load_recipe(recipe, ["protocol.budget=2"]), "base", progress=False)
    rows = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert len(rows) == 2 and all(r["calls"] >= 1 and r["tokens"]["prompt"] > 500 for r in rows)
    assert manifest["policy"]["gguf_sha256"] == sha256_file(qwen_gguf)
    # the pretrained model acts: under the lenient reading its first reply is a readable call
    assert all(r["steps"][0]["tool"] in ("search_papers", "submit_answer") for r in rows), [
        r["messages"][2] for r in rows
    ]


def test_accelerate_launch_trains_a_lora_adapter_that_passes_the_probe(qwen_gguf, qwen_lora, qwen_untrained_lora):
    from hindsight.policy.hf import AdapterError, HFPolicy

    manifest = json.loads((qwen_lora / "train_manifest.json").read_text())
    assert manifest["gguf_sha256"] == sha256_file(qwen_gguf) and manifest["steps"] == 3
    assert manifest["losses"][-1] < manifest["losses"][0]
    trained = HFPolicy(str(qwen_gguf), adapter=str(qwen_lora / "adapter"))
    assert trained.adapter_logit_change > 1e-3
    with pytest.raises(AdapterError, match="does not change the model"):
        HFPolicy(str(qwen_gguf), adapter=str(qwen_untrained_lora))


def test_the_litellm_policy_drives_the_real_model_behind_transformers_serve(qwen_folder, tmp_path):
    pytest.importorskip("litellm")
    from hindsight.data import load_benchmark
    from hindsight.policy.litellm_backend import LiteLLMPolicy
    from hindsight.runner import run_episodes
    from hindsight.schema import tasks_of
    from hindsight.search.bm25 import BM25Backend
    from tests.helpers import start_transformers_server

    corpus, instances, _ = load_benchmark("world")
    process, url = start_transformers_server(qwen_folder, timeout_s=300)
    try:
        policy = LiteLLMPolicy(
            f"openai/{qwen_folder}", api_base=url, api_key="unused", max_new_tokens=96, cache_dir=tmp_path / "cache"
        )
        tasks = tasks_of([next(inst for inst in instances if inst.split == "eval")])
        config = ProtocolConfig(**{**QWEN_PROTOCOL, "fields": ("id",), "budget": 2})
        run_episodes(policy, tasks, BM25Backend(corpus), config, tmp_path / "run", progress=False)
    finally:
        process.kill()
    (row,) = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert row["tokens"]["prompt"] > 500 and row["tokens"]["completion"] > 0
    # native tools reached the model: its reply names one of them, as a call or as text
    assert row["steps"] and row["steps"][0]["tool"] in ("search_papers", "submit_answer"), row["messages"][2:]


def test_grpo_keeps_training_the_real_sft_adapter_and_the_probe_accepts_the_result(
    qwen_gguf, qwen_lora, world_sft, monkeypatch
):
    """One GRPO step (the rl stage) from the fixture's SFT adapter on the real Qwen and its chat
    template: each episode is one sequence, the reward is logged, the adapter is saved where the
    manifest says, its weights moved exactly when the group's rewards differed, and the
    evaluator loads it past the no-op probe. (A group of this untrained adapter often ends every
    episode malformed, so equal rewards and an unmoved adapter are a legitimate outcome.)"""
    from safetensors.torch import load_file

    from hindsight.policy.hf import HFPolicy
    from hindsight.recipe import load_recipe
    from hindsight.rl import grpo

    root, recipe_path = world_sft
    settings = json.loads(recipe_path.read_text())
    settings["protocol"] = {**settings["protocol"], "budget": 2}
    settings["rl"] = {
        "student": str(qwen_lora),
        "output_dir": str(root / "rl"),
        "max_targets": 2,
        "dev_targets": 0,
        "steps": 1,
        "group_size": 2,
        "targets_per_step": 1,
        "learning_rate": 1.0e-4,
        "max_new_tokens": 48,
        "temperature": 1.0,
        "reward": {"exposed_gain": 1.0, "malformed": -1.0, "unsurfaced": -0.5},
    }
    (root / "rl.yaml").write_text(json.dumps(settings))
    recipe = load_recipe(root / "rl.yaml")
    rewards = []
    original = grpo.EpisodeReward.__call__

    def keep(self, *args, **kwargs):
        rewards.extend(result := original(self, *args, **kwargs))
        return result

    monkeypatch.setattr(grpo.EpisodeReward, "__call__", keep)
    manifest = grpo.train(recipe, grpo.RLConfig.from_recipe(recipe))
    (row,) = [row for row in manifest["rows"] if row["split"] == "train"]
    assert row["step"] == 1 and row["episodes"] == 2 and len(rewards) == 2
    saved = json.loads((root / "rl" / "train_manifest.json").read_text())
    assert saved["stage"] == "rl" and saved["start"]["lora"] and saved["output"].endswith("adapter")
    before = load_file(qwen_lora / "adapter" / "adapter_model.safetensors")
    after = load_file(root / "rl" / "adapter" / "adapter_model.safetensors")
    assert before.keys() == after.keys()
    moved = max((after[k] - before[k]).abs().max().item() for k in before)
    assert (moved > 0) == (rewards[0] != rewards[1]), (rewards, moved)
    assert HFPolicy(str(qwen_gguf), adapter=str(root / "rl" / "adapter")).adapter_logit_change > 1e-3
