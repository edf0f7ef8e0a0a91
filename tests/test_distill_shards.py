"""distill/teacher.py --shard I/N and --merge N: an array job's pieces add up to the whole run."""

import json

import pytest

from hindsight.distill.teacher import main as teacher_main
from hindsight.shards import parse_shard


def _recipe(root, out):
    recipe = root / f"{out}.yaml"
    recipe.write_text(
        f"data:\n  source: world\nprotocol:\n  budget: 6\n"
        f"distill:\n  out_dir: {root / out}\n  candidates: 2\n  max_targets: 5\n"
    )
    return recipe


def _records(folder):
    return [json.loads(line) for line in (folder / "candidates" / "episodes.jsonl").read_text().splitlines()]


def test_merged_shards_equal_an_unsharded_run(tmp_path):
    whole, sharded = _recipe(tmp_path, "whole"), _recipe(tmp_path, "sharded")
    assert teacher_main([str(whole)]) == 0
    for index in range(3):
        assert teacher_main([str(sharded), "--shard", f"{index}/3"]) == 0
    assert teacher_main([str(sharded), "--merge", "3"]) == 0

    def key(record):
        return {k: v for k, v in record.items() if k not in ("latency_s", "started_at")}

    expected = sorted((key(r) for r in _records(tmp_path / "whole")), key=lambda r: r["instance_id"])
    merged = sorted((key(r) for r in _records(tmp_path / "sharded")), key=lambda r: r["instance_id"])
    assert [r["instance_id"] for r in merged] == [r["instance_id"] for r in expected]
    assert merged == expected
    manifest = json.loads((tmp_path / "sharded" / "candidates" / "manifest.json").read_text())
    assert manifest["merged_shards"] == 3 and manifest["counts"]["attempted"] == len(expected) == 2 * 5 * 2


def test_merging_with_a_shard_missing_names_it(tmp_path, capsys):
    recipe = _recipe(tmp_path, "partial")
    assert teacher_main([str(recipe), "--shard", "0/2"]) == 0
    assert teacher_main([str(recipe), "--merge", "2"]) == 2
    assert "shard 1 of 2 has no manifest" in capsys.readouterr().err
    assert not (tmp_path / "partial" / "candidates" / "episodes.jsonl").exists()


@pytest.mark.parametrize("text", ["3", "2/2", "-1/4", "a/b"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(ValueError, match="--shard"):
        parse_shard(text)
