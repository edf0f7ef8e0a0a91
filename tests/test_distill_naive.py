"""Naive demonstrations: the action format without hindsight."""

import json

from hindsight.data import load_instances, materialise
from hindsight.distill.audit import audit_recipe
from hindsight.distill.naive import main as naive_main
from hindsight.recipe import load_recipe


def test_naive_demonstrations_open_with_the_first_sentence_and_pass_the_audit(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": {"k": 5, "budget": 6},
                "distill": {"out_dir": str(tmp_path / "out")},
            }
        )
    )
    assert naive_main([str(recipe)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "out" / "naive_sft.jsonl").read_text().splitlines()]
    instances = load_instances(materialise("world") / "instances.jsonl")
    assert len(rows) == sum(inst.split == "train" for inst in instances)
    first = rows[0]["messages"]
    brief = first[1]["content"].split("Research brief:\n", 1)[1]
    search = first[2]["tool_calls"][0]["function"]["arguments"]
    assert search == {"query": brief.split(". ")[0].rstrip(".")}
    submit = first[-1]["tool_calls"][0]["function"]["arguments"]["papers"]
    assert 0 < len(submit) <= 10 and all(set(p) == {"id"} for p in submit)
    assert audit_recipe(load_recipe(recipe), tmp_path / "out" / "naive_sft.jsonl")[1].findings == {}


def test_each_sample_is_an_episode_of_its_own(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": {"k": 5, "budget": 6},
                "distill": {"out_dir": str(tmp_path / "out")},
            }
        )
    )
    assert naive_main([str(recipe), "--samples", "2"]) == 0
    rows = (tmp_path / "out" / "naive_sft.jsonl").read_text().splitlines()
    instances = load_instances(materialise("world") / "instances.jsonl")
    assert len(rows) == 2 * sum(inst.split == "train" for inst in instances)
