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
    model, merged_from = config.model, None
    if config.merge_adapter and adapter and config.backend in ("hf", "vllm"):
        model, merged_from = merged_student(config.model, adapter), {"model": config.model, "adapter": adapter}
        adapter = None
    local = {
        "adapter": adapter,
        "merged_from": merged_from,
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

        return HFPolicy(model, max_context=config.max_context, reuse_cache=config.reuse_cache, **local)
    if config.backend == "vllm":
        from hindsight.policy.vllm_backend import VLLMPolicy

        return VLLMPolicy(
            model,
            max_context=config.max_context or 32768,
            prefix_caching=config.reuse_cache,
            enforce_eager=config.enforce_eager,
            **local,
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


def merged_student(model: str, adapter: str) -> str:
    """policy.merge_adapter: the folder of `model` with `adapter` folded into its weights."""
    from hindsight.models.gguf import resolve_model
    from hindsight.models.merge import MergeError, merge_adapter

    try:
        return str(merge_adapter(resolve_model(model), adapter))
    except MergeError as exc:
        raise UserError(f"policy.merge_adapter: {exc}") from None
