"""Build native instances from targets, their bibliographies and a corpus, with models as judges,
brief writers and identity auditors.

Per target (cutoff = first-posted date minus `cutoff_months`): references that resolve in the
corpus, are dated before the cutoff and at most `max_age_years` before the target are graded by
every judge in one request; each reference keeps its valid votes, and their consensus gives tier,
role, agreement and rationale; T0 is removed, gains follow tier and role, the ten best are kept.
The generator writes a detailed and a terse brief (the target's name removed by rule); the
auditor guesses the target from the detailed brief, and a guess at least `flag_confidence` sure
flags the instance; the title-word overlap is recorded beside it. A reply that cannot be read
is a failed vote, brief or audit, counted, never a crash. Targets split by date, train earliest.

Finished targets are appended to DIR/work/done.jsonl, `chunk_targets` at a time, and every reply
is cached on disk by its full request: a rerun after a kill skips finished targets and pays for
nothing it already asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hindsight.builder.config import BuildConfig, ModelSpec
from hindsight.builder.inputs import Reference, read_bibliographies, read_targets
from hindsight.builder.judging import consensus, parse_brief, parse_guess, parse_votes
from hindsight.builder.prompts import audit_request, brief_request, judge_request
from hindsight.corpus import Corpus, load_papers
from hindsight.data.deepscholar import remove_names, title_overlap
from hindsight.data.native import months_before, prepare_instances, split_by_date
from hindsight.data.open_corpus import merge_papers
from hindsight.jsonl import read_jsonl, sha256_file
from hindsight.log import get_logger
from hindsight.schema import DEFAULT_GAINS, MAX_LABELS, Instance, Label, Paper, Target

logger = get_logger(__name__)

MIN_LABELS = 2


@dataclass
class Calls:
    """One model's requests: how many, answered from the cache, failed, their tokens and cost."""

    requests: int = 0
    cached: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # requests actually sent, where litellm knows the price
    failures: Counter = field(default_factory=Counter)

    def add(self, other: dict) -> None:
        for key in ("requests", "cached", "failed", "prompt_tokens", "completion_tokens", "cost_usd"):
            setattr(self, key, getattr(self, key) + other.get(key, 0))
        self.failures.update(other.get("failures", {}))


class Caller:
    """Sends requests to any number of models at once, through the cached, retrying completer."""

    def __init__(self, config: BuildConfig):
        from hindsight.policy.litellm_backend import Completer

        self.concurrency = config.concurrency
        self._completers: dict[ModelSpec, Completer] = {}
        for spec in (*config.judges, config.generator, config.auditor):
            self._completers.setdefault(
                spec,
                Completer(
                    api_key=spec.api_key,
                    max_retries=spec.max_retries,
                    timeout_s=spec.timeout_s,
                    cache_dir=config.cache_dir,
                ),
            )

    def run(self, jobs: list[tuple[ModelSpec, dict]]) -> list[tuple[str | None, str | None, dict]]:
        """(text, failure, accounting) per job, in order."""

        async def every():
            gate = asyncio.Semaphore(self.concurrency)
            return await asyncio.gather(*(self._completers[spec].complete(gate, request) for spec, request in jobs))

        results = []
        for data, failure, attempts in asyncio.run(every()):
            usage = (data or {}).get("usage") or {}
            text = None
            if data is not None:
                text = ((data.get("choices") or [{}])[0].get("message") or {}).get("content")
            account = {
                "requests": 1,
                "cached": int(data is not None and attempts == 0),
                "failed": int(failure is not None),
                "prompt_tokens": usage.get("prompt_tokens") or 0,
                "completion_tokens": usage.get("completion_tokens") or 0,
                "cost_usd": ((data or {}).get("_cost_usd") or 0.0) if attempts else 0.0,
                "failures": {failure[:80]: 1} if failure else {},
            }
            results.append((text, failure, account))
        return results


def eligible_references(
    target: Paper, references: list[Reference], papers: dict[str, Paper], config: BuildConfig
) -> tuple[list[tuple[Reference, Paper]], Counter]:
    cutoff = months_before(target.date, config.cutoff_months)
    oldest = months_before(target.date, 12 * config.max_age_years)
    eligible, excluded = [], Counter()
    for reference in references:
        paper = papers.get(reference.id)
        if reference.id == target.id:
            excluded["the target itself"] += 1
        elif paper is None:
            excluded["not in the corpus"] += 1
        elif paper.date >= cutoff:
            excluded["posted on or after the cutoff"] += 1
        elif paper.date < oldest:
            excluded[f"older than {config.max_age_years} years"] += 1
        else:
            eligible.append((reference, paper))
    return eligible, excluded


def jobs_for(
    target: Paper, eligible: list[tuple[Reference, Paper]], config: BuildConfig
) -> list[tuple[ModelSpec, dict]]:
    """The first requests of a target: every judge (when there is anything to grade), two briefs."""
    jobs = [(judge, judge_request(judge, target, eligible)) for judge in config.judges] if eligible else []
    return jobs + [(config.generator, brief_request(config.generator, target, terse)) for terse in (False, True)]


def grade(eligible, judge_replies, config: BuildConfig) -> tuple[list[Label], list[dict], dict]:
    """Labels from the judges' replies; each graded reference's votes; each judge's reading problems."""
    votes_by_ref: list[list] = [[] for _ in eligible]
    problems = {}
    for judge, (text, failure, _) in zip(config.judges, judge_replies):
        if failure or text is None:
            problems[judge.model] = [failure or "empty reply", f"{len(eligible)} reference(s) without a vote"]
            continue
        votes, problems[judge.model] = parse_votes(judge.model, text, len(eligible))
        for index, vote in votes.items():
            votes_by_ref[index].append(vote)
    labels, graded = [], []
    for (_reference, paper), votes in zip(eligible, votes_by_ref):
        agreed = consensus(votes)
        graded.append(
            {
                "id": paper.id,
                "votes": [dataclasses.asdict(vote) for vote in votes],
                "consensus": dataclasses.asdict(agreed) if agreed else None,
            }
        )
        if agreed is None or agreed.tier == "T0":
            continue
        labels.append(
            Label(
                id=paper.id,
                tier=agreed.tier,
                role=agreed.role,
                gain=DEFAULT_GAINS[(agreed.role, agreed.tier)],
                title=paper.title,
                abstract=paper.abstract,
                date=paper.date,
            )
        )
    labels.sort(key=lambda label: (-label.gain, label.id))
    return labels[:MAX_LABELS], graded, {model: found for model, found in problems.items() if found}


def finish_target(target: Paper, eligible, excluded: Counter, first: list, audit, config: BuildConfig) -> dict:
    """The done-record of one target: its instance (or why there is none) and the evidence."""
    judge_replies, (detailed_reply, terse_reply) = first[: len(first) - 2], first[-2:]
    labels, graded, judge_problems = grade(eligible, judge_replies, config)
    detailed, brief_problem = parse_brief(detailed_reply[0]) if not detailed_reply[1] else (None, detailed_reply[1])
    terse, _ = parse_brief(terse_reply[0], minimum_words=15) if not terse_reply[1] else (None, terse_reply[1])
    record = {
        "target": target.id,
        "references": len(eligible) + sum(excluded.values()),
        "eligible": len(eligible),
        "excluded_references": dict(excluded),
        "graded": graded,
        "judge_problems": judge_problems,
        "votes_missing": len(config.judges) * len(eligible) - sum(len(item["votes"]) for item in graded),
        "instance": None,
        "excluded": None,
    }
    if detailed is None:
        record["excluded"] = f"no brief: {brief_problem}"
        return record
    if len(labels) < MIN_LABELS:
        record["excluded"] = f"fewer than {MIN_LABELS} graded antecedents"
        return record
    detailed = remove_names(detailed, target.title)
    identity, audit_problem = (None, audit[1]) if audit[1] else parse_guess(audit[0])
    flagged = identity is None or (bool(identity["guess"]) and identity["confidence"] >= config.flag_confidence)
    overlap = title_overlap(target.title, detailed)
    agreement = {item["id"]: item["consensus"] for item in graded if item["consensus"]}
    instance = Instance(
        id=f"{config.id_prefix}-{target.id}",
        split="train",
        brief=detailed,
        cutoff=months_before(target.date, config.cutoff_months),
        target=Target(id=target.id, title=target.title, date=target.date),
        labels=tuple(labels),
        brief_terse=remove_names(terse, target.title) if terse else None,
        audit={
            "flagged": flagged,
            "identity": identity or {"failed": audit_problem},
            "title_overlap": round(overlap, 3),
            "title_overlap_flag": overlap > config.overlap_flag,
            "source": "build",
            "labels": [
                {
                    "id": label.id,
                    "agreement": agreement[label.id]["agreement"],
                    "votes": agreement[label.id]["votes"],
                    "rationale": agreement[label.id]["rationale"],
                }
                for label in labels
            ],
        },
    )
    record["instance"] = instance.to_dict()
    return record


def check_settings(path: Path, config: BuildConfig) -> None:
    """A folder resumes only under the settings it was started with."""
    settings = json.loads(json.dumps(config.settings()))
    if path.exists():
        before = json.loads(path.read_text())
        changed = sorted(key for key in set(before) | set(settings) if before.get(key) != settings.get(key))
        if changed:
            raise ValueError(
                f"{path.parent.parent}: started with other settings ({', '.join(changed)} differ); "
                f"build into a new folder, or delete {path.parent} to start again"
            )
    else:
        path.write_text(json.dumps(settings, indent=2) + "\n")


def load_done(path: Path) -> dict[str, dict]:
    done = {}
    if path.exists():
        for _, record, problem in read_jsonl(path):
            if problem is None and isinstance(record, dict):  # a line torn by a kill is asked again
                done[record["target"]] = record
    return done


def build(config: BuildConfig, out_dir: str | Path, progress: bool = True) -> Path:
    """Build the benchmark into `out_dir` (instances.jsonl, corpus.jsonl, graded.jsonl,
    manifest.json); returns the manifest's path. A rerun resumes."""
    out = Path(out_dir)
    (out / "work").mkdir(parents=True, exist_ok=True)
    targets = sorted(read_targets(config.targets), key=lambda p: (p.date, p.id))
    bibliographies = read_bibliographies(config.bibliographies)
    papers = load_corpus_papers(config, targets)
    done_path = out / "work" / "done.jsonl"
    check_settings(out / "work" / "settings.json", config)
    done = load_done(done_path)
    caller = Caller(config)
    calls: dict[str, Calls] = {}
    todo = [target for target in targets if target.id not in done]
    say = logger.info if progress else (lambda text: None)
    say(f"build: {len(targets)} targets, {len(done)} done before, {len(todo)} to do")
    for start in range(0, len(todo), config.chunk_targets):
        chunk = todo[start : start + config.chunk_targets]
        eligible = {t.id: eligible_references(t, bibliographies.get(t.id, []), papers, config) for t in chunk}
        jobs = [jobs_for(t, eligible[t.id][0], config) for t in chunk]
        replies = caller.run([job for target_jobs in jobs for job in target_jobs])
        first, position = {}, 0
        for target, target_jobs in zip(chunk, jobs):
            first[target.id] = replies[position : position + len(target_jobs)]
            position += len(target_jobs)
            account(calls, target_jobs, first[target.id])
        briefs = {t.id: parse_brief(first[t.id][-2][0])[0] for t in chunk if not first[t.id][-2][1]}
        audited = [t for t in chunk if briefs.get(t.id)]
        audit_jobs = [
            (config.auditor, audit_request(config.auditor, remove_names(briefs[t.id], t.title))) for t in audited
        ]
        audits = dict(zip((t.id for t in audited), caller.run(audit_jobs)))
        account(calls, audit_jobs, list(audits.values()))
        with open(done_path, "a", encoding="utf-8") as handle:
            for target in chunk:
                record = finish_target(
                    target,
                    *eligible[target.id],
                    first[target.id],
                    audits.get(target.id, (None, "no brief to audit", {})),
                    config,
                )
                record["tokens"] = tokens_of(first[target.id] + ([audits[target.id]] if target.id in audits else []))
                done[target.id] = record
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        say(
            f"build: {len(done)}/{len(targets)} targets, {sum(r['instance'] is not None for r in done.values())} "
            f"instances; this run {sum(c.requests for c in calls.values())} requests "
            f"({sum(c.cached for c in calls.values())} cached, {sum(c.failed for c in calls.values())} failed)"
        )
    return write_release(config, out, targets, papers, done, calls)


def account(calls: dict[str, Calls], jobs, replies) -> None:
    for (spec, _), (_, _, accounting) in zip(jobs, replies):
        calls.setdefault(spec.model, Calls()).add(accounting)


def tokens_of(replies) -> dict:
    return {
        "prompt": sum(r[2]["prompt_tokens"] for r in replies),
        "completion": sum(r[2]["completion_tokens"] for r in replies),
    }


def load_corpus_papers(config: BuildConfig, targets: list[Paper]) -> dict[str, Paper]:
    papers, _ = load_papers(
        config.corpus,
        date_field=config.corpus_date_field,
        format=config.corpus_format,
        categories=config.corpus_categories,
    )
    if config.cited_papers:
        cited, _ = load_papers(config.cited_papers)
        papers, _ = merge_papers(cited, papers)
    merged, _ = merge_papers(papers, targets)  # the targets' own records are the authority on them
    return {paper.id: paper for paper in merged}


def write_release(
    config: BuildConfig,
    out: Path,
    targets: list[Paper],
    papers: dict[str, Paper],
    done: dict[str, dict],
    calls: dict[str, Calls],
) -> Path:
    from hindsight.provenance import git_commit

    instances = [Instance.from_dict(done[t.id]["instance"]) for t in targets if done[t.id]["instance"]]
    instances = split_by_date(instances, tuple(config.split_shares))
    corpus = Corpus(papers.values())
    kept, report = prepare_instances(instances, corpus)
    kept_ids = {instance.id for instance in kept}
    write_lines(out / "instances.jsonl", (instance.to_dict() for instance in kept))
    write_lines(out / "corpus.jsonl", (paper.to_dict() for paper in corpus))
    write_lines(out / "graded.jsonl", (done[t.id] for t in targets))
    excluded = Counter(done[t.id]["excluded"] for t in targets if done[t.id]["excluded"])
    excluded.update(report.excluded.values())
    tokens = {
        "prompt": sum(done[t.id]["tokens"]["prompt"] for t in targets),
        "completion": sum(done[t.id]["tokens"]["completion"] for t in targets),
    }
    manifest = {
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "settings": config.settings(),
        "models": {
            "judges": [judge.model for judge in config.judges],
            "generator": config.generator.model,
            "auditor": config.auditor.model,
        },
        "splits": {split: [i.id for i in kept if i.split == split] for split in ("train", "dev", "eval")},
        "flagged": [i.id for i in kept if i.audit.get("flagged")],
        "counts": {
            "targets": len(targets),
            "instances": len(kept),
            "excluded": dict(excluded),
            "labels": sum(len(i.labels) for i in kept),
            "tiers": dict(Counter(label.tier for i in kept for label in i.labels)),
            "judge_replies_with_problems": sum(len(done[t.id]["judge_problems"]) for t in targets),
            "votes_missing": sum(done[t.id]["votes_missing"] for t in targets),
        },
        "tokens_all_targets": tokens,
        "calls_this_run": {
            model: {**dataclasses.asdict(c), "failures": dict(c.failures)} for model, c in calls.items()
        },
        "data_report": report.to_dict(),
        "files": {name: sha256_file(out / name) for name in ("instances.jsonl", "corpus.jsonl", "graded.jsonl")},
    }
    manifest["excluded_instances"] = sorted(set(i.id for i in instances) - kept_ids)
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return path


def write_lines(path: Path, records) -> None:
    staging = path.with_suffix(path.suffix + ".partial")
    with open(staging, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    staging.replace(path)


def verify_release(folder: str | Path) -> list[str]:
    """What does not match the manifest: a file's sha256, or the split lists."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    problems = [
        f"{name}: sha256 {sha256_file(folder / name)[:12]}… is not the manifest's {digest[:12]}…"
        for name, digest in manifest["files"].items()
        if not (folder / name).exists() or sha256_file(folder / name) != digest
    ]
    if not problems:
        splits: dict[str, list[str]] = {"train": [], "dev": [], "eval": []}
        for _, record, _ in read_jsonl(folder / "instances.jsonl"):
            splits[record["split"]].append(record["id"])
        problems += [
            f"split {name}: instances.jsonl lists other ids than the manifest"
            for name in splits
            if splits[name] != manifest["splits"][name]
        ]
    return problems


def estimate_cost(manifest: dict, model: str) -> dict:
    """What the recorded tokens would cost at `model`'s price (litellm's price table)."""
    import litellm

    tokens = manifest["tokens_all_targets"]
    try:
        prompt_usd, completion_usd = litellm.cost_per_token(
            model=model, prompt_tokens=tokens["prompt"], completion_tokens=tokens["completion"]
        )
    except Exception:  # litellm raises its own kinds for a model it cannot map
        prompt_usd = completion_usd = 0.0
    targets, instances = manifest["counts"]["targets"], manifest["counts"]["instances"]
    total = prompt_usd + completion_usd
    if total == 0 and tokens["prompt"] + tokens["completion"] > 0:
        raise ValueError(f"no price for {model!r} in litellm's price table; name a model it lists (litellm.model_cost)")
    return {
        "model": model,
        "prompt_tokens": tokens["prompt"],
        "completion_tokens": tokens["completion"],
        "total_usd": total,
        "per_target_usd": total / max(1, targets),
        "per_instance_usd": total / instances if instances else None,
    }
