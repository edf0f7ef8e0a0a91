"""What every policy backend implements: one assistant turn for each of a batch of conversations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hindsight.policy.parsing import ToolCall
from hindsight.schema import Task


@dataclass
class Conversation:
    """What a policy may see: the task (brief and cutoff) and the messages so far."""

    task: Task
    messages: list[dict]


@dataclass
class Turn:
    text: str = ""  # the model's reply as it came (logged as the step's raw)
    content: str = ""  # the reply without tool-call markup (the message content)
    calls: list[ToolCall] = field(default_factory=list)
    parse_error: str | None = None  # why no call could be read from `text`
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    failure: str | None = None  # "context_overflow" or an error: the episode ends
    attempts: int = 1  # requests made (retries included)


@runtime_checkable
class Policy(Protocol):
    name: str

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        """One turn per conversation, in order."""
        ...

    def describe(self) -> dict:
        """Backend, model, revision, decoding settings: what the manifest records."""
        ...


@runtime_checkable
class IndependentPolicy(Policy, Protocol):
    """A policy whose conversations need not wait for each other (a remote API): the runner lets
    every episode send its next request as soon as its last reply is in."""

    async def act_one(self, conversation: Conversation, tools: list[dict]) -> Turn: ...
