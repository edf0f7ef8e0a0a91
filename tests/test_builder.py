"""Building a benchmark from targets, bibliographies and a corpus, with models as judges, brief
writers and auditors: replies read, failures tolerated and counted, a killed build resumed, the
release manifest verified."""

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hindsight.builder import build, estimate_cost, load_build_config, verify_release
from hindsight.builder.builder import eligible_references
from hindsight.builder.inputs import Reference
from hindsight.builder.judging import Vote, consensus, parse_guess, parse_votes
from hindsight.schema import Paper
from tests.helpers import random_papers, write_jsonl
from tests.scripted_server import ScriptedServer, SilentServer

ROOT = Path(__file__).resolve().parents[1]


# ---- reading replies ----------------------------------------------------------------------------


def test_votes_are_read_from_fenced_json_and_unreadable_items_are_counted():
    reply = (
        '```json\n[{"index": 0, "tier": "T3", "role": "conceptual", "rationale": "builds on it"},\n'
        ' {"index": 1, "tier": "T9", "role": "conceptual"}, {"index": 7, "tier": "T1", "role": "conceptual"}]\n```'
    )
    votes, problems = parse_votes("judge", reply, 3)
    assert list(votes) == [0] and votes[0].tier == "T3" and votes[0].rationale == "builds on it"
    assert problems == [
        "item 1: tier 'T9' or role 'conceptual' unknown",
        "item 2: no usable index",
        "2 reference(s) without a vote",
    ]
    assert parse_votes("judge", "They all matter.", 3) == ({}, ["no JSON array in the reply"])
    one_a_line = (
        '[{"index": 0, "tier": "T1", "role": "conceptual"}]\n{"index": 1, "tier": "T2", "role": "conceptual"}\nDone.'
    )
    assert {i: v.tier for i, v in parse_votes("judge", one_a_line, 2)[0].items()} == {0: "T1", 1: "T2"}
    assert parse_votes("judge", "[{'index': 0}]", 1)[1][0].startswith("not valid JSON")


def test_consensus_is_the_lower_median_tier_with_the_majority_role():
    def vote(tier, role="conceptual"):
        return Vote("j", tier, role, f"{tier} {role}")

    three = consensus([vote("T3"), vote("T1", "infrastructural"), vote("T2", "infrastructural")])
    assert (three.tier, three.role, three.agreement, three.votes) == ("T2", "infrastructural", 1, 3)
    two = consensus([vote("T3"), vote("T2")])
    assert (two.tier, two.agreement, two.votes, two.rationale) == ("T2", 1, 2, "T2 conceptual")
    tied_roles = consensus([vote("T2", "infrastructural"), vote("T1", "conceptual")])
    assert tied_roles.tier == "T1" and tied_roles.role == "conceptual"  # the role of the vote at the consensus tier
    assert consensus([]) is None


def test_an_identity_guess_needs_a_title_and_a_confidence_between_zero_and_one():
    assert parse_guess('{"guess": "Attention Is All You Need", "confidence": 0.8}')[0]["confidence"] == 0.8
    assert parse_guess('{"guess": "x", "confidence": "high"}')[0] is None
    assert parse_guess("I cannot tell")[1] == "no JSON object in the reply"


def test_only_references_in_the_corpus_before_the_cutoff_and_within_four_years_are_graded(tmp_path):
    config_path = tmp_path / "build.yaml"
    config_path.write_text(
        "targets: t.jsonl\nbibliographies: b.jsonl\ncorpus: c.jsonl\njudges: [j]\ngenerator: w\nauditor: a\n"
    )
    config = load_build_config(config_path)
    target = Paper("2405.00001", "Target", dt.date(2024, 5, 20))
    papers = {
        p.id: p
        for p in [
            Paper("2401.00001", "in", dt.date(2024, 1, 10)),
            Paper("2403.00001", "late", dt.date(2024, 3, 1)),  # cutoff is 2024-02-20
            Paper("1912.00001", "old", dt.date(2019, 12, 1)),
        ]
    }
    refs = [Reference(i) for i in ("2401.00001", "2403.00001", "1912.00001", "2301.09999", "2405.00001")]
    eligible, excluded = eligible_references(target, refs, papers, config)
    assert [paper.id for _, paper in eligible] == ["2401.00001"]
    assert excluded == {
        "posted on or after the cutoff": 1,
        "older than 4 years": 1,
        "not in the corpus": 1,
        "the target itself": 1,
    }


def test_unknown_settings_are_refused_with_the_file_and_key(tmp_path):
    path = tmp_path / "build.yaml"
    path.write_text("targets: t\nbibliographies: b\ncorpus: c\njudges: [j]\ngenerator: w\nauditor: a\njudge_count: 3\n")
    with pytest.raises(ValueError, match=rf"{path}: unknown key\(s\) judge_count"):
        load_build_config(path)


# ---- end to end against servers -----------------------------------------------------------------

TITLES = [
    "GraphSparsifier: streaming cuts",
    "Unreadable title for judge b",
    "Silent target",
    "A famous result",
    "Plain target five",
    "Plain target six",
    "Plain target seven",
    "Plain target eight",
]


def write_inputs(folder: Path) -> None:
    """Eight targets posted monthly through 2024; each cites a core, a tool, a background and a noise
    paper of 2023, one paper posted after its cutoff, one of 2018 and one missing from the corpus."""
    targets, bibliographies, papers = [], [], random_papers(300, seed=3, start=dt.date(2020, 1, 1), days=1400)
    for i, title in enumerate(TITLES):
        posted = dt.date(2024, i + 2, 15)
        target_id = f"{posted:%y%m}.{90001 + i}"
        targets.append(
            {
                "id": target_id,
                "title": title,
                "abstract": f"We study {title.lower()} at scale.",
                "date": posted.isoformat(),
            }
        )
        refs = []
        for kind, date in (
            ("core", "2023-03-01"),
            ("tool", "2023-04-01"),
            ("background", "2023-05-01"),
            ("noise", "2023-06-01"),
            ("late", posted.isoformat()),
            ("old", "2018-01-10"),
        ):
            paper_id = f"{date[2:4]}{date[5:7]}.{80000 + 10 * i + len(refs)}"
            if kind == "late":
                paper_id = f"{posted:%y%m}.{80000 + 10 * i + len(refs)}"
            papers.append(Paper(paper_id, f"{kind} paper {i}", dt.date.fromisoformat(date), "an abstract"))
            refs.append({"id": paper_id, "context": f"We build on [{kind}]."})
        refs.append({"id": "2301.99999"})
        bibliographies.append({"target": target_id, "references": refs})
    write_jsonl(folder / "targets.jsonl", targets)
    write_jsonl(folder / "bibliographies.jsonl", bibliographies)
    write_jsonl(folder / "corpus.jsonl", [p.to_dict() for p in papers])


def write_config(folder: Path, judges: list[dict], url: str, **settings) -> Path:
    lines = [
        "targets: targets.jsonl",
        "bibliographies: bibliographies.jsonl",
        "corpus: corpus.jsonl",
        f"cache_dir: {folder / 'replies'}",
        "split_shares: [0.5, 0.25]",
        "judges: " + json.dumps(judges),
        "generator: " + json.dumps({"model": "openai/writer", "api_base": url, "api_key": "none"}),
        "auditor: " + json.dumps({"model": "openai/auditor", "api_base": url, "api_key": "none"}),
    ]
    lines = [line for line in lines if line.split(":")[0] not in settings]
    lines += [f"{key}: {json.dumps(value)}" for key, value in settings.items()]
    (folder / "build.yaml").write_text("\n".join(lines) + "\n")
    return folder / "build.yaml"


@pytest.fixture
def servers():
    scripted, silent = ScriptedServer(), SilentServer()
    yield scripted, silent
    scripted.close()
    silent.close()


def test_a_build_grades_by_consensus_tolerates_failed_judges_and_verifies(tmp_path, servers):
    scripted, silent = servers
    write_inputs(tmp_path)
    judges = [{"model": f"openai/judge-{name}", "api_base": scripted.url, "api_key": "none"} for name in "ab"]
    judges.append(
        {"model": "openai/judge-c", "api_base": silent.url, "api_key": "none", "timeout_s": 1.0, "max_retries": 1}
    )
    config = load_build_config(write_config(tmp_path, judges, scripted.url, chunk_targets=4))
    manifest = json.loads(build(config, tmp_path / "release", progress=False).read_text())
    instances = {
        json.loads(line)["target"]["title"]: json.loads(line)
        for line in (tmp_path / "release" / "instances.jsonl").read_text().splitlines()
    }

    assert set(instances) == set(TITLES) - {"Silent target"}
    assert manifest["counts"]["excluded"] == {"no brief: a brief of 0 words (under 30)": 1}
    plain = instances["Plain target five"]
    # judge-a says T3 for the core paper, judge-b T2, judge-c timed out: the lower median of two is T2
    assert [(label["title"], label["tier"], label["role"]) for label in plain["labels"]] == [
        ("core paper 4", "T2", "conceptual"),
        ("tool paper 4", "T2", "infrastructural"),
        ("background paper 4", "T1", "conceptual"),
    ]  # the noise paper was T0; late, old and missing ungraded
    assert [(a["agreement"], a["votes"]) for a in plain["audit"]["labels"]] == [(1, 2), (2, 2), (2, 2)]
    unreadable = instances["Unreadable title for judge b"]  # judge-b's prose reply is no vote: judge-a alone
    assert unreadable["labels"][0]["tier"] == "T3" and unreadable["audit"]["labels"][0]["votes"] == 1
    calls = manifest["calls_this_run"]
    assert calls["openai/judge-c"]["failed"] == calls["openai/judge-c"]["requests"] == len(TITLES)
    assert calls["openai/judge-b"]["failed"] == 0
    assert manifest["counts"]["judge_replies_with_problems"] == len(TITLES) + 1  # judge-c each time, judge-b once
    assert manifest["counts"]["votes_missing"] == 4 * len(TITLES) + 4  # four graded references a target

    named = instances["GraphSparsifier: streaming cuts"]
    assert "GraphSparsifier" not in named["brief"] + named["brief_terse"]  # the name, removed by rule
    assert instances["A famous result"]["audit"]["flagged"] is True
    assert instances["Plain target five"]["audit"]["flagged"] is False
    assert sorted(manifest["flagged"]) == [instances["A famous result"]["id"]]
    by_date = sorted(instances.values(), key=lambda i: i["target"]["date"])
    assert [i["split"] for i in by_date] == ["train"] * 4 + ["dev"] + ["eval"] * 2  # shares 0.5 and 0.25 of 7
    assert manifest["splits"]["eval"] == [i["id"] for i in by_date[-2:]]
    assert manifest["models"]["judges"] == ["openai/judge-a", "openai/judge-b", "openai/judge-c"]
    assert "api_key" not in json.dumps(manifest["settings"])

    assert verify_release(tmp_path / "release") == []
    tampered = tmp_path / "release" / "instances.jsonl"
    tampered.write_text(tampered.read_text().replace('"T2"', '"T3"', 1))
    assert verify_release(tmp_path / "release")[0].startswith("instances.jsonl: sha256")

    from hindsight.data import load_benchmark

    _, loaded, _ = load_benchmark(tmp_path / "release")  # the native loader reads the release (tampered or not)
    assert len(loaded) == 7


def test_a_second_build_into_the_same_folder_asks_nothing_again_and_refuses_other_settings(tmp_path, servers):
    scripted, _ = servers
    write_inputs(tmp_path)
    judges = [{"model": "openai/judge-a", "api_base": scripted.url, "api_key": "none"}]
    config = load_build_config(write_config(tmp_path, judges, scripted.url))
    first = (build(config, tmp_path / "release", progress=False).parent / "instances.jsonl").read_bytes()
    asked = len(scripted.requests)
    again = json.loads(build(config, tmp_path / "release", progress=False).read_text())
    assert len(scripted.requests) == asked and again["calls_this_run"] == {}
    assert (tmp_path / "release" / "instances.jsonl").read_bytes() == first
    other = load_build_config(write_config(tmp_path, judges, scripted.url, cutoff_months=6))
    with pytest.raises(ValueError, match="cutoff_months differ"):
        build(other, tmp_path / "release", progress=False)


def kill_after_two_targets(command: list[str], done: Path) -> list[str]:
    """Start the build, SIGKILL it once two targets are recorded; the targets it had finished."""
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while not (done.exists() and done.read_text().count("\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = [json.loads(line)["target"] for line in done.read_text().splitlines()]
    assert 2 <= len(finished) < len(TITLES)
    return finished


def resume(command: list[str], finished_before: list[str]) -> None:
    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(finished_before)} done before" in resumed.stderr


def test_a_killed_build_resumes_without_asking_for_what_it_had(tmp_path):
    scripted = ScriptedServer(delay_s=0.4)
    try:
        write_inputs(tmp_path)
        judges = [{"model": "openai/judge-a", "api_base": scripted.url, "api_key": "none"}]
        config_path = write_config(tmp_path, judges, scripted.url, chunk_targets=2, concurrency=2)
        command = [
            sys.executable,
            "-m",
            "hindsight.builder",
            "run",
            str(config_path),
            "--out",
            str(tmp_path / "release"),
        ]
        finished_before = kill_after_two_targets(command, tmp_path / "release" / "work" / "done.jsonl")
        asked_before = list(scripted.requests)
        resume(command, finished_before)
        asked_after = scripted.requests[len(asked_before) :]
        targets = {json.loads(line)["id"]: json.loads(line)["title"] for line in (tmp_path / "targets.jsonl").open()}
        assert not any(targets[t] in user for t in finished_before for _, _, user in asked_after)
        assert len([r for r in asked_after if r in asked_before]) <= 2  # only what was in flight at the kill

        # the same release as a build that was never interrupted (every reply now comes from the cache)
        config = load_build_config(config_path)
        build(config, tmp_path / "uninterrupted", progress=False)
        for name in ("instances.jsonl", "graded.jsonl"):
            assert (tmp_path / "release" / name).read_bytes() == (tmp_path / "uninterrupted" / name).read_bytes()
    finally:
        scripted.close()


def test_a_build_against_transformers_serve_counts_what_a_random_model_cannot_answer(tmp_path, tiny_model, tiny_server):
    """The tiny random-weight model writes no JSON and no brief: every reply is read, counted and
    survived, a judge that never answers times out beside it, and a rerun asks nothing again."""
    silent = SilentServer()
    try:
        write_inputs(tmp_path)
        lines = (tmp_path / "targets.jsonl").read_text().splitlines()[:3]
        (tmp_path / "targets.jsonl").write_text("\n".join(lines) + "\n")
        model = {"model": f"openai/{tiny_model}", "api_base": tiny_server, "api_key": "none", "max_tokens": 24}
        judges = [
            model,
            {"model": "openai/never", "api_base": silent.url, "api_key": "none", "timeout_s": 1.0, "max_retries": 0},
        ]
        path = write_config(tmp_path, judges, tiny_server)
        config = load_build_config(path, {"generator": model, "auditor": model})
        manifest = json.loads(build(config, tmp_path / "release", progress=False).read_text())
        counts = manifest["counts"]
        assert counts["targets"] == 3 and counts["instances"] == 0
        assert sum(counts["excluded"].values()) == 3 and all(r.startswith("no brief") for r in counts["excluded"])
        assert counts["judge_replies_with_problems"] == 2 * 3 and counts["votes_missing"] == 2 * 3 * 4
        calls = manifest["calls_this_run"]
        assert calls[f"openai/{tiny_model}"]["failed"] == 0 and calls[f"openai/{tiny_model}"]["completion_tokens"] > 0
        assert calls["openai/never"]["failed"] == 3
        assert verify_release(tmp_path / "release") == []
        again = json.loads(build(config, tmp_path / "release", progress=False).read_text())
        assert again["calls_this_run"] == {} and again["tokens_all_targets"] == manifest["tokens_all_targets"]
    finally:
        silent.close()


def test_a_build_killed_while_transformers_serve_answers_resumes_from_its_finished_targets(
    tmp_path, tiny_model, tiny_server
):
    silent = SilentServer()  # a judge that times out after a second paces the build, so the kill lands mid-way
    try:
        write_inputs(tmp_path)
        model = {"model": f"openai/{tiny_model}", "api_base": tiny_server, "api_key": "none", "max_tokens": 24}
        judges = [
            model,
            {"model": "openai/never", "api_base": silent.url, "api_key": "none", "timeout_s": 1.0, "max_retries": 0},
        ]
        config_path = write_config(tmp_path, judges, tiny_server, chunk_targets=1, generator=model, auditor=model)
        command = [
            sys.executable,
            "-m",
            "hindsight.builder",
            "run",
            str(config_path),
            "--out",
            str(tmp_path / "release"),
        ]
        finished_before = kill_after_two_targets(command, tmp_path / "release" / "work" / "done.jsonl")
        resume(command, finished_before)
        graded = [json.loads(line) for line in (tmp_path / "release" / "graded.jsonl").read_text().splitlines()]
        assert len(graded) == len(TITLES) and all(r["judge_problems"]["openai/never"] for r in graded)
        assert verify_release(tmp_path / "release") == []
    finally:
        silent.close()


def test_the_cost_of_an_instance_is_estimated_from_the_recorded_tokens():
    manifest = {
        "tokens_all_targets": {"prompt": 1_000_000, "completion": 100_000},
        "counts": {"targets": 10, "instances": 8},
    }
    cost = estimate_cost(manifest, "gpt-4o")
    import litellm

    prices = litellm.model_cost["gpt-4o"]
    expected = 1_000_000 * prices["input_cost_per_token"] + 100_000 * prices["output_cost_per_token"]
    assert cost["total_usd"] == pytest.approx(expected) and cost["per_instance_usd"] == pytest.approx(expected / 8)
    with pytest.raises(ValueError, match="no price for 'my-local-model'"):
        estimate_cost(manifest, "my-local-model")
