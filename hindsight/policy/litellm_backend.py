"""Any model litellm reaches (`openai/…`, `anthropic/…`, `hosted_vllm/…` with an api_base) as a policy.

Native tool calling; at most `concurrency` requests in flight; rate limits, 5xx, connection
errors and timeouts are retried with exponential backoff and jitter, then recorded as the
episode's error; every response is cached on disk under the hash of the full request, so a
rerun of the same requests costs nothing. litellm is imported only here (it is slow to import)
and told to use its bundled price map instead of fetching one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
from pathlib import Path

from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall, parse_tool_calls
from hindsight.search.base import default_cache_dir


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class ResponseCache:
    """One JSON file per request hash; writes are atomic so concurrent runs never see half a file."""

    def __init__(self, directory: Path | None):
        self.directory = directory

    def key(self, request: dict) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.directory is None:
            return None
        path = self.directory / key[:2] / f"{key}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def put(self, key: str, value: dict) -> None:
        if self.directory is None:
            return
        path = self.directory / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_text(json.dumps(value))
        staging.replace(path)


class Completer:
    """Chat completions through litellm with retries, backoff with jitter and the response cache."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 120.0,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
    ):
        self.api_key, self.max_retries, self.backoff_s, self.timeout_s = api_key, max_retries, backoff_s, timeout_s
        self.cache = ResponseCache(Path(cache_dir or default_cache_dir() / "responses") if use_cache else None)
        self.litellm = _litellm()

    async def complete(self, gate: asyncio.Semaphore, request: dict) -> tuple[dict | None, str | None, int]:
        """(response data, failure, attempts); attempts is 0 for a cached response."""
        key = self.cache.key(request)
        cached = self.cache.get(key)
        if cached is not None:
            return cached, None, 0
        lit = self.litellm
        retryable = (
            lit.RateLimitError,
            lit.InternalServerError,
            lit.ServiceUnavailableError,
            lit.APIConnectionError,
            lit.Timeout,
            lit.BadGatewayError,
        )
        attempt = 0
        while True:
            attempt += 1
            try:
                async with gate:
                    response = await lit.acompletion(
                        **request, api_key=self.api_key, timeout=self.timeout_s, num_retries=0
                    )
                break
            except lit.ContextWindowExceededError as exc:
                return None, f"context_overflow: {exc}", attempt
            except retryable as exc:
                if "credentials" in str(exc).lower():  # litellm reports a missing key as a server error
                    return None, f"error: {type(exc).__name__}: {exc}", attempt
                if attempt > self.max_retries:
                    return None, f"error: {type(exc).__name__} after {attempt} attempts: {exc}", attempt
                await asyncio.sleep(self.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random()))
            except lit.APIError as exc:
                return None, f"error: {type(exc).__name__}: {exc}", attempt
        data = response.model_dump() if hasattr(response, "model_dump") else dict(response)
        try:
            data["_cost_usd"] = float(lit.completion_cost(completion_response=response))
        except Exception:  # unknown model or local server: no price
            data["_cost_usd"] = None
        self.cache.put(key, data)
        return data, None, attempt

    def complete_all(self, requests: list[dict], concurrency: int) -> list[tuple[dict | None, str | None, int]]:
        async def run():
            gate = asyncio.Semaphore(concurrency)
            return await asyncio.gather(*(self.complete(gate, request) for request in requests))

        return list(asyncio.run(run()))


class LiteLLMPolicy:
    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 1024,
        seed: int = 0,
        concurrency: int = 8,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 120.0,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        extra: dict | None = None,
    ):
        self.model, self.api_base = model, api_base
        self.temperature, self.top_p, self.max_new_tokens, self.seed = temperature, top_p, max_new_tokens, seed
        self.concurrency = concurrency
        self.extra = dict(extra or {})
        self.completer = Completer(
            api_key=api_key,
            max_retries=max_retries,
            backoff_s=backoff_s,
            timeout_s=timeout_s,
            cache_dir=cache_dir,
            use_cache=use_cache,
        )
        self._gate: asyncio.Semaphore | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "model": self.model,
            "api_base": self.api_base,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_new_tokens": self.max_new_tokens,
            "seed": self.seed,
            **self.extra,
        }

    def request(self, conv: Conversation, tools: list[dict]) -> dict:
        """Everything that determines the reply (the cache key); the api key is not part of it."""
        return {
            "model": self.model,
            "messages": _wire_messages(conv.messages),
            "tools": tools,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_new_tokens,
            "seed": self.seed + conv.task.sample,
            "api_base": self.api_base,
            **self.extra,
        }

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        async def every():
            return await asyncio.gather(*(self.act_one(conv, tools) for conv in batch))

        return list(asyncio.run(every()))

    async def act_one(self, conversation: Conversation, tools: list[dict]) -> Turn:
        """One turn of one conversation; at most `concurrency` requests are in flight across all callers.

        The runner calls this for each episode on its own, so an episode never waits for the
        slowest reply of a batch before its next request."""
        data, failure, attempts = await self.completer.complete(self._loop_gate(), self.request(conversation, tools))
        return Turn(failure=failure, attempts=attempts) if failure else _turn_from_response(data, attempts)

    def _loop_gate(self) -> asyncio.Semaphore:
        # a semaphore belongs to one event loop, and every `act` runs its own
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate, self._gate_loop = asyncio.Semaphore(self.concurrency), loop
        return self._gate


def _wire_messages(messages: list[dict]) -> list[dict]:
    """OpenAI wants tool-call arguments as JSON text; our logs keep them as objects."""
    out = []
    for message in messages:
        if message.get("tool_calls"):
            message = {
                **message,
                "tool_calls": [
                    {
                        **call,
                        "function": {
                            **call["function"],
                            "arguments": call["function"]["arguments"]
                            if isinstance(call["function"]["arguments"], str)
                            else json.dumps(call["function"]["arguments"]),
                        },
                    }
                    for call in message["tool_calls"]
                ],
            }
        out.append(message)
    return out


def _turn_from_response(data: dict, attempts: int) -> Turn:
    message = (data.get("choices") or [{}])[0].get("message") or {}
    content = message.get("content") or ""
    calls = []
    for raw in message.get("tool_calls") or []:
        arguments = raw.get("function", {}).get("arguments", "")
        try:
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            pass  # kept as text: the environment answers with a readable error
        calls.append(
            ToolCall(name=raw.get("function", {}).get("name", ""), arguments=arguments, id=raw.get("id") or "")
        )
    parse_error = None
    if not calls:  # some servers leave tool calls in the text
        parsed = parse_tool_calls(content)
        calls, parse_error, content = parsed.calls, parsed.error, parsed.text if parsed.calls else content
    usage = data.get("usage") or {}
    return Turn(
        text=json.dumps(message, ensure_ascii=False, default=str),
        content=content,
        calls=calls,
        parse_error=parse_error,
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or 0,
        cost_usd=data.get("_cost_usd"),
        attempts=attempts,
    )
