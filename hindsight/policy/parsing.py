"""Reading tool calls out of model text, the way chat templates write them.

Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (any number, optional `<think>`
block first). Llama 3: the reply is one JSON object `{"name": ..., "parameters": {...}}`
(optionally after `<|python_tag|>`). `auto` tries Qwen's tags, then a bare JSON object.

`read_leniently` also accepts what models that were never taught the template's format write:
a fenced code block holding the call (```json {"name": ..., "arguments": ...} ```), or a call
object anywhere in the reply; with `repair`, also a call object cut short of its closing
brackets or quote (the untrained Qwen2.5 often ends a long submission one brace short). Whether
a protocol reads replies that way is its `tool_calls` setting, part of the protocol hash, so
both arms of a comparison read the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_QWEN = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_FENCE = re.compile(r"```[A-Za-z_]*[ \t]*\n?(.*?)```", re.S)


@dataclass
class ToolCall:
    name: str
    arguments: dict | str  # a dict when the model wrote valid JSON, else the raw text
    id: str = ""

    def to_message(self) -> dict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Parsed:
    calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None  # why nothing usable was found
    text: str = ""  # the reply without tool-call markup


def _from_object(obj: object) -> ToolCall | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            pass
    return ToolCall(name=obj["name"], arguments=arguments)


def parse_tool_calls(text: str, style: str = "auto") -> Parsed:
    visible = _THINK.sub("", text).strip()
    if style in ("qwen", "auto") and "<tool_call>" in visible:
        calls, problems = [], []
        for body in _QWEN.findall(visible):
            try:
                call = _from_object(json.loads(body))
            except json.JSONDecodeError as exc:
                problems.append(f"tool call is not valid JSON ({exc.msg})")
                continue
            if call is None:
                problems.append("tool call lacks a string 'name'")
            else:
                calls.append(call)
        rest = _QWEN.sub("", visible).strip()
        return Parsed(calls=calls, error=None if calls else "; ".join(problems) or "empty tool call", text=rest)
    if style in ("llama", "auto"):
        candidate = visible.removeprefix("<|python_tag|>").strip()
        if candidate.startswith("{"):
            try:
                call = _from_object(json.loads(candidate))
            except json.JSONDecodeError as exc:
                return Parsed(error=f"reply looks like JSON but is not valid ({exc.msg})", text=visible)
            if call is not None:
                return Parsed(calls=[call])
    return Parsed(error="no tool call found" if visible else "empty reply", text=visible)


def _call_objects(text: str) -> list[ToolCall]:
    """Every JSON object in `text` that reads as a tool call, left to right."""
    decoder, calls, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            obj, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        call = _from_object(obj)
        if call is not None:
            calls.append(call)
        at = text.find("{", end)
    return calls


def read_leniently(text: str, style: str = "auto", repair: bool = False) -> Parsed:
    """The template's format first; failing that, calls in fenced code blocks, then call objects
    anywhere in the reply; with `repair`, last, a call object left unclosed, closed."""
    strict = parse_tool_calls(text, style)
    if strict.calls:
        return strict
    visible = _THINK.sub("", text).strip()
    fenced = [call for body in _FENCE.findall(visible) for call in _call_objects(body)]
    if fenced:
        return Parsed(calls=fenced, text=_FENCE.sub("", visible).strip())
    anywhere = _call_objects(visible)
    if anywhere:
        return Parsed(calls=anywhere)
    if repair:
        bodies = _FENCE.findall(visible) or [_QWEN.sub(lambda m: m.group(1), visible)]
        closed = [call for body in bodies for call in _call_objects(closed_json(body))]
        if closed:
            return Parsed(calls=closed[:1])
    return strict


def closed_json(text: str) -> str:
    """`text` from its first "{" with whatever the JSON there left open closed: an open string
    gets its quote, open arrays and objects their brackets, innermost first. Text whose object
    closes is returned up to that point, as it is."""
    start = text.find("{")
    if start == -1:
        return text
    stack, in_string, escaped = [], False, False
    for i, ch in enumerate(text[start:], start):
        if in_string:
            escaped, in_string = (not escaped and ch == "\\"), in_string and (escaped or ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return text[start : i + 1]
            if not stack:
                return text[start : i + 1]
    body = text[start:].rstrip()
    return body + ('"' if in_string else "") + "".join(reversed(stack))
