"""Rendering conversations with the model's own chat template, shared by the local backends so
that transformers and vLLM (and the trainer's masking) see the very same tokens."""

from __future__ import annotations

from pathlib import Path

from hindsight.config import read_chat_template
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import parse_tool_calls

HISTORY_RENDERING = "as_generated"  # recorded with a trained student; see check_rendering


def use_chat_template(tokenizer, path: str | Path | None, field: str) -> None:
    """Puts the template file's text on the tokenizer (nothing when `path` is None)."""
    if path:
        tokenizer.chat_template = read_chat_template(path, field)


def as_generated(messages: list[dict]) -> list[dict]:
    """The conversation with each assistant turn rendered as the model wrote it.

    Qwen3-style templates open every generated turn with a think block (empty when thinking is
    off) but drop the empty blocks of earlier turns from the history, so each turn's prompt is
    not an extension of the last and an episode cannot be one sequence. Giving every assistant
    message its reasoning explicitly (a blank line where there was none) keeps the block: each
    prompt extends the previous one, for serving and training alike. Templates that do not read
    `reasoning_content` render exactly as before."""
    out = []
    for message in messages:
        if message.get("role") == "assistant" and not message.get("reasoning_content"):
            content = message.get("content") or ""
            reasoning, cut, rest = content.partition("</think>")
            message = dict(message)
            if cut:
                message["content"] = rest.lstrip("\n")
            # "\n": a truthy empty block, which the template keeps
            message["reasoning_content"] = (reasoning.split("<think>")[-1].strip("\n") if cut else "") or "\n"
        out.append(message)
    return out


def render_chat(
    tokenizer, messages: list[dict], tools: list[dict] | None, generation_prompt: bool, enable_thinking: bool
) -> str:
    """The one rendering of a conversation, for the prompts served and the contexts trained on."""
    return tokenizer.apply_chat_template(
        as_generated(messages),
        tools=tools or None,
        add_generation_prompt=generation_prompt,
        tokenize=False,
        enable_thinking=enable_thinking,
    )


class ChatRenderer:
    def __init__(self, tokenizer, enable_thinking: bool = False, tool_style: str = "auto"):
        self.tokenizer, self.enable_thinking, self.tool_style = tokenizer, enable_thinking, tool_style

    def prompt_text(self, conv: Conversation, tools: list[dict]) -> str:
        return render_chat(self.tokenizer, conv.messages, tools, True, self.enable_thinking)

    def prompt_ids(self, conv: Conversation, tools: list[dict]) -> list[int]:
        return self.tokenizer(self.prompt_text(conv, tools), add_special_tokens=False)["input_ids"]

    def opening_ids(self, conv: Conversation, tools: list[dict]) -> list[int]:
        """The leading system messages (and the tool schema) alone: what every episode starts with."""
        system = []
        for message in conv.messages:
            if message["role"] != "system":
                break
            system.append(message)
        if not system:
            return []
        text = self.tokenizer.apply_chat_template(
            system, tools=tools, tokenize=False, enable_thinking=self.enable_thinking
        )
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def turn(self, token_ids: list[int], prompt_tokens: int) -> Turn:
        """A turn from generated token ids: cut at the end-of-turn token, tool calls parsed."""
        text = self.tokenizer.decode(token_ids, skip_special_tokens=False)
        eos = self.tokenizer.eos_token
        text = text.split(eos)[0] if eos else text
        if self.tokenizer.pad_token and self.tokenizer.pad_token != eos:
            text = text.replace(self.tokenizer.pad_token, "")
        parsed = parse_tool_calls(text, self.tool_style)
        return Turn(
            text=text,
            content=parsed.text,
            calls=parsed.calls,
            parse_error=parsed.error,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(token_ids),
        )
