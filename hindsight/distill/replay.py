"""The replay validator: re-run each candidate's actions through a fresh SearchEnv under the
student's deployment prompt, flag what a deployed student could not legitimately have done,
and score the replay.

    python distill/replay.py recipes/tiny.yaml

Flags (a candidate may carry several):
  malformed          unreadable or unknown actions, wrong argument types, several calls in one
                     reply, over budget, no submission
  private_copy       assistant text shares an n-gram (default 5 words) with the private block
                     that the brief does not hold, or a rationale holds most of a private title;
                     or (the second line, hindsight/distill/retrieval.py) a rationale or free
                     text whose best match in the search index is a label or the target that
                     no search of the episode had returned
  identifying_query  a query holds an arXiv id; the queries so far spell out most of the target's
                     or an antecedent's title; a label's or the target's id anywhere in assistant
                     text before a search returned it
  unreadable         assistant text with several words that are neither English, the corpus's nor
                     the episode's, or made mostly of signs: a cipher the rules cannot read
                     (hindsight/lexicon.py; distill.unreadable_words)
  post_cutoff        a replayed result dated on or after the cutoff
  unsurfaced         a submitted or read id that no earlier search in the replay returned
  divergent          the replay's results (ids and every field shown) or protocol differ from the
                     teacher's
Text is compared as hindsight.leaks folds it (look-alike letters, invisible characters,
diacritics, hyphens, spellings, word forms), by the same function the leak audit uses.
Only the replayed conversation (deployment prompt, the actions, the replayed results) can
become training data. Output: <out_dir>/replays.jsonl and <out_dir>/flags.json.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hindsight.distill.canonical import canonical_action
from hindsight.distill.config import DistillConfig
from hindsight.distill.judge import Judge
from hindsight.env import SearchEnv
from hindsight.leaks import PrivateText
from hindsight.metrics import score_episode
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall
from hindsight.prompts import initial_messages, prompt_texts
from hindsight.protocol import ProtocolConfig
from hindsight.runner import Live, apply_turn
from hindsight.schema import CandidateId, Episode, Instance

FLAGS = ("malformed", "private_copy", "identifying_query", "unreadable", "post_cutoff", "unsurfaced", "divergent")


class CachedBackend:
    """Memoises searches: candidates of one target repeat queries. Same answers, same hash."""

    def __init__(self, backend):
        self.backend, self.corpus_hash, self.cache = backend, backend.corpus_hash, {}
        self.corpus = getattr(backend, "corpus", None)

    def search(self, query, cutoff, k):
        key = (query, str(cutoff), k)
        if key not in self.cache:
            self.cache[key] = self.backend.search(query, cutoff, k)
        return self.cache[key]

    def describe(self):
        return self.backend.describe()


@dataclass
class Replay:
    candidate_id: str
    instance_id: str
    split: str
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    score: dict = field(default_factory=dict)
    actions: int = 0
    messages: list[dict] = field(default_factory=list)
    transcript_hash: str = ""

    def flag(self, name: str, reason: str) -> None:
        if name not in self.flags:
            self.flags.append(name)
        self.reasons.append(f"{name}: {reason}")

    @property
    def ndcg10(self) -> float:
        return self.score["ndcg10"]

    @classmethod
    def from_dict(cls, record: dict) -> Replay:
        return cls(**record)

    def to_dict(self) -> dict:
        return {
            "candidate_id": self.candidate_id,
            "instance_id": self.instance_id,
            "split": self.split,
            "flags": self.flags,
            "reasons": self.reasons,
            "score": self.score,
            "actions": self.actions,
            "transcript_hash": self.transcript_hash,
            "messages": self.messages,
        }


def candidate_actions(candidate: Episode, replay: Replay) -> list[tuple[str, object]]:
    """The (tool, arguments) the teacher issued, in order; everything else it wrote is dropped."""
    if candidate.status != "submitted":
        replay.flag("malformed", f"the teacher's episode ended {candidate.status}")
    actions = []
    for message in candidate.messages:
        if message["role"] != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if not calls:
            replay.flag("malformed", "a reply without a tool call")
        if len(calls) > 1:
            replay.flag("malformed", f"a reply with {len(calls)} tool calls (one a reply is the protocol)")
        actions += [(call["function"]["name"], call["function"]["arguments"]) for call in calls]
    return actions


class Validator:
    def __init__(self, backend, config: ProtocolConfig, corpus, cfg: DistillConfig, private: dict[str, PrivateText]):
        self.backend, self.config, self.corpus, self.cfg = CachedBackend(backend), config, corpus, cfg
        self.private = private  # instance id -> what its teacher saw (hindsight.leaks.PrivateText)
        self.judge = Judge.of_config(cfg, self.backend)

    def replay(self, candidate: Episode, instance: Instance) -> Replay:
        result = Replay(candidate_id=candidate.instance_id, instance_id=instance.id, split=instance.split)
        actions = candidate_actions(candidate, result)
        task = instance.task()
        env = SearchEnv(task, self.backend, self.config, prompt_texts(self.config.read_paper))
        live = Live(
            env, Conversation(task, initial_messages(task, self.config.read_paper)), record_id=candidate.instance_id
        )
        for i, (tool, arguments) in enumerate(actions):
            if env.done:
                result.flag("malformed", f"action {i + 1} comes after the episode ended ({env.status})")
                break
            # the row keeps the action rebuilt, not as the teacher wrote it (hindsight/distill/canonical.py)
            tool, arguments = canonical_action(tool, arguments, live.conversation.messages, self.cfg.keep_rationales)
            # the student's own turn-applying code builds the transcript it will be trained on
            for answer in apply_turn(live, Turn(calls=[ToolCall(tool, arguments, id=f"call_{i}")]), self.config):
                if answer.error:
                    result.flag("malformed", f"action {i + 1} ({tool}): {answer.error}")
        messages = live.conversation.messages
        episode = env.episode(candidate.instance_id, "replay")
        episode.messages = messages
        if episode.status != "submitted":
            result.flag("malformed", "no submission" if env.status is None else f"replay ended {env.status}")
        for finding in self.judge.findings(messages, self.private[instance.id], task.brief):
            result.flag(finding.flag, str(finding))
        self._check_results(episode, candidate, instance, result)
        result.actions, result.messages = len(actions), messages
        result.score = {k: v for k, v in score_episode(episode, instance).items() if k != "prefix_curve"}
        result.transcript_hash = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        return result

    def _check_results(self, episode: Episode, candidate: Episode, instance: Instance, result: Replay) -> None:
        for step in episode.steps:
            for paper_id in step.returned_ids:
                paper = self.corpus.get(paper_id) if self.corpus is not None else None
                if paper is not None and paper.date >= instance.cutoff:
                    result.flag("post_cutoff", f"{paper_id} dated {paper.date}")
        if candidate.protocol_hash and candidate.protocol_hash != episode.protocol_hash:
            result.flag("divergent", "the candidate was made under another protocol, corpus or search backend")
        seen, again = shown_papers(candidate.messages), shown_papers(episode.messages)
        if seen != again[: len(seen)]:
            result.flag("divergent", "replayed results (ids or fields shown) differ from what the teacher saw")


def shown_papers(messages: list[dict]) -> list:
    """What each tool answer showed: the papers with every field, without the budget counter."""
    shown = []
    for message in messages:
        if message.get("role") != "tool":
            continue
        try:
            answer = json.loads(message.get("content") or "")
        except json.JSONDecodeError:
            answer = None
        if isinstance(answer, dict) and ("results" in answer or "paper" in answer):
            shown.append(answer.get("results", answer.get("paper")))
    return shown


def validate_all(candidates: list[Episode], instances: dict[str, Instance], validator: Validator) -> list[Replay]:
    replays = []
    for candidate in candidates:
        instance = instances.get(CandidateId.parse(candidate.instance_id).instance_id)
        if instance is None:
            raise ValueError(f"candidate {candidate.instance_id} has no instance")
        replays.append(validator.replay(candidate, instance))
    return replays


def flag_summary(replays: list[Replay]) -> dict:
    per_target: dict[str, int] = Counter()
    for replay in replays:
        per_target[replay.instance_id] += not replay.flags
    return {
        "candidates": len(replays),
        "valid": sum(not r.flags for r in replays),
        "flags": {name: sum(name in r.flags for r in replays) for name in FLAGS},
        "targets": len(per_target),
        "targets_with_a_valid_candidate": sum(1 for n in per_target.values() if n),
    }


def run_replay(recipe, progress: bool = True) -> tuple[Path, dict]:
    from hindsight.distill.prompts import private_texts
    from hindsight.runs import read_episodes

    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = recipe.data.load()
    by_id = {inst.id: inst for inst in instances}
    candidates = list(read_episodes(cfg.output.candidates / "episodes.jsonl").values())
    private = private_texts(
        [by_id[iid] for iid in {CandidateId.parse(c.instance_id).instance_id for c in candidates} if iid in by_id],
        corpus,
        cfg,
    )
    backend = recipe.search.build(corpus)
    validator = Validator(backend, recipe.protocol, corpus, cfg, private)
    start = time.perf_counter()
    replays = validate_all(candidates, by_id, validator)
    summary = {**flag_summary(replays), "seconds": round(time.perf_counter() - start, 2)}
    out = cfg.output
    with open(out.replays, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in replays)
    out.flags.write_text(json.dumps(summary, indent=2) + "\n")
    return out.replays, summary


def main(argv: list[str] | None = None) -> int:
    from hindsight.recipe import recipe_command

    def work(recipe, args):
        path, summary = run_replay(recipe)
        return (
            f"{summary['valid']} of {summary['candidates']} candidates replay-valid; flags: "
            + ", ".join(f"{k} {v}" for k, v in summary["flags"].items())
            + f"\n{summary['targets_with_a_valid_candidate']} of {summary['targets']} targets keep a candidate"
            + f"\nreplays: {path}\nnext: python distill/select_demos.py {args.recipe}"
        )

    return recipe_command(__doc__, work, argv)


if __name__ == "__main__":
    sys.exit(main())
