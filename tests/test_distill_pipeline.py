"""teacher → replay → select on the synthetic world, the leak audit, and the teacher's edge."""

import json
import statistics
from pathlib import Path

import pytest

from hindsight.data import load_instances, materialise
from hindsight.distill.audit import audit_recipe
from hindsight.distill.audit import main as audit_main
from hindsight.distill.replay import main as replay_main
from hindsight.distill.select import main as select_main
from hindsight.distill.teacher import main as teacher_main
from hindsight.eval.run import main as run_main
from hindsight.leaks import content_words
from hindsight.recipe import load_recipe


@pytest.fixture(scope="module")
def distilled(tmp_path_factory):
    root = tmp_path_factory.mktemp("distill")
    recipe = root / "recipe.yaml"
    recipe.write_text(
        f"data:\n  source: world\nprotocol:\n  budget: 12\nruns_dir: {root / 'runs'}\n"
        f"distill:\n  out_dir: {root / 'out'}\n  candidates: 2\n  max_targets: 40\n"
    )
    assert teacher_main([str(recipe)]) == 0
    assert replay_main([str(recipe)]) == 0
    assert select_main([str(recipe)]) == 0
    return recipe, root / "out"


def test_the_pipeline_writes_a_deployment_only_sft_set(distilled):
    recipe, out = distilled
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    assert rows and all(set(row) == {"messages", "tools"} for row in rows)
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"] and roles[-2:] == ["assistant", "tool"]
        calls = [m["tool_calls"][0]["function"] for m in row["messages"] if m["role"] == "assistant"]
        assert all(isinstance(call["arguments"], dict) for call in calls) and calls[-1]["name"] == "submit_answer"
    manifest = [json.loads(line) for line in (out / "candidates_manifest.jsonl").read_text().splitlines()]
    assert sum(m["selected"] for m in manifest) == len(rows)
    assert {"source_instance", "seed", "score", "actions", "flags", "transcript_hash", "selected"} <= set(manifest[0])
    frozen = json.loads((out / "selection.json").read_text())
    assert frozen["dev_candidates"] > 0 and 0 <= frozen["threshold"] <= 1


def test_the_threshold_stays_frozen_on_a_rerun(distilled, capsys):
    recipe, out = distilled
    before = (out / "selection.json").read_text()
    assert select_main([str(recipe)]) == 0
    assert "reused, frozen" in capsys.readouterr().out and (out / "selection.json").read_text() == before


def test_the_audit_finds_nothing_in_the_set_and_a_leak_planted_in_a_copy(distilled, tmp_path):
    recipe, out = distilled
    assert audit_recipe(load_recipe(recipe))[1].findings == {}
    instances = load_instances(materialise("world") / "instances.jsonl")
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    brief = rows[0]["messages"][1]["content"].split("Research brief:\n", 1)[1]
    instance = next(i for i in instances if i.brief == brief)
    leaky = json.loads(json.dumps(rows[0]))
    # the label whose title says most beyond the brief: copying it is a leak by any measure
    label = max(instance.labels, key=lambda lab: len(set(content_words(lab.title)) - set(content_words(brief))))
    leaky["messages"][2]["tool_calls"][0]["function"]["arguments"]["query"] = label.title
    unsurfaced = json.loads(json.dumps(rows[1]))
    unsurfaced["messages"][-2]["tool_calls"][0]["function"]["arguments"]["papers"].append({"id": "1501.00001"})
    scored = json.loads(json.dumps(rows[2]))
    scored["score"] = 0.9
    copy = tmp_path / "copy.jsonl"
    copy.write_text("\n".join(json.dumps(r) for r in [leaky, unsurfaced, scored, *rows[3:]]) + "\n")
    findings = audit_recipe(load_recipe(recipe), copy)[1].findings
    assert sorted(findings) == [1, 2, 3]
    assert any(f"message 2: identifying_query: antecedent {label.id}'s title" in f for f in findings[1]), findings[1]
    assert any("submitted an id no search returned" in f for f in findings[2])
    assert findings[3] == ["fields other than messages and tools: ['score']"]
    assert audit_main([str(recipe), "--sft", str(copy)]) == 1
    assert audit_main([str(recipe)]) == 0


def test_the_teachers_valid_demonstrations_outscore_bm25_oneshot_on_the_same_targets(distilled, capsys):
    recipe, out = distilled
    replays = [json.loads(line) for line in (out / "replays.jsonl").read_text().splitlines()]
    train = sorted({r["instance_id"] for r in replays if r["split"] == "train"})
    best = {}
    for r in replays:
        if r["split"] == "train" and not r["flags"]:
            best[r["instance_id"]] = max(best.get(r["instance_id"], 0.0), r["score"]["ndcg10"])
    teacher_mean = statistics.mean(best.get(t, 0.0) for t in train)
    assert run_main([str(recipe), "--name", "oneshot-train", "--split", "train", "--limit", "40"]) == 0
    runs = Path(recipe.read_text().split("runs_dir: ")[1].split("\n")[0])
    from hindsight.eval.comparison import score_run
    from hindsight.runs import load_run

    run = load_run(runs / "oneshot-train")
    scores = {
        s["instance_id"]: s["ndcg10"]
        for s in score_run(run, load_instances(runs / "oneshot-train" / "instances.jsonl"))
    }
    assert sorted(scores) == train
    oneshot_mean = statistics.mean(scores.values())
    print(f"train targets {len(train)}: teacher {teacher_mean:.3f} vs bm25-oneshot {oneshot_mean:.3f}")
    assert teacher_mean > 2 * oneshot_mean and teacher_mean > oneshot_mean + 0.05


def test_the_scripted_teacher_opens_with_the_briefs_first_sentence_then_searches_keywords(distilled):
    recipe, out = distilled
    from hindsight.policy.scripted import first_sentence_query
    from hindsight.search.text import analyze

    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    for row in rows:
        brief = row["messages"][1]["content"].split("Research brief:\n", 1)[1]
        queries = [
            m["tool_calls"][0]["function"]["arguments"]["query"]
            for m in row["messages"]
            if m["role"] == "assistant" and m["tool_calls"][0]["function"]["name"] == "search_papers"
        ]
        assert queries[0] == first_sentence_query(brief) and len(queries) == 4
        # the keyword searches name what the antecedents share, not the problem the brief states
        assert all(len(q.split()) <= 3 and not set(analyze(q)) & set(analyze(brief)) for q in queries[1:])


def test_the_scripted_teacher_forwards_its_keyword_searches_results_before_the_openings(distilled):
    _, out = distilled
    for line in (out / "sft.jsonl").read_text().splitlines():
        messages = json.loads(line)["messages"]
        blocks = [
            [hit["id"] for hit in json.loads(m["content"])["results"]]
            for m in messages
            if m["role"] == "tool" and "results" in m["content"]
        ]
        submitted = [p["id"] for p in messages[-2]["tool_calls"][0]["function"]["arguments"]["papers"]]
        keyword_ids = list(dict.fromkeys(pid for block in blocks[1:] for pid in block))
        assert submitted and len(set(submitted)) == len(submitted) <= 10
        # every keyword result up to the tenth paper, as shown; the opening's only after them all
        assert submitted[: len(keyword_ids)] == keyword_ids[:10]
        assert set(submitted[len(keyword_ids) :]) <= set(blocks[0])
