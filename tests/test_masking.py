"""Action-token labels on real chat templates (Qwen3, Llama 3.3) with locally trained tokenizers."""

import json

import pytest

from hindsight.masking import (
    IGNORE,
    MaskingError,
    encode_conversation,
    trained_text,
)
from hindsight.models.tiny import train_tokenizer
from hindsight.policy.base import Conversation
from hindsight.policy.chat import ChatRenderer
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.schema import Task
from tests.helpers import SHARED_DATA

TEMPLATES = SHARED_DATA.parent / "chat_templates"
TOOLS = tool_schemas(ProtocolConfig())
QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]
LLAMA_SPECIAL = [
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|python_tag|>",
    "<|finetune_right_pad_id|>",
]

ACTIONS = [
    ("search_papers", {"query": "graph attention", "limit": 10}),
    ("search_papers", {"query": "sparse kernel caches"}),
    ("submit_answer", {"papers": [{"id": "2401.00001", "rationale": "close method"}]}),
]


def conversation(actions=ACTIONS):
    messages = [
        {"role": "system", "content": "You search papers."},
        {"role": "user", "content": "Research brief:\nWe want faster graph attention."},
    ]
    for i, (name, arguments) in enumerate(actions):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "name": name,
                "content": json.dumps({"results": [{"id": "2401.00001", "title": "Graph caches"}]}),
            }
        )
    return messages


def tokenizer_for(template: str):
    path = TEMPLATES / template
    if not path.exists():
        pytest.skip(f"chat template not found at {path} (it lives in ../shared/chat_templates)")
    text = [json.dumps(t) for t in TOOLS] + [json.dumps(conversation())] * 5
    if template.startswith("qwen"):
        return train_tokenizer(text, 1024, special_tokens=QWEN_SPECIAL, chat_template=path.read_text())
    return train_tokenizer(
        text,
        1024,
        special_tokens=LLAMA_SPECIAL,
        eos_token="<|eot_id|>",
        pad_token="<|finetune_right_pad_id|>",
        bos_token="<|begin_of_text|>",
        chat_template=path.read_text(),
    )


def expected_actions(template: str) -> list[str]:
    if template.startswith("qwen"):
        return [f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call><|im_end|>" for n, a in ACTIONS]
    return [f"{json.dumps({'name': n, 'parameters': a})}<|eot_id|>" for n, a in ACTIONS]


@pytest.mark.parametrize("template", ["qwen3.jinja", "llama3.3.jinja"])
def test_trained_tokens_are_exactly_the_actions_and_end_of_turn(template):
    tokenizer = tokenizer_for(template)
    examples = encode_conversation(tokenizer, conversation(), TOOLS)
    spans = [span for example in examples for span in trained_text(tokenizer, example)]
    assert spans == expected_actions(template)


@pytest.mark.parametrize("template", ["qwen3.jinja", "llama3.3.jinja"])
def test_every_trained_turn_sees_exactly_the_evaluators_prompt(template):
    tokenizer = tokenizer_for(template)
    renderer = ChatRenderer(tokenizer, enable_thinking=False)
    messages = conversation()
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    contexts = []
    for example in encode_conversation(tokenizer, messages, TOOLS):
        for start in range(len(example.labels)):
            if example.labels[start] != IGNORE and (start == 0 or example.labels[start - 1] == IGNORE):
                contexts.append(example.input_ids[:start])
    served = [renderer.prompt_ids(Conversation(Task("t", "b", None), messages[:turn]), TOOLS) for turn in turns]
    assert contexts == served


def forgetful(tokenizer):
    """Qwen3's template made to drop every earlier think block, however it was written."""
    template = tokenizer.chat_template
    assert "(not loop.last and reasoning_content)" in template
    tokenizer.chat_template = template.replace("(not loop.last and reasoning_content)", "false")
    return tokenizer


def served_and_trained_contexts(tokenizer, messages):
    renderer = ChatRenderer(tokenizer, enable_thinking=False)
    examples = encode_conversation(tokenizer, messages, TOOLS)
    contexts = [
        example.input_ids[:start]
        for example in examples
        for start in range(len(example.labels))
        if example.labels[start] != IGNORE and (start == 0 or example.labels[start - 1] == IGNORE)
    ]
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    served = [renderer.prompt_ids(Conversation(Task("t", "b", None), messages[:turn]), TOOLS) for turn in turns]
    return examples, contexts, served


def test_qwen3_turns_extend_each_other_when_history_is_rendered_as_generated():
    tokenizer = tokenizer_for("qwen3.jinja")
    examples, contexts, served = served_and_trained_contexts(tokenizer, conversation())
    assert len(examples) == 1 and contexts == served  # one sequence, and every turn's context is served as is
    # the control: the template's own rendering of the same history drops the first turn's think block
    messages = conversation()
    own = tokenizer.apply_chat_template(
        messages[:4], tools=TOOLS, add_generation_prompt=True, tokenize=False, enable_thinking=False
    )
    assert own.count("<think>") == 1 and tokenizer.decode(served[1]).count("<think>") == 2


def test_a_template_that_still_rewrites_history_falls_back_to_one_sequence_per_turn():
    tokenizer = forgetful(tokenizer_for("qwen3.jinja"))
    examples, contexts, served = served_and_trained_contexts(tokenizer, conversation())
    assert len(examples) == 3 and contexts == served
    assert [span for e in examples for span in trained_text(tokenizer, e)] == expected_actions("qwen3.jinja")


def test_llama_merges_into_one_sequence():
    assert len(encode_conversation(tokenizer_for("llama3.3.jinja"), conversation(), TOOLS)) == 1


def test_a_template_that_breaks_the_rules_is_refused():
    tokenizer = tokenizer_for("qwen3.jinja")
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ 'model' if m.role == 'assistant' else m.role }}\n"
        "{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    with pytest.raises(MaskingError, match="row 7: the template does not render assistant turn 2"):
        encode_conversation(tokenizer, conversation(), TOOLS, where="row 7")


def test_rows_without_anything_to_train_are_refused():
    tokenizer = tokenizer_for("qwen3.jinja")
    with pytest.raises(MaskingError, match="row 3: no assistant turn"):
        encode_conversation(tokenizer, conversation()[:2], TOOLS, where="row 3")
    empty = conversation()
    empty[2] = {"role": "assistant", "content": ""}
    with pytest.raises(MaskingError, match="renders to no action"):
        encode_conversation(tokenizer, empty, TOOLS)
