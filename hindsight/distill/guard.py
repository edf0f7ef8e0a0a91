"""The teacher's side of the leak vocabulary: a reply that the replay validator would reject is
not sent. The guard checks each proposed turn with `hindsight.leaks.check_messages` (the
validator's own function, on the same private text) and, given the search backend, with the
validator's second line (`hindsight.distill.retrieval`), and when the turn adds a finding, asks the
teacher again with the refused reply and the reason appended. Those two messages live only in
the retry: the candidate's transcript never holds them. After `retries` refusals the last reply
goes through, and the validator rejects the candidate as before, so nothing is lost silently.
"""

from __future__ import annotations

from hindsight.distill.judge import Judge
from hindsight.leaks import PrivateText
from hindsight.policy.base import Conversation, Turn

REFUSED = (
    "Not sent: {reason}. A student searching without hindsight could not have written it. "
    "Make another call that relies only on the brief and on what your searches returned."
)


def turn_message(turn: Turn) -> dict:
    """The assistant message the runner would append for `turn`."""
    message = {"role": "assistant", "content": turn.content or turn.text}
    if turn.calls:
        message["tool_calls"] = [call.to_message() for call in turn.calls]
    return message


def is_refusal(message: dict) -> bool:
    return message.get("role") == "user" and message.get("content", "").startswith("Not sent: ")


class LeakGuard:
    """Wraps a teacher policy; `private` maps each task id to what its teacher was shown."""

    def __init__(
        self,
        teacher,
        private: dict[str, PrivateText],
        ngram: int,
        title_share: float,
        retries: int = 2,
        backend=None,
        retrieval_words: int | None = None,
    ):
        self.teacher, self.private, self.retries = teacher, private, retries
        self.judge = Judge(ngram, title_share, retrieval_words, backend)
        self.name = teacher.name
        self.counts = {"turns": 0, "refused": 0, "sent_leaking": 0}
        if hasattr(teacher, "act_one"):
            self.act_one = self._act_one

    def describe(self) -> dict:
        return {**self.teacher.describe(), "leak_guard_retries": self.retries}

    def why_refused(self, conversation: Conversation, turn: Turn) -> str | None:
        """The first new finding `turn` would add to the conversation, or None."""
        if turn.failure:
            return None
        messages = conversation.messages + [turn_message(turn)]
        private, brief = self.private[conversation.task.task_id], conversation.task.brief
        for finding in self.judge.findings(messages, private, brief, only_turn=len(messages) - 1):
            if finding.turn == len(messages) - 1:
                return f"{finding.flag}: {finding.reason}"
        return None

    def _retry(self, conversation: Conversation, turn: Turn, reason: str) -> Conversation:
        note = {"role": "user", "content": REFUSED.format(reason=reason)}
        return Conversation(conversation.task, conversation.messages + [turn_message(turn), note])

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        turns = self.teacher.act(batch, tools)
        asked = list(batch)  # what each teacher was last asked: the conversation and its refusals
        pending = list(range(len(batch)))
        for attempt in range(self.retries + 1):
            # judged against the real conversation: a refused reply never happened
            refused = [(i, why) for i in pending if (why := self.why_refused(batch[i], turns[i]))]
            if not refused or attempt == self.retries:
                self.counts["sent_leaking"] += len(refused)
                break
            self.counts["refused"] += len(refused)
            pending = [i for i, _ in refused]
            for i, why in refused:
                asked[i] = self._retry(asked[i], turns[i], why)
            for i, turn in zip(pending, self.teacher.act([asked[i] for i in pending], tools)):
                turns[i] = turn
        self.counts["turns"] += len(turns)
        return turns

    async def _act_one(self, conversation: Conversation, tools: list[dict]) -> Turn:
        asked = conversation
        turn = await self.teacher.act_one(asked, tools)
        for attempt in range(self.retries + 1):
            why = self.why_refused(conversation, turn)
            if not why or attempt == self.retries:
                self.counts["sent_leaking"] += why is not None
                break
            self.counts["refused"] += 1
            asked = self._retry(asked, turn, why)
            turn = await self.teacher.act_one(asked, tools)
        self.counts["turns"] += 1
        return turn
