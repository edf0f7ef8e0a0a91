"""Labels for action-token training under any chat template (SFT rows and RL episodes alike).

For every assistant turn, the tokens it is trained on are exactly what the model emits at that
turn when the evaluator serves it: the rendered action up to and including the end-of-turn
token. Its context is exactly the evaluator's prompt at that turn: the conversation so far
rendered with the generation prompt, by the same template and `enable_thinking`.

Templates may rewrite history (Qwen3 drops the empty think block of earlier assistant turns);
both sides render history as it was generated (`hindsight.policy.chat.as_generated`), which
makes Qwen3's turns extend each other, but a template can still rewrite it otherwise, so the
full conversation rendered once is not always what the model saw turn by turn. We check:
if every turn's context and action appear token for token inside the single full rendering, the
row becomes one sequence with several trained spans; otherwise each turn becomes its own
sequence (prompt, then action). A template that renders an assistant turn not as an extension
of its own generation prompt is refused, as is a row with no trained token.
"""

from __future__ import annotations

from dataclasses import dataclass

from hindsight.errors import UserError
from hindsight.policy.chat import render_chat

IGNORE = -100


class MaskingError(UserError):
    pass


@dataclass
class Encoded:
    input_ids: list[int]
    labels: list[int]

    @property
    def trained(self) -> int:
        return sum(label != IGNORE for label in self.labels)


def ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def turn_pieces(
    tokenizer,
    messages,
    tools,
    turn: int,
    enable_thinking: bool,
    end_of_turn: str,
    where: str,
    allow_empty_actions: bool = False,
) -> tuple[str, str]:
    """(serve-time prompt text, action text ending with the end-of-turn token) for one turn. A turn
    that is the end-of-turn token alone is refused, unless `allow_empty_actions`: a demonstration
    must act, while a sampled episode (RL) may end a turn without acting, and that is trained too."""
    prompt = render_chat(tokenizer, messages[:turn], tools, True, enable_thinking)
    with_turn = render_chat(tokenizer, messages[: turn + 1], tools, False, enable_thinking)
    if not with_turn.startswith(prompt):
        raise MaskingError(
            f"{where}: the template does not render assistant turn {turn} as a continuation of its "
            "own generation prompt; train/serve consistency is impossible with it"
        )
    action = with_turn[len(prompt) :]
    cut = action.find(end_of_turn)
    if cut < 0:
        raise MaskingError(f"{where}: assistant turn {turn} does not end with the end-of-turn token {end_of_turn!r}")
    action = action[: cut + len(end_of_turn)]
    if action == end_of_turn and not allow_empty_actions:
        raise MaskingError(f"{where}: assistant turn {turn} renders to no action at all")
    return prompt, action


def encode_conversation(
    tokenizer,
    messages: list[dict],
    tools: list[dict] | None = None,
    *,
    enable_thinking: bool = False,
    end_of_turn: str | None = None,
    where: str = "row",
    allow_empty_actions: bool = False,
) -> list[Encoded]:
    end_of_turn = end_of_turn or tokenizer.eos_token
    turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if not turns:
        raise MaskingError(f"{where}: no assistant turn to train on")
    pieces = [
        turn_pieces(tokenizer, messages, tools, t, enable_thinking, end_of_turn, where, allow_empty_actions)
        for t in turns
    ]
    per_turn = [(ids(tokenizer, prompt), ids(tokenizer, action)) for prompt, action in pieces]
    merged = _merge(tokenizer, messages[: turns[-1] + 1], tools, enable_thinking, per_turn)
    examples = (
        [merged]
        if merged is not None
        else [Encoded(input_ids=p + a, labels=[IGNORE] * len(p) + a) for p, a in per_turn]
    )
    if any(example.trained == 0 for example in examples):
        raise MaskingError(f"{where}: an example has no trained token")
    return examples


def _merge(tokenizer, messages, tools, enable_thinking, per_turn) -> Encoded | None:
    """One sequence, if every turn's (context, action) appears verbatim in the full rendering."""
    full = ids(tokenizer, render_chat(tokenizer, messages, tools, False, enable_thinking))
    labels = [IGNORE] * len(full)
    end = 0
    for prompt, action in per_turn:
        if full[: len(prompt)] != prompt or full[len(prompt) : len(prompt) + len(action)] != action:
            return None
        end = len(prompt) + len(action)
        labels[len(prompt) : end] = action
    return Encoded(input_ids=full[:end], labels=labels[:end])


def trained_text(tokenizer, example: Encoded) -> list[str]:
    """The trained spans decoded, for checks and for people."""
    spans, current = [], []
    for token, label in zip(example.input_ids, example.labels):
        if label != IGNORE:
            current.append(token)
        elif current:
            spans.append(tokenizer.decode(current, skip_special_tokens=False))
            current = []
    if current:
        spans.append(tokenizer.decode(current, skip_special_tokens=False))
    return spans
