"""benchmarks/vllm_speed.py's judgement of an arm: the same actions as the baseline, and the paired
difference of its scores with an interval that must hold zero."""

from benchmarks.vllm_speed import agreement
from hindsight.data import load_benchmark
from hindsight.policy.scripted import BM25OneShot
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.schema import tasks_of
from hindsight.search.bm25 import BM25Backend


def test_an_arm_agrees_only_when_its_episodes_score_like_the_baselines(tmp_path):
    corpus, instances, _ = load_benchmark("world")
    targets = [inst for inst in instances if inst.split == "eval"][:12]
    backend = BM25Backend(corpus, cache_dir=tmp_path / "index")

    def run(name, policy):
        run_episodes(policy, tasks_of(targets), backend, ProtocolConfig(), tmp_path / name, progress=False)
        return tmp_path / name

    baseline, again = run("baseline", BM25OneShot()), run("again", BM25OneShot())
    same = agreement(baseline, again, targets)
    assert same["same_actions"] == len(targets) and same["agrees"]
    assert all(d["diff"] == 0 for d in same["differences"].values())

    # one-word queries find far less: an arm that plays otherwise and scores worse is told apart
    worse = agreement(baseline, run("one-word", BM25OneShot(max_query_words=1)), targets)
    assert worse["same_actions"] < len(targets)
    assert worse["differences"]["exposed_gain"]["diff"] < 0
    assert not worse["agrees"]
