"""The second model family's recipe: SmolLM2's own ChatML template writes no tool calls, so its
prompts and training rows are rendered with the recipe's ChatML-with-tools file."""

import subprocess
from pathlib import Path

import pytest

from hindsight.masking import IGNORE, encode_conversation
from hindsight.policy.chat import render_chat, use_chat_template
from hindsight.policy.parsing import parse_tool_calls
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[1]
FETCH = ROOT.parent / "shared" / "models" / "fetch"
RECIPE = ROOT / "recipes" / "smollm2_world.yaml"


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    pytest.importorskip("gguf")
    if not FETCH.exists():
        pytest.skip(f"{FETCH} not found (it lives in ../shared/models beside the repo)")
    result = subprocess.run([str(FETCH), "smollm2-135m-instruct"], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        pytest.skip(f"{FETCH} smollm2-135m-instruct failed: {result.stderr.strip()[-300:]}")
    from transformers import AutoTokenizer

    gguf = Path(result.stdout.strip().splitlines()[-1])
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)  # the vocabulary alone, no weights


def conversation() -> list[dict]:
    search = {"name": "search_papers", "arguments": {"query": "sparse attention memory"}}
    submit = {"name": "submit_answer", "arguments": {"papers": [{"id": "1906.00001"}]}}

    def call(function: dict) -> dict:
        return {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": function}]}

    return [
        {"role": "system", "content": "You search papers."},
        {"role": "user", "content": "Research brief: long documents."},
        call(search),
        {"role": "tool", "content": '{"results": [{"id": "1906.00001", "title": "Sparse"}]}'},
        call(submit),
    ]


def test_smollm2s_own_template_loses_the_tool_calls(smollm2_tokenizer):
    rendered = render_chat(smollm2_tokenizer, conversation()[:3], tool_schemas(ProtocolConfig()), False, False)
    assert "search_papers" not in rendered.split("<|im_start|>assistant")[-1]


def test_the_recipe_template_trains_exactly_the_tool_calls_and_reads_them_back(smollm2_tokenizer):
    recipe = load_recipe(RECIPE)
    template = ROOT / recipe.policy.chat_template
    assert recipe.stages["train"]["chat_template"] == recipe.policy.chat_template
    use_chat_template(smollm2_tokenizer, template, "policy.chat_template")
    examples = encode_conversation(smollm2_tokenizer, conversation(), tool_schemas(ProtocolConfig()))
    trained = [
        smollm2_tokenizer.decode([t for t, label in zip(e.input_ids, e.labels) if label != IGNORE]) for e in examples
    ]
    replies = "".join(trained).split("<|im_end|>")
    calls = [call for reply in replies for call in parse_tool_calls(reply).calls]
    assert [call.name for call in calls] == ["search_papers", "submit_answer"]
    assert calls[0].arguments == {"query": "sparse attention memory"}
    assert "Research brief" not in "".join(trained)  # the context is never trained on
