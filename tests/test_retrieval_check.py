"""The validator's second line (hindsight/distill/retrieval.py): assistant text whose words beyond
the public ones find an unsurfaced private paper through the search index is flagged; quoting
what a search returned, or the brief, never is."""

import json
import random
from functools import cache

from hypothesis import assume, given
from hypothesis import strategies as st

from hindsight.data import load_benchmark
from hindsight.distill.retrieval import NO_CUTOFF, retrieval_findings
from hindsight.leaks import content_words, spelled, terms
from hindsight.search.bm25 import BM25Backend
from tests.helpers import SHARED_DATA
from tests.leak_helpers import SETTINGS, conversation, digits_for_letters, marked, private_for


@cache
def sources() -> tuple:
    """(backend, instances) of the world and, where present, of the DeepScholar fixture."""
    names = ["world"] + (
        [str(SHARED_DATA / "deepscholar-bench")] if (SHARED_DATA / "deepscholar-bench").exists() else []
    )
    out = []
    for name in names:
        corpus, instances, _ = load_benchmark(name)
        out.append((BM25Backend(corpus), [inst for inst in instances if inst.split in ("train", "dev")][:60]))
    return tuple(out)


def an_instance(draw):
    backend, instances = draw(st.sampled_from(sources()))
    return backend, draw(st.sampled_from(instances))


def found(backend, text: str) -> str | None:
    best = backend.search(text, NO_CUTOFF, 1)
    return best[0].id if best else None


@SETTINGS
@given(st.data(), st.sampled_from(["plain", "digits for letters", "marks"]))
def test_a_labels_abstract_words_scattered_in_a_rationale_are_found_through_the_index(data, disguise):
    """Words of a label's abstract, shuffled (no phrase of it survives) and cut below the title
    share: the string rules have nothing to hold on to; the index still finds the paper."""
    backend, instance = an_instance(data.draw)
    label = data.draw(st.sampled_from(instance.labels))
    public = terms(instance.brief)
    pool = sorted({w for w in content_words(label.abstract) if spelled(w) not in public and len(w) > 3})
    assume(len(pool) >= 8)
    chosen = random.Random(data.draw(st.integers(0, 10**6))).sample(pool, 8)
    assume(found(backend, " ".join(chosen)) == label.id)  # these words do point at the label
    text = " ".join(chosen)
    text = {
        "plain": lambda t: t,
        "digits for letters": lambda t: data.draw(digits_for_letters(t)),
        "marks": lambda t: data.draw(marked(t)),
    }[disguise](text)
    messages = conversation(instance, ["keyword search"], rationale=f"a close method: {text}", submit=("2001.00001",))
    findings = retrieval_findings(messages, backend, private_for(instance), instance.brief)
    assert any(label.id in f.reason for f in findings), text


@SETTINGS
@given(st.data())
def test_quoting_surfaced_papers_and_the_brief_is_never_flagged_by_the_index(data):
    backend, instance = an_instance(data.draw)
    shown = data.draw(st.lists(st.sampled_from(instance.labels), min_size=1, max_size=3, unique_by=lambda lab: lab.id))
    returned = [{"id": lab.id, "title": lab.title} for lab in shown]
    brief_words = content_words(instance.brief)
    pieces = [f'"{lab.title}" studies a close problem' for lab in shown] + [
        " ".join(data.draw(st.lists(st.sampled_from(brief_words), min_size=4, max_size=12)))
    ]
    rationale = data.draw(st.sampled_from(pieces))
    messages = conversation(
        instance,
        ["keyword search"],
        papers=returned,
        rationale=rationale,
        content=data.draw(st.sampled_from(["", instance.brief])),
        submit=(shown[0].id,),
    )
    assert retrieval_findings(messages, backend, private_for(instance), instance.brief) == [], rationale


def test_the_replay_validator_flags_what_the_index_finds_and_its_setting_turns_it_off():
    from hindsight.distill.config import DistillConfig
    from hindsight.distill.replay import Validator
    from hindsight.protocol import ProtocolConfig
    from hindsight.schema import Episode

    backend, instances = sources()[0]
    corpus, _, _ = load_benchmark("world")
    for instance in instances:
        label = instance.labels[0]
        words = [w for w in content_words(label.abstract) if spelled(w) not in terms(instance.brief)][:10]
        if found(backend, " ".join(words)) == label.id:
            break
    else:
        raise AssertionError("no world label found by ten words of its abstract")
    messages = conversation(instance, ["keyword search"], rationale=" ".join(reversed(words)))
    candidate = Episode(instance_id=f"{instance.id}#0", policy="test", protocol_hash="", messages=messages)
    private = {instance.id: private_for(instance)}

    def replayed(cfg):
        return Validator(backend, ProtocolConfig(budget=6), corpus, cfg, private).replay(candidate, instance)

    def reasons(cfg):
        return [reason for reason in replayed(cfg).reasons if "best match in the search index" in reason]

    # a rationale reaches a row only where the recipe keeps rationales; then the index line judges it
    assert any(label.id in reason for reason in reasons(DistillConfig(keep_rationales=True)))
    assert reasons(DistillConfig(keep_rationales=True, retrieval_words=None)) == []
    assert "rationale" not in json.dumps(replayed(DistillConfig()).messages)
