import datetime as dt

import pytest

from hindsight.schema import (
    Episode,
    Instance,
    Label,
    Paper,
    SchemaError,
    Task,
    parse_date,
)


def instance_record(**overrides):
    record = {
        "id": "inst-1",
        "split": "eval",
        "brief": "We want to know X.",
        "cutoff": "2025-01-15",
        "target": {"id": "2504.00001v2", "title": "Target", "date": "2025-04-15"},
        "labels": [
            {"id": "2401.00001", "tier": "T3", "role": "conceptual", "title": "A", "abstract": "a"},
            {"id": "2402.00002v1", "tier": "T1", "role": "infrastructural"},
        ],
        "audit": {"flagged": False},
    }
    record.update(overrides)
    return record


def test_paper_round_trips_and_loses_its_version_suffix():
    paper = Paper.from_dict({"id": "2401.01234v3", "title": "T", "abstract": "A", "date": "2024-01-03T17:00:00Z"})
    assert paper.id == "2401.01234" and paper.date == dt.date(2024, 1, 3)
    assert Paper.from_dict(paper.to_dict()) == paper


@pytest.mark.parametrize(
    "record, field",
    [
        ({"title": "T", "date": "2024-01-01"}, "'id'"),
        ({"id": "2401.00001", "date": "2024-01-01"}, "'title'"),
        ({"id": "2401.00001", "title": "T"}, "'date'"),
        ({"id": "2401.00001", "title": "   ", "date": "2024-01-01"}, "'title' is empty"),
        ({"id": "2401.00001", "title": "T", "date": "January 2024"}, "unparseable date"),
        ({"id": "2401.00001", "title": "T", "date": "2024-01-01junk"}, "unparseable date"),
        ({"id": "not-an-id", "title": "T", "date": "2024-01-01"}, "not an arXiv id"),
        ({"id": 2401.00001, "title": "T", "date": "2024-01-01"}, "expected str"),
        ({"id": "2401.00001", "title": "T", "date": "2024-01-01", "categories": "cs.LG"}, "'categories'"),
    ],
)
def test_bad_paper_record_names_the_field(record, field):
    with pytest.raises(SchemaError, match=field) as info:
        Paper.from_dict(record, where="corpus.jsonl:7")
    assert str(info.value).startswith("corpus.jsonl:7: ")


def test_label_gain_defaults_from_tier_and_role():
    gains = {
        (role, tier): Label.from_dict({"id": "2401.00001", "tier": tier, "role": role}).gain
        for role in ("conceptual", "infrastructural")
        for tier in ("T1", "T2", "T3")
    }
    assert gains == {
        ("conceptual", "T1"): 1,
        ("conceptual", "T2"): 3,
        ("conceptual", "T3"): 7,
        ("infrastructural", "T1"): 0.5,
        ("infrastructural", "T2"): 2,
        ("infrastructural", "T3"): 4,
    }


def test_label_with_unknown_tier_or_nonpositive_gain_is_rejected():
    with pytest.raises(SchemaError, match="'tier'"):
        Label.from_dict({"id": "2401.00001", "tier": "T4"})
    with pytest.raises(SchemaError, match="'gain'"):
        Label.from_dict({"id": "2401.00001", "tier": "T1", "gain": 0})
    with pytest.raises(SchemaError, match="'gain'.*bool"):
        Label.from_dict({"id": "2401.00001", "tier": "T1", "gain": True})


def test_instance_round_trips():
    instance = Instance.from_dict(instance_record())
    assert instance.target.id == "2504.00001"
    assert instance.gains == {"2401.00001": 7.0, "2402.00002": 0.5}
    assert Instance.from_dict(instance.to_dict()) == instance


def test_instance_errors_point_into_nested_records():
    record = instance_record()
    record["labels"][1]["tier"] = "gold"
    with pytest.raises(SchemaError, match=r"instances.jsonl:3 labels\[1\]: field 'tier'"):
        Instance.from_dict(record, where="instances.jsonl:3")
    with pytest.raises(SchemaError, match="duplicate label id"):
        Instance.from_dict(
            instance_record(labels=[{"id": "2401.00001", "tier": "T1"}, {"id": "2401.00001v2", "tier": "T2"}])
        )
    with pytest.raises(SchemaError, match="'split'"):
        Instance.from_dict(instance_record(split="test"))


def test_task_carries_only_an_opaque_id_the_brief_and_the_cutoff():
    instance = Instance.from_dict(instance_record(id="world-2504.00001"))
    task = instance.task()
    assert (task.brief, task.cutoff, task.sample) == ("We want to know X.", dt.date(2025, 1, 15), 0)
    assert set(task.to_dict()) == {"task_id", "brief", "cutoff", "sample"}
    text = str(task.to_dict())
    for private in ("world", "2504", "00001", "2401.00001", "2402.00002"):
        assert private not in text
    assert Task.from_dict(task.to_dict()) == task


def test_task_ids_are_stable_within_a_process_and_differ_by_sample():
    instance = Instance.from_dict(instance_record())
    assert instance.task().task_id == instance.task().task_id
    assert instance.task(sample=1).task_id != instance.task().task_id
    assert instance.task(sample=1).sample == 1
    other = Instance.from_dict(instance_record(id="inst-2"))
    assert other.task().task_id != instance.task().task_id


def test_a_task_id_cannot_be_recomputed_from_the_instance_id():
    """The key is per process: another interpreter maps the same instance to another id, so no
    hash over the corpus's ids can recover the target."""
    import subprocess
    import sys

    code = "from hindsight.schema import opaque_task_id; print(opaque_task_id('world-2504.00001'))"
    ids = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        for _ in range(2)
    }
    assert len(ids) == 2 and all(i.startswith("task-") for i in ids)


def test_episode_round_trips_and_orders_first_exposure():
    record = {
        "instance_id": "i",
        "policy": "p",
        "protocol_hash": "h",
        "status": "submitted",
        "calls": 3,
        "steps": [
            {"tool": "search_papers", "args": {"query": "q"}, "returned_ids": ["b", "a"]},
            {"tool": "search_papers", "args": {"query": "r"}, "returned_ids": ["a", "c"]},
        ],
        "submission": [{"id": "2401.00001v2", "rationale": "r"}],
    }
    episode = Episode.from_dict(record)
    assert episode.exposure_order() == ["b", "a", "c"]
    assert episode.submission[0].id == "2401.00001v2"  # kept as written; the scorer canonicalises
    assert Episode.from_dict(episode.to_dict()) == episode
    with pytest.raises(SchemaError, match="'status'"):
        Episode.from_dict({**record, "status": "done"})


def test_parse_date_accepts_dates_and_timestamps_only():
    assert parse_date("2025-04-08T00:00:00+00:00") == dt.date(2025, 4, 8)
    assert parse_date(dt.datetime(2025, 4, 8, 23, 59)) == dt.date(2025, 4, 8)
    for bad in ("2025-13-01", "2025/04/08", "", 20250408):
        with pytest.raises(SchemaError):
            parse_date(bad)
