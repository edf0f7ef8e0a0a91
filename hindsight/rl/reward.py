"""The reward of an episode, computed where the labels are and nowhere else.

The policy's rollouts hold what the policy saw (its Task's brief and cutoff, search results) and
what it did. The labels stay inside `EpisodeReward`, keyed by the opaque task id the dataset row
carries: the rollout never learns which instance a task is, and the reward never reaches a prompt.
"""

from __future__ import annotations

from collections.abc import Mapping

from hindsight.metrics import score_episode
from hindsight.schema import Episode, Instance


def episode_reward(episode: Episode, instance: Instance, weights: Mapping[str, float]) -> tuple[float, dict]:
    """(the weighted sum, each term) of one episode: the terms of hindsight.rl.config.REWARD_TERMS."""
    score = score_episode(episode, instance)
    submitted = len(score["submission"])
    terms = {
        "ndcg10": score["ndcg10"],
        "exposed_gain": score["exposed_gain"],
        "selected_gain": score["selected_gain"],
        "malformed": float(episode.status != "submitted"),
        "unsurfaced": (submitted - score["submitted_surfaced"]) / submitted if submitted else 0.0,
    }
    return sum(weight * terms[name] for name, weight in weights.items()), terms


class EpisodeReward:
    """TRL's reward function: called with each rollout's task id (a dataset column) and its episode
    (the rollout's extra field); returns the weighted reward and keeps each term for the log."""

    __name__ = "episode_reward"  # TRL logs a reward function under its name

    def __init__(self, instances_by_task: Mapping[str, Instance], weights: Mapping[str, float]):
        self._instances = dict(instances_by_task)
        self.weights = dict(weights)
        self.last_terms: list[dict] = []
        self.last_actions: list[str] = []
        self.batches = 0  # batches of rollouts scored so far (with rl.iterations > 1, fewer than steps)

    def __call__(self, prompts, completions, task_id, episode, **_) -> list[float]:
        rewards, self.last_terms, self.last_actions = [], [], []
        self.batches += 1
        for tid, played in zip(task_id, episode, strict=True):
            reward, terms = episode_reward(played, self._instances[tid], self.weights)
            rewards.append(reward)
            self.last_terms.append(terms)
            self.last_actions.append(episode_actions(played))
        return rewards


def episode_actions(episode: Episode) -> str:
    """What the policy did in an episode (its replies, in order): two episodes with the same
    actions are the same sample, whatever their rewards."""
    return "\x1e".join(
        str(m.get("content") or "") + repr(m.get("tool_calls") or "")
        for m in episode.messages
        if m.get("role") == "assistant"
    )


def distinct_share(actions: list[str], group_size: int) -> float:
    """Mean over the groups (consecutive runs of group_size episodes, TRL's order) of the share of
    a group's episodes that differ from every earlier one of the group: 0 when each group played
    one episode group_size times (sampling explored nothing), 1 when no two were alike."""
    groups = [actions[i : i + group_size] for i in range(0, len(actions), group_size)]
    shares = [(len(set(group)) - 1) / (len(group) - 1) for group in groups if len(group) > 1]
    return sum(shares) / len(shares) if shares else 0.0
