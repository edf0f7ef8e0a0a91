"""The scripted teacher's submission on conversations made by hand."""

import datetime as dt
import json

from hindsight.distill.prompts import PRIVATE_HEADER
from hindsight.distill.scripted_teacher import ScriptedTeacher
from hindsight.policy.base import Conversation
from hindsight.schema import Task

BRIEF = "We study graph caches. They are slow."
OPENING = "We study graph caches"


def conversation(*searches: tuple[str, list[str]]) -> Conversation:
    system = f"{PRIVATE_HEADER}\n1. [T3/conceptual] alpha beta\n   Abstract: alpha beta gamma"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"Research brief:\n{BRIEF}"}]
    for turn, (query, ids) in enumerate(searches):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{turn}",
                        "type": "function",
                        "function": {"name": "search_papers", "arguments": {"query": query}},
                    }
                ],
            }
        )
        results = {"results": [{"id": pid, "title": "t"} for pid in ids], "calls_left": 3}
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": json.dumps(results)})
    return Conversation(Task("t", BRIEF, dt.date(2022, 1, 1)), messages)


def forwarded(conv: Conversation, submit: int = 10) -> list[str]:
    return [paper["id"] for paper in ScriptedTeacher({}, submit=submit)._forwarded(conv)]


def test_keyword_results_come_first_as_shown_and_the_opening_fills_what_is_left():
    conv = conversation((OPENING, ["o1", "o2", "o3"]), ("alpha", ["k1", "k2"]), ("beta", ["k3"]))
    assert forwarded(conv) == ["k1", "k2", "k3", "o1", "o2", "o3"]


def test_the_opening_search_is_known_by_its_query_wherever_it_came():
    conv = conversation(("alpha", ["k1", "k2"]), (OPENING, ["o1", "o2"]), ("beta", ["k3"]))
    assert forwarded(conv) == ["k1", "k2", "k3", "o1", "o2"]


def test_a_paper_shown_twice_is_forwarded_once_where_a_keyword_search_first_showed_it():
    conv = conversation((OPENING, ["o1", "k2"]), ("alpha", ["k1", "k2"]), ("beta", ["k2", "k3", "k1"]))
    assert forwarded(conv) == ["k1", "k2", "k3", "o1"]


def test_the_submission_stops_at_its_size_even_inside_a_search():
    conv = conversation((OPENING, ["o1"]), ("alpha", ["k1", "k2", "k3"]), ("beta", ["k4", "k5", "k6"]))
    assert forwarded(conv, submit=4) == ["k1", "k2", "k3", "k4"]


ANCHOR_BRIEF = "We study quorix caches in lumen systems. They are slow."
ANCHOR_IDF = {"quorix": 5.0, "lumen": 3.0, "zentak": 6.0, "velmor": 6.5, "grabbo": 4.0, "cach": 0.5, "system": 0.1}


def planned(anchor_words: int) -> list[str]:
    system = (
        f"{PRIVATE_HEADER}\n"
        "1. [T3/conceptual] Quorix lumen zentak\n   Abstract: velmor zentak quorix caches grabbo\n"
        "2. [T2/method] Zentak velmor systems\n   Abstract: velmor zentak grabbo\n"
        "3. [T1/problem] Lumen quorix caches\n   Abstract: quorix lumen systems"
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"Research brief:\n{ANCHOR_BRIEF}"}]
    teacher = ScriptedTeacher(ANCHOR_IDF, queries=2, words_per_query=3, anchor_words=anchor_words, opening_at=1)
    return teacher._plan(Conversation(Task("t", ANCHOR_BRIEF, dt.date(2022, 1, 1)), messages))


def test_the_first_keyword_query_starts_with_the_first_brief_word_the_antecedents_share():
    # "study" and "caches" come first in the brief, but the antecedents never or barely use them
    keyword_query, opening = planned(anchor_words=1)
    assert keyword_query.split()[0] == "quorix"
    assert keyword_query.split()[1:] == ["velmor", "zentak"]  # the rarest shared words, none of the brief's
    assert opening == "We study quorix caches in lumen systems"


def test_without_anchor_words_the_first_keyword_query_holds_mechanism_words_only():
    keyword_query, _ = planned(anchor_words=0)
    assert keyword_query.split() == ["velmor", "zentak", "grabbo"]


def test_anchor_words_never_crowd_out_every_mechanism_word():
    keyword_query, _ = planned(anchor_words=5)
    words = keyword_query.split()
    assert len(words) == 3 and words[:2] == ["quorix", "lumen"] and words[2] == "velmor"
