"""benchmarks.same_episodes: whether two runs played the same episodes on their shared targets."""

from benchmarks.same_episodes import compare, first_difference
from hindsight.schema import Episode


def episode(instance_id: str, queries: list[str], submitted: list[str], note: str = "") -> Episode:
    steps = [{"tool": "search_papers", "args": {"query": query}} for query in queries]
    messages = [{"role": "assistant", "content": query + note} for query in queries]
    return Episode.from_dict(
        {
            "instance_id": instance_id,
            "policy": "test",
            "status": "submitted",
            "steps": steps,
            "submission": [{"id": pid} for pid in submitted],
            "messages": messages,
        }
    )


def test_the_first_difference_is_the_first_unequal_action_or_where_one_list_stops():
    assert first_difference(["a", "b"], ["a", "b"]) is None
    assert first_difference(["a", "b"], ["a", "c"]) == 1
    assert first_difference(["a"], ["a", "b"]) == 1


def test_same_actions_in_other_words_are_not_the_same_transcript():
    one = {"t1": episode("t1", ["graph"], ["1"]), "t2": episode("t2", ["trees"], ["2"]), "t3": episode("t3", ["x"], [])}
    other = {
        "t1": episode("t1", ["graph"], ["1"]),
        "t2": episode("t2", ["trees"], ["2"], note=" (thinking)"),
        "t4": episode("t4", ["x"], []),
    }
    report = compare(one, other)
    assert report["shared_targets"] == 2
    assert report["same_transcript"] == 1 and report["same_actions"] == 2


def test_an_episode_whose_answer_differs_is_reported_at_the_answer():
    one = {"t": episode("t", ["graph", "nets"], ["1", "2"])}
    other = {"t": episode("t", ["graph", "nets"], ["2", "1"])}
    assert compare(one, other)["first_differing_action"] == {"t": 2}
