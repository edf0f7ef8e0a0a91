import datetime as dt
import hashlib
from collections import Counter

import pytest

from hindsight.data import load_benchmark
from hindsight.data.world import World, write_world
from hindsight.metrics import oracle_gain
from hindsight.search.bm25 import BM25Backend
from hindsight.search.text import analyze


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("world")
    write_world(out, seed=0)
    return out


@pytest.fixture(scope="module")
def world(world_dir):
    corpus, instances, report = load_benchmark(world_dir)
    return corpus, instances, report


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_other_seed_other_world(world_dir, tmp_path):
    write_world(tmp_path / "again", seed=0)
    write_world(tmp_path / "other", seed=1)
    for name in ("corpus.jsonl", "instances.jsonl"):
        assert digest(world_dir / name) == digest(tmp_path / "again" / name)
        assert digest(world_dir / name) != digest(tmp_path / "other" / name)


def test_size_splits_and_build_time(world_dir, world):
    import json

    info = json.loads((world_dir / "world.json").read_text())
    corpus, instances, report = world
    assert 19_000 <= len(corpus) <= 21_000 and info["seconds"] < 30
    splits = Counter(inst.split for inst in instances)
    assert splits["train"] >= 400 and splits["dev"] >= 50 and splits["eval"] >= 100
    assert corpus.dates[0] >= dt.date(2015, 1, 1) and corpus.dates[-1] <= dt.date(2025, 12, 31)
    assert not report.excluded and report.labels_post_cutoff == 0
    last_train = max(i.target.date for i in instances if i.split == "train")
    assert all(i.target.date >= last_train for i in instances if i.split == "eval")


def test_briefs_never_name_the_targets_mechanism(world):
    _, instances, _ = world
    vocab = World(0).vocab
    for inst in instances:
        variant = inst.audit["variant"]
        mechanism = set(analyze(" ".join(vocab.family[variant // 4] + vocab.variant[variant])))
        for text in (inst.brief, inst.brief_terse):
            assert not mechanism & set(analyze(text)), inst.id
        assert set(analyze(" ".join(vocab.sub[inst.audit["subproblem"]]))) & set(analyze(inst.brief))


def test_antecedents_are_earlier_and_graded_by_how_they_relate(world):
    corpus, instances, _ = world
    for inst in instances:
        assert all(lab.date < inst.cutoff for lab in inst.labels)
        assert inst.target.id not in {lab.id for lab in inst.labels}
        assert {lab.tier for lab in inst.labels} <= {"T1", "T2", "T3"}


def test_brief_words_mostly_find_T1_while_the_learnable_mechanism_finds_T3(world, tmp_path):
    """The phenomenon the demo rests on, measured with the real search backend."""
    corpus, instances, _ = world
    backend = BM25Backend(corpus, cache_dir=tmp_path)
    vocab = World(0).vocab
    brief_tiers, learned_tiers = Counter(), Counter()
    brief_gain = learned_gain = 0.0
    evaluation = [inst for inst in instances if inst.split == "eval"]
    for inst in evaluation:
        tier = {lab.id: lab.tier for lab in inst.labels}
        brief_ids = [h.id for h in backend.search(inst.brief, inst.cutoff, 10)]
        learned_query = " ".join(vocab.sub[inst.audit["subproblem"]][:3] + vocab.variant[inst.audit["variant"]][:3])
        learned_ids = [h.id for h in backend.search(learned_query, inst.cutoff, 10)]
        brief_tiers.update(tier[i] for i in brief_ids if i in tier)
        learned_tiers.update(tier[i] for i in learned_ids if i in tier)
        brief_gain += oracle_gain(brief_ids, inst.gains)
        learned_gain += oracle_gain(learned_ids, inst.gains)
    assert brief_tiers["T1"] > 3 * (brief_tiers["T3"] + brief_tiers["T2"])
    assert learned_tiers["T3"] > brief_tiers["T3"] * 5
    assert learned_gain > 3 * brief_gain


def test_eval_antecedents_are_mostly_newer_than_any_training_targets(world):
    """Lines keep publishing and a target's antecedents are its lines' newest papers, so an id
    learned by heart from a training demonstration is rarely worth anything at evaluation."""
    _, instances, _ = world
    trained = {lab.id for inst in instances if inst.split == "train" for lab in inst.labels}
    evaluation = [lab for inst in instances if inst.split == "eval" for lab in inst.labels]
    shared_gain = sum(lab.gain for lab in evaluation if lab.id in trained) / sum(lab.gain for lab in evaluation)
    assert shared_gain < 0.10


def test_searches_of_a_lines_words_find_its_newest_papers_before_the_cutoff(world, tmp_path):
    """Later papers of a line use its words more densely, so the T3 antecedents (the newest
    before the cutoff) lead searches of the line's words rather than drown among ~20 older papers."""
    corpus, instances, _ = world
    backend = BM25Backend(corpus, cache_dir=tmp_path)
    vocab = World(0).vocab
    found = total = 0
    for inst in [inst for inst in instances if inst.split == "eval"]:
        t3 = {lab.id for lab in inst.labels if lab.tier == "T3"}
        sub, variant = vocab.sub[inst.audit["subproblem"]], vocab.variant[inst.audit["variant"]]
        surfaced = set()
        for first, second in ((0, 1), (2, 3), (4, 0)):
            query = " ".join([sub[first], sub[second], variant[first], variant[second]])
            surfaced |= {hit.id for hit in backend.search(query, inst.cutoff, 5)}
        found += len(t3 & surfaced)
        total += len(t3)
    assert found / total > 0.3
