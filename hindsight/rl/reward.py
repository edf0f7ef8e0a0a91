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

    def __call__(self, prompts, completions, task_id, episode, **_) -> list[float]:
        rewards, self.last_terms = [], []
        for tid, played in zip(task_id, episode, strict=True):
            reward, terms = episode_reward(played, self._instances[tid], self.weights)
            rewards.append(reward)
            self.last_terms.append(terms)
        return rewards
