"""Policies: every agent (API model, local model, scripted baseline) behind
one interface, so that all of them run through the same environment and protocol."""

from __future__ import annotations

from hindsight.errors import UserError
from hindsight.policy.base import Conversation, Policy, Turn
from hindsight.policy.parsing import ToolCall, parse_tool_calls

__all__ = ["Conversation", "Policy", "Turn", "ToolCall", "parse_tool_calls", "make_policy"]


def make_policy(config, protocol=None, adapter: str | None = None) -> Policy:
    """Build the policy a recipe's `policy` section describes; heavy libraries load lazily."""
    adapter = adapter or config.adapter
    if config.backend == "bm25-oneshot":
        from hindsight.policy.scripted import BM25OneShot

        return BM25OneShot(
            max_query_words=protocol.max_query_words if protocol else 64, k=protocol.k if protocol else 10
        )
    if not config.model:
        raise UserError(f"policy.model is required for the {config.backend} backend")
    local = {
        "adapter": adapter,
        "revision": config.revision,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_new_tokens": config.max_new_tokens,
        "seed": config.seed,
        "tool_style": config.tool_style,
        "enable_thinking": config.enable_thinking,
        "dtype": config.dtype,
        "chat_template": config.chat_template,
    }
    if config.backend == "hf":
        from hindsight.policy.hf import HFPolicy

        return HFPolicy(config.model, max_context=config.max_context, reuse_cache=config.reuse_cache, **local)
    if config.backend == "vllm":
        from hindsight.policy.vllm_backend import VLLMPolicy

        return VLLMPolicy(
            config.model, max_context=config.max_context or 32768, prefix_caching=config.reuse_cache, **local
        )
    if config.backend == "litellm":
        if adapter:
            raise UserError(
                "an adapter cannot be applied through litellm; serve it (vLLM --lora-modules) "
                "and name the served model instead"
            )
        from hindsight.policy.litellm_backend import LiteLLMPolicy

        return LiteLLMPolicy(
            config.model,
            api_base=config.api_base,
            temperature=config.temperature,
            top_p=config.top_p,
            max_new_tokens=config.max_new_tokens,
            seed=config.seed,
            concurrency=config.concurrency,
        )
    raise UserError(f"unknown policy backend {config.backend!r} (bm25-oneshot, hf, vllm, litellm)")
