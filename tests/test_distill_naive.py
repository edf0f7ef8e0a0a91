"""Naive demonstrations: the action format without hindsight."""

import json
import shutil

import pytest

from hindsight.data import load_instances, materialise
from hindsight.distill.audit import audit_recipe
from hindsight.distill.naive import main as naive_main
from hindsight.policy.scripted import brief_queries
from hindsight.recipe import load_recipe
from tests.helpers import distill


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


@pytest.fixture(scope="module")
def hindsight_set(tmp_path_factory):
    """A hindsight SFT set of the scripted teacher on 12 world train targets, and its recipe."""
    root = tmp_path_factory.mktemp("format-control")
    recipe = root / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": {"k": 5, "budget": 6},
                "distill": {"out_dir": str(root / "out"), "candidates": 1, "max_targets": 12, "keep_quantile": 1.0},
            }
        )
    )
    distill(recipe)
    assert naive_main([str(recipe), "--format-control"]) == 0
    return recipe, root / "out"


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def calls(row, name):
    return [
        c["function"]["arguments"]
        for m in row["messages"]
        for c in m.get("tool_calls") or []
        if c["function"]["name"] == name
    ]


def test_the_format_control_has_a_row_of_the_same_shape_for_each_hindsight_row(hindsight_set):
    _, out = hindsight_set
    hindsight, control = read_rows(out / "sft.jsonl"), read_rows(out / "format_sft.jsonl")
    assert len(control) == len(hindsight) > 3
    for ours, theirs in zip(control, hindsight):
        assert ours["messages"][:2] == theirs["messages"][:2]  # the same target's deployment prompt
        assert [len(a["query"].split()) for a in calls(ours, "search_papers")] == [
            len(a["query"].split()) for a in calls(theirs, "search_papers")
        ]
        assert [len(a["papers"]) for a in calls(ours, "submit_answer")] == [
            len(a["papers"]) for a in calls(theirs, "submit_answer")
        ]
        assert ours["tools"] == theirs["tools"]


def test_the_format_control_searches_only_the_briefs_words_and_passes_the_audit(hindsight_set):
    recipe, out = hindsight_set
    rows = read_rows(out / "format_sft.jsonl")
    differs = 0
    for row, theirs in zip(rows, read_rows(out / "sft.jsonl")):
        brief = row["messages"][1]["content"].split("Research brief:\n", 1)[1]
        words = {w.strip(".,;:?!()") for w in brief.split()}
        for arguments in calls(row, "search_papers"):
            assert set(arguments["query"].split()) <= words, arguments["query"]
        differs += calls(row, "search_papers") != calls(theirs, "search_papers")
    assert differs == len(rows)  # no row is the hindsight row again
    assert audit_recipe(load_recipe(recipe), out / "format_sft.jsonl")[1].findings == {}


def test_a_hindsight_set_out_of_step_with_its_selection_is_refused_naming_the_file(hindsight_set, tmp_path, capsys):
    recipe, out = hindsight_set
    settings = json.loads(recipe.read_text())
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    (copy / "sft.jsonl").write_text("".join(line + "\n" for line in (copy / "sft.jsonl").read_text().splitlines()[1:]))
    settings["distill"]["out_dir"] = str(copy)
    (tmp_path / "recipe.yaml").write_text(json.dumps(settings))
    assert naive_main([str(tmp_path / "recipe.yaml"), "--format-control"]) == 2
    assert f"{copy / 'sft.jsonl'} has" in capsys.readouterr().err


def test_brief_queries_take_as_many_words_of_the_brief_as_asked():
    brief = "We study sparse attention for graphs. Existing kernels are slow on long inputs. Which papers matter?"
    queries = brief_queries(brief, [6, 3, 2, 4])
    assert queries[0] == "We study sparse attention for graphs"
    assert [len(q.split()) for q in queries] == [6, 3, 2, 4]
    assert queries[1:3] == ["Existing kernels slow", "long inputs"]  # stopwords left out, in order
