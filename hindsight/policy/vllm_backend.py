"""vLLM backend (extra `vllm`): one engine, base requests and LoRA adapter requests, every live
episode submitted together each turn.

Prompts are rendered with the model's chat template by `ChatRenderer`, exactly as the
transformers backend and the trainer render them, and passed to vLLM as token ids; the replies
are parsed by the same tool-call parser. Only `engine()` needs a GPU.
"""

from __future__ import annotations

from hindsight.models.gguf import resolve_model
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.chat import ChatRenderer
from hindsight.policy.hf import PROBE, AdapterError, describe_weights_policy

ADAPTER_NAME = "hindsight-adapter"


class VLLMPolicy:
    name = "vllm"

    def __init__(self, model: str, *, adapter: str | None = None, revision: str | None = None,
                 temperature: float = 0.0, top_p: float = 1.0, max_new_tokens: int = 512, seed: int = 0,
                 tool_style: str = "auto", enable_thinking: bool = False, max_context: int = 32768,
                 max_lora_rank: int = 64, gpu_memory_utilization: float = 0.85, engine=None, tokenizer=None,
                 request_types: tuple | None = None):
        """`engine` and `request_types` ((SamplingParams, LoRARequest)) default to vLLM's own."""
        self.model_id, self.adapter, self.revision = model, adapter, revision
        self.temperature, self.top_p, self.max_new_tokens, self.seed = temperature, top_p, max_new_tokens, seed
        self.enable_thinking, self.max_context, self.max_lora_rank = enable_thinking, max_context, max_lora_rank
        self.gpu_memory_utilization = gpu_memory_utilization
        self.weights = resolve_model(model) if engine is None or tokenizer is None else model
        if tokenizer is None:
            from transformers import AutoTokenizer
            tokenizer = AutoTokenizer.from_pretrained(self.weights, revision=revision)
        self.renderer = ChatRenderer(tokenizer, enable_thinking, tool_style)
        self._engine, self._request_types = engine, request_types
        self.turns = 0

    def describe(self) -> dict:
        return describe_weights_policy(self)

    # -- request building (no GPU needed) ------------------------------------------------------

    def sampling_kwargs(self) -> dict:
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_new_tokens,
                "seed": self.seed + self.turns, "skip_special_tokens": False}

    def lora_kwargs(self) -> dict | None:
        return {"lora_name": ADAPTER_NAME, "lora_int_id": 1, "lora_path": self.adapter} if self.adapter else None

    def build_requests(self, batch: list[Conversation], tools: list[dict]) -> tuple[list[dict], list[Turn | None]]:
        """Token prompts for the conversations that fit the context; an overflow turn for the rest."""
        prompts, turns = [], []
        for conv in batch:
            ids = self.renderer.prompt_ids(conv, tools)
            if len(ids) + self.max_new_tokens > self.max_context:
                turns.append(Turn(failure=f"context_overflow: {len(ids)} prompt tokens + {self.max_new_tokens} "
                                          f"new > {self.max_context}"))
            else:
                prompts.append({"prompt_token_ids": ids})
                turns.append(None)
        return prompts, turns

    # -- the engine ----------------------------------------------------------------------------

    def engine(self):
        if self._engine is None:
            from vllm import LLM

            self._engine = LLM(model=self.weights, revision=self.revision, enable_lora=bool(self.adapter),
                               max_lora_rank=self.max_lora_rank, seed=self.seed, max_model_len=self.max_context,
                               gpu_memory_utilization=self.gpu_memory_utilization)
            if self.adapter:
                self.check_adapter()
        return self._engine

    def _generate(self, prompts: list[dict], lora: bool, **sampling):
        if self._request_types is None:
            from vllm import SamplingParams
            from vllm.lora.request import LoRARequest

            self._request_types = (SamplingParams, LoRARequest)
        sampling_type, lora_type = self._request_types
        request = lora_type(**self.lora_kwargs()) if lora and self.adapter else None
        return self.engine().generate(prompts, sampling_type(**sampling), lora_request=request, use_tqdm=False)

    def check_adapter(self) -> float:
        """The adapter must change the next-token distribution on a probe prompt."""
        probe = {"prompt_token_ids": self.renderer.prompt_ids(Conversation(task=None, messages=PROBE), [])}
        settings = {"max_tokens": 1, "temperature": 0.0, "logprobs": 20}
        base = self._generate([probe], lora=False, **settings)[0].outputs[0].logprobs[0]
        adapted = self._generate([probe], lora=True, **settings)[0].outputs[0].logprobs[0]
        shared = set(base) & set(adapted)
        change = max([abs(base[t].logprob - adapted[t].logprob) for t in shared] + [0.0 if shared else 1.0])
        if change < 1e-6 and set(base) == set(adapted):
            raise AdapterError(f"adapter {self.adapter} does not change the model's next-token logprobs")
        return change

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        prompts, turns = self.build_requests(batch, tools)
        if prompts:
            outputs = iter(self._generate(prompts, lora=True, **self.sampling_kwargs()))
            for i, turn in enumerate(turns):
                if turn is None:
                    output = next(outputs)
                    turns[i] = self.renderer.turn(list(output.outputs[0].token_ids), len(output.prompt_token_ids))
        self.turns += 1
        return turns
