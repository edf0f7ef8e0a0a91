"""The native format: `DIR/instances.jsonl` + `DIR/corpus.jsonl` (docs/architecture.md, "Records"), validated.

On load, per instance: a label dated on or after the cutoff (its own date, else its corpus
date) is dropped and counted; a label that is the target itself is dropped and counted; a label
missing from the corpus is kept but reported (no search can surface it); labels are capped at
10 by gain; an instance left with fewer than 2 labels is excluded with the reason. The same
target in two splits is refused: the splits must be target-disjoint.
"""

from __future__ import annotations

import bisect
import calendar
import dataclasses
import datetime as dt
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from hindsight.corpus import Corpus, load_corpus
from hindsight.data.instances import InstanceError, load_instances
from hindsight.data.open_corpus import MergeReport, corpus_file, merge_report
from hindsight.schema import MAX_LABELS, Instance

MIN_LABELS = 2
CLOSED_BELOW = 100  # distractors per antecedent under which a corpus counts as closed


@dataclass
class DataReport:
    instances_read: int = 0
    kept_by_split: Counter = field(default_factory=Counter)
    excluded: dict[str, str] = field(default_factory=dict)
    labels_post_cutoff: int = 0
    labels_equal_to_target: int = 0
    labels_over_cap: int = 0
    labels_outside_corpus: list[tuple[str, str]] = field(default_factory=list)
    open_corpus: dict | None = None  # what merging a snapshot did (hindsight.data.open_corpus)
    openness: dict[str, dict] = field(default_factory=dict)  # split -> searchable papers, distractors per antecedent
    warnings: list[str] = field(default_factory=list)

    def measure_openness(self, instances: list[Instance], corpus: Corpus) -> None:
        self.openness = corpus_openness(instances, corpus)
        self.warnings = [
            f"split {split}: a closed corpus, {row['distractors_per_label']:g} other papers before the "
            f"cutoff for each antecedent (median; under {CLOSED_BELOW}) and {row['labelled_share']:.0%} of "
            "the searchable papers some target's antecedent: search is far easier than on an open "
            "corpus"
            for split, row in self.openness.items()
            if row["distractors_per_label"] < CLOSED_BELOW
        ]

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["kept_by_split"] = dict(self.kept_by_split)
        return out

    def summary(self) -> str:
        kept = sum(self.kept_by_split.values())
        lines = [
            f"instances: {self.instances_read} read, {kept} kept "
            f"({', '.join(f'{s} {n}' for s, n in sorted(self.kept_by_split.items()))}), "
            f"{len(self.excluded)} excluded",
            f"labels dropped: {self.labels_post_cutoff} dated on/after the cutoff, "
            f"{self.labels_equal_to_target} equal to the target, {self.labels_over_cap} over the cap of {MAX_LABELS}",
            f"labels missing from the corpus (kept, unfindable): {len(self.labels_outside_corpus)}",
        ]
        reasons = Counter(self.excluded.values())
        if self.open_corpus:
            lines.append(MergeReport(**self.open_corpus).summary())
        lines += [f"  excluded: {n} × {reason}" for reason, n in reasons.most_common()]
        for split, row in self.openness.items():
            lines.append(
                f"split {split}: {row['targets']} targets; {row['searchable_at_median_cutoff']:,} papers "
                f"searchable before the median cutoff {row['median_cutoff']}; {row['labels_per_target']:g} "
                f"antecedents a target; {row['distractors_per_label']:,g} distractors per antecedent; "
                f"{row['labelled_share']:.1%} of the searchable papers are some target's antecedent"
                + (
                    f"; {row['labels_shared_with_train']:.0%} of its antecedents are also train targets'"
                    if split != "train" and "train" in self.openness
                    else ""
                )
            )
        lines += [f"warning: {warning}" for warning in self.warnings]
        if self.warnings:
            lines.append(
                "  the merged snapshot holds few papers dated before these cutoffs"
                if self.open_corpus
                else "  merge a paper snapshot to open it: data.corpus in a recipe, --corpus on the command line"
            )
        return "\n".join(lines)


def prepare_instances(instances: list[Instance], corpus: Corpus | None) -> tuple[list[Instance], DataReport]:
    """Apply the label rules above; returns the kept instances and what was done."""
    report = DataReport(instances_read=len(instances))
    split_of_target: dict[str, tuple[str, str]] = {}
    kept = []
    for instance in instances:
        posted = corpus.get(instance.target.id) if corpus is not None else None
        if posted is not None and posted.date < instance.cutoff:
            raise InstanceError(
                f"instance {instance.id}: its target {instance.target.id} is in the corpus dated "
                f"{posted.date}, before the cutoff {instance.cutoff}: a search could return the answer"
            )
        seen = split_of_target.setdefault(instance.target.id, (instance.split, instance.id))
        if seen[0] != instance.split:
            raise InstanceError(
                f"target {instance.target.id} is in split {seen[0]} (instance {seen[1]}) and in "
                f"split {instance.split} (instance {instance.id}): splits must be target-disjoint"
            )
        labels = []
        for label in instance.labels:
            paper = corpus.get(label.id) if corpus is not None else None
            date = label.date or (paper.date if paper else None)
            if label.id == instance.target.id:
                report.labels_equal_to_target += 1
                continue
            if date is not None and date >= instance.cutoff:
                report.labels_post_cutoff += 1
                continue
            if corpus is not None and paper is None:
                report.labels_outside_corpus.append((instance.id, label.id))
            labels.append(dataclasses.replace(label, date=date))
        labels.sort(key=lambda lab: (-lab.gain, lab.id))
        report.labels_over_cap += max(0, len(labels) - MAX_LABELS)
        labels = labels[:MAX_LABELS]
        if len(labels) < MIN_LABELS:
            report.excluded[instance.id] = f"fewer than {MIN_LABELS} labels before the cutoff"
            continue
        kept.append(dataclasses.replace(instance, labels=tuple(labels)))
        report.kept_by_split[instance.split] += 1
    if corpus is not None:
        report.measure_openness(kept, corpus)
    return kept, report


def corpus_openness(instances: list[Instance], corpus: Corpus) -> dict[str, dict]:
    """Per split: papers searchable before the median cutoff and the share of them that are any
    target's antecedent, and the median over targets of the papers before the target's cutoff
    that are not its antecedents, per antecedent."""
    by_split: dict[str, list[Instance]] = defaultdict(list)
    for instance in instances:
        by_split[instance.split].append(instance)
    labelled = sorted(
        paper.date
        for paper in map(corpus.get, {label.id for inst in instances for label in inst.labels})
        if paper is not None
    )
    trained = {label.id for inst in by_split.get("train", []) for label in inst.labels}
    openness = {}
    for split, group in sorted(by_split.items()):
        median_cutoff = sorted(instance.cutoff for instance in group)[len(group) // 2]
        searchable = corpus.prefix_len(median_cutoff)
        distractors = [
            (corpus.prefix_len(inst.cutoff) - sum(corpus.get(label.id) is not None for label in inst.labels))
            / len(inst.labels)
            for inst in group
        ]
        openness[split] = {
            "targets": len(group),
            "median_cutoff": median_cutoff.isoformat(),
            "searchable_at_median_cutoff": searchable,
            "labelled_share": bisect.bisect_left(labelled, median_cutoff) / max(1, searchable),
            "labels_per_target": statistics.median(len(inst.labels) for inst in group),
            "distractors_per_label": round(statistics.median(distractors), 1),
            # what a student could score by recalling its training targets' antecedents
            "labels_shared_with_train": (
                sum(label.id in trained for inst in group for label in inst.labels)
                / sum(len(inst.labels) for inst in group)
            ),
        }
    return openness


def load_native(directory: str | Path, *, skip_bad: bool = False) -> tuple[Corpus, list[Instance], DataReport]:
    directory = Path(directory)
    corpus = load_corpus(corpus_file(directory), skip_bad=skip_bad)
    try:
        instances, report = prepare_instances(load_instances(directory / "instances.jsonl"), corpus)
    except InstanceError as exc:
        raise InstanceError(_with_line(directory / "instances.jsonl", str(exc))) from None
    merged = merge_report(directory)
    report.open_corpus = dataclasses.asdict(merged) if merged else None
    return corpus, instances, report


def _with_line(path: Path, message: str) -> str:
    """`message` about "instance X" prefixed with the file and line that holds X."""
    if not message.startswith("instance "):
        return message
    instance_id = message.split()[1].rstrip(":")
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line_no, line in enumerate(handle, start=1):
            if f'"id": "{instance_id}"' in line or f'"id":"{instance_id}"' in line:
                return f"{path}:{line_no}: {message}"
    return f"{path}: {message}"


def split_by_date(instances: list[Instance], shares: tuple[float, float] = (0.7, 0.1)) -> list[Instance]:
    """Earliest 70% of targets train, next 10% dev, latest 20% eval (by target date, then id)."""
    ordered = sorted(instances, key=lambda inst: (inst.target.date, inst.target.id))
    n = len(ordered)
    train_end, dev_end = round(n * shares[0]), round(n * (shares[0] + shares[1]))
    return [
        dataclasses.replace(inst, split="train" if i < train_end else "dev" if i < dev_end else "eval")
        for i, inst in enumerate(ordered)
    ]


def months_before(day: dt.date, months: int) -> dt.date:
    """The same day `months` calendar months earlier, clamped to the month's end (31 May -> 28 Feb)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))
