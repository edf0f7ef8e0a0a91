"""benchmarks.memorised: a student's scores on the train targets its SFT set showed solved, apart
from the others; and the selection's record of which targets those are."""

import json

import pytest

from benchmarks.memorised import main, measure
from hindsight.errors import UserError
from hindsight.stages import DistillOutput
from tests.helpers import episode_for, label_id, make_instances, write_jsonl, write_run


def distillation(tmp_path, selected: dict[str, bool]):
    folder = tmp_path / "distill"
    folder.mkdir()
    write_jsonl(
        folder / "candidates_manifest.jsonl",
        [{"source_instance": iid, "candidate": f"{iid}#0", "selected": kept} for iid, kept in selected.items()],
    )
    return folder


def test_demonstrated_targets_are_those_whose_candidate_the_selection_kept(tmp_path):
    folder = distillation(tmp_path, {"t0": True, "t1": False, "t2": True})
    assert DistillOutput(folder).demonstrated_targets() == {"t0", "t2"}


def test_distilled_targets_are_every_target_the_teacher_proposed_for(tmp_path):
    folder = distillation(tmp_path, {"t0": True, "t1": False, "t2": True})
    assert DistillOutput(folder).distilled_targets() == {"t0", "t1", "t2"}


def test_a_broken_candidates_manifest_is_named_by_file_and_line(tmp_path):
    folder = distillation(tmp_path, {"t0": True})
    with open(folder / "candidates_manifest.jsonl", "a") as handle:
        handle.write('{"candidate": "t1#0"}\n')
    with pytest.raises(UserError, match=r"candidates_manifest.jsonl:2: not a candidate record"):
        DistillOutput(folder).demonstrated_targets()


def test_train_targets_are_scored_apart_by_whether_a_demonstration_showed_them(tmp_path, capsys):
    instances = [{**inst, "split": "train"} for inst in make_instances(4)]
    instances_path = write_jsonl(tmp_path / "instances.jsonl", instances)
    # the student finds and submits the antecedent of t0 and t1 only
    episodes = [episode_for(f"t{i}", [label_id(i, 0)], [label_id(i, 0)] if i < 2 else ["9999.00001"]) for i in range(4)]
    run = write_run(tmp_path / "runs", "sft-on-train", episodes, instances_path)
    folder = distillation(tmp_path, {"t0": True, "t1": True, "t2": True, "t3": False})
    groups = measure(run, folder)["groups"]
    assert groups["demonstrated"]["targets"] == 3 and groups["not demonstrated"]["targets"] == 1
    assert groups["demonstrated"]["ndcg10"] == pytest.approx(2 / 3)
    assert groups["not demonstrated"]["ndcg10"] == 0.0 and groups["not demonstrated"]["exposed_gain"] == 1.0
    assert main([str(run), "--distill", str(folder), "--json", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["groups"]["demonstrated"]["targets"] == 3


def test_a_run_without_train_targets_is_refused(tmp_path, capsys):
    instances_path = write_jsonl(tmp_path / "instances.jsonl", make_instances(2))
    run = write_run(tmp_path / "runs", "eval-run", [episode_for("t0", [], [])], instances_path)
    assert main([str(run), "--distill", str(distillation(tmp_path, {"t0": True}))]) == 2
    assert "no train targets" in capsys.readouterr().err
