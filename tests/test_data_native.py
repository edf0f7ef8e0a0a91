import json

import pytest

from hindsight.data import InstanceError, load_benchmark, load_instances
from hindsight.data.native import (
    load_native,
    months_before,
    prepare_instances,
    split_by_date,
)
from hindsight.schema import Instance
from tests.helpers import write_jsonl

CORPUS = [
    {"id": f"2401.{i:05d}", "title": f"Paper {i}", "abstract": "a", "date": f"2024-01-{i:02d}"} for i in range(1, 16)
]
CORPUS += [
    {"id": "2406.00001", "title": "Late", "abstract": "", "date": "2024-06-02"},
    {"id": "2409.00001", "title": "Target", "abstract": "", "date": "2024-09-01"},
]


def record(iid="i1", split="eval", labels=None, target="2409.00001", cutoff="2024-06-01"):
    return {
        "id": iid,
        "split": split,
        "brief": "b",
        "cutoff": cutoff,
        "target": {"id": target, "title": "T", "date": "2024-09-01"},
        "labels": labels
        if labels is not None
        else [{"id": "2401.00001", "tier": "T3"}, {"id": "2401.00002", "tier": "T1"}],
    }


def write_native(tmp_path, instances, corpus=CORPUS):
    write_jsonl(tmp_path / "corpus.jsonl", corpus)
    write_jsonl(tmp_path / "instances.jsonl", instances)
    return tmp_path


def test_native_format_round_trips(tmp_path):
    original = [Instance.from_dict(record())]
    write_native(tmp_path, [inst.to_dict() for inst in original])
    corpus, loaded, report = load_native(tmp_path)
    assert [inst.to_dict()["labels"][0]["id"] for inst in loaded] == ["2401.00001"]
    assert loaded[0].labels[0].date.isoformat() == "2024-01-01"  # filled in from the corpus
    write_jsonl(tmp_path / "again.jsonl", [inst.to_dict() for inst in loaded])
    assert load_instances(tmp_path / "again.jsonl") == loaded
    assert report.kept_by_split == {"eval": 1} and len(corpus) == len(CORPUS)


def test_labels_on_or_after_the_cutoff_are_dropped_and_counted(tmp_path):
    labels = [
        {"id": "2401.00001", "tier": "T3"},
        {"id": "2401.00002", "tier": "T2"},
        {"id": "2406.00001", "tier": "T3"},
        {"id": "2401.00003", "tier": "T1", "date": "2024-07-01"},
    ]
    _, instances, report = load_native(write_native(tmp_path, [record(labels=labels)]))
    assert [lab.id for lab in instances[0].labels] == ["2401.00001", "2401.00002"]
    assert report.labels_post_cutoff == 2


def test_labels_outside_the_corpus_are_reported_and_kept(tmp_path):
    labels = [{"id": "2401.00001", "tier": "T3"}, {"id": "2312.99999", "tier": "T1"}]
    _, instances, report = load_native(write_native(tmp_path, [record(labels=labels)]))
    assert len(instances[0].labels) == 2 and report.labels_outside_corpus == [("i1", "2312.99999")]


def test_at_most_ten_labels_are_kept_by_gain(tmp_path):
    labels = [{"id": f"2401.{i:05d}", "tier": "T1" if i > 3 else "T3"} for i in range(1, 15)]
    _, instances, report = load_native(write_native(tmp_path, [record(labels=labels)]))
    kept = instances[0].labels
    assert len(kept) == 10 and [lab.tier for lab in kept[:3]] == ["T3"] * 3 and report.labels_over_cap == 4


def test_gains_default_from_tier_and_role(tmp_path):
    labels = [{"id": "2401.00001", "tier": "T2", "role": "infrastructural"}, {"id": "2401.00002", "tier": "T2"}]
    _, instances, _ = load_native(write_native(tmp_path, [record(labels=labels)]))
    assert sorted(lab.gain for lab in instances[0].labels) == [2.0, 3.0]


def test_instance_with_fewer_than_two_labels_is_excluded_with_a_reason(tmp_path):
    labels = [{"id": "2401.00001", "tier": "T3"}, {"id": "2406.00001", "tier": "T3"}]
    _, instances, report = load_native(
        write_native(tmp_path, [record(labels=labels), record("i2", target="2406.00001")])
    )
    assert [inst.id for inst in instances] == ["i2"]
    assert report.excluded == {"i1": "fewer than 2 labels before the cutoff"}
    assert "1 excluded" in report.summary()


def test_the_target_is_never_its_own_label():
    instance = Instance.from_dict(
        record(
            labels=[
                {"id": "2409.00001", "tier": "T3"},
                {"id": "2401.00001", "tier": "T1"},
                {"id": "2401.00002", "tier": "T1"},
            ],
            cutoff="2024-08-01",
        )
    )
    kept, report = prepare_instances([instance], None)
    assert "2409.00001" not in {lab.id for lab in kept[0].labels} and report.labels_equal_to_target == 1


def test_splits_must_be_target_disjoint(tmp_path):
    write_native(tmp_path, [record("i1", split="train"), record("i2", split="eval")])
    with pytest.raises(InstanceError, match="target 2409.00001 is in split train .* and in split eval"):
        load_native(tmp_path)


@pytest.mark.parametrize(
    "line, message",
    [
        ("{oops", "instances.jsonl:2: not valid JSON"),
        (json.dumps({**record("i2"), "split": "test"}), r"instances.jsonl:2: field 'split'"),
        (json.dumps(record("i1")), r"instances.jsonl:2: a second instance id 'i1' \(first at line 1\)"),
        (
            json.dumps({**record("i2"), "labels": [{"id": "nope", "tier": "T1"}]}),
            r"instances.jsonl:2 labels\[0\]: field 'id'",
        ),
    ],
)
def test_bad_instance_lines_fail_with_file_line_and_reason(tmp_path, line, message):
    write_native(tmp_path, [record(), line])
    with pytest.raises(InstanceError, match=message):
        load_native(tmp_path)


def test_split_by_date_is_70_10_20_by_target_date():
    instances = [Instance.from_dict(record(f"i{n}", target=f"2409.{n + 1:05d}")) for n in range(10)]
    instances = [
        inst.__class__(
            **{
                **inst.__dict__,
                "target": inst.target.__class__(id=inst.target.id, title="T", date=inst.target.date.replace(day=1 + n)),
            }
        )
        for n, inst in enumerate(instances)
    ]
    splits = [inst.split for inst in split_by_date(list(reversed(instances)))]
    assert splits == ["train"] * 7 + ["dev"] + ["eval"] * 2


def test_months_before_clamps_to_the_end_of_the_month():
    import datetime as dt

    assert months_before(dt.date(2025, 5, 31), 3) == dt.date(2025, 2, 28)
    assert months_before(dt.date(2024, 5, 31), 3) == dt.date(2024, 2, 29)
    assert months_before(dt.date(2025, 1, 15), 3) == dt.date(2024, 10, 15)


def test_load_benchmark_names_what_it_wants(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a benchmark"):
        load_benchmark(tmp_path)
