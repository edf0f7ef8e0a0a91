"""The vLLM backend: request building and reply parsing on the CPU; the engine itself on a GPU."""

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
    return [Conversation(Task(f"t{i}", f"graph attention {i}", dt.date(2021, 1, 1)),
                         initial_messages(Task(f"t{i}", f"graph attention {i}", dt.date(2021, 1, 1)))) for i in range(n)]


class ScriptedEngine:
    """Answers generate() with chosen token ids (vLLM's output shape), recording the requests."""

    def __init__(self, tokenizer, reply: str):
        self.reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
        self.requests = []

    def generate(self, prompts, sampling, lora_request=None, use_tqdm=False):
        self.requests.append((prompts, sampling, lora_request))
        return [SimpleNamespace(prompt_token_ids=p["prompt_token_ids"],
                                outputs=[SimpleNamespace(token_ids=self.reply_ids)]) for p in prompts]


def test_prompts_are_the_same_tokens_the_transformers_backend_feeds(tiny_model):
    vllm_policy = VLLMPolicy(str(tiny_model), engine=object())
    hf_policy = HFPolicy(str(tiny_model))
    prompts, turns = vllm_policy.build_requests(conversations(), TOOLS)
    assert turns == [None, None]
    for prompt, conv in zip(prompts, conversations()):
        expected = hf_policy.tokenizer(hf_policy.renderer.prompt_text(conv, TOOLS), add_special_tokens=False)["input_ids"]
        assert prompt["prompt_token_ids"] == expected


def test_sampling_and_adapter_requests(tiny_model, tmp_path):
    policy = VLLMPolicy(str(tiny_model), adapter=str(tmp_path), temperature=0.7, seed=5, engine=object())
    assert policy.sampling_kwargs() == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 512, "seed": 5,
                                        "skip_special_tokens": False}
    assert policy.lora_kwargs() == {"lora_name": "hindsight-adapter", "lora_int_id": 1, "lora_path": str(tmp_path)}
    assert VLLMPolicy(str(tiny_model), engine=object()).lora_kwargs() is None


def test_overflowing_conversations_are_answered_without_the_engine(tiny_model):
    policy = VLLMPolicy(str(tiny_model), max_context=200, max_new_tokens=8, engine=object())
    prompts, turns = policy.build_requests(conversations(1), TOOLS)
    assert prompts == [] and turns[0].failure.startswith("context_overflow")


def test_replies_are_parsed_into_tool_calls(tiny_model):
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    engine = ScriptedEngine(tokenizer, '<tool_call>{"name": "search_papers", "arguments": {"query": "graph"}}</tool_call><|im_end|>')
    policy = VLLMPolicy(str(tiny_model), engine=engine, request_types=(dict, dict))
    turns = policy.act(conversations(), TOOLS)
    assert [(t.calls[0].name, t.calls[0].arguments) for t in turns] == [("search_papers", {"query": "graph"})] * 2
    assert len(engine.requests) == 1 and len(engine.requests[0][0]) == 2  # one batched request per turn
    assert engine.requests[0][1]["skip_special_tokens"] is False and engine.requests[0][2] is None


@pytest.mark.gpu
def test_the_real_engine_runs_an_episode(tiny_model):
    torch = pytest.importorskip("torch")
    pytest.importorskip("vllm", reason="vLLM is not installed (extra `vllm`)")
    if not torch.cuda.is_available():
        pytest.skip("vLLM's engine needs a GPU")
    policy = VLLMPolicy(str(tiny_model), max_new_tokens=16, max_context=8192, gpu_memory_utilization=0.3)
    turns = policy.act(conversations(3), TOOLS)
    assert len(turns) == 3 and all(t.completion_tokens > 0 for t in turns)
