"""Leak audit of an SFT set: could every row have come from the ordinary interface alone?

    python distill/audit.py recipes/X.yaml                 # the recipe's <distill.out_dir>/sft.jsonl
    python distill/audit.py recipes/X.yaml --sft OTHER.jsonl

It judges each row's text with the replay validator's own judge (hindsight.distill.judge: the
rules of hindsight.leaks.check_messages and the search-index line),
against the private text built from the recipe's `distill` settings exactly as the teacher got it.
Label papers may appear in search results and in the submission: that is the point. What the
interface could not have produced, and this audit reports:
- a system or user message that is not the deployment prompt for that row's brief and cutoff;
- teacher-only text anywhere outside tool results (private block markers, tier tags);
- anything check_messages finds: private phrases, titles spelled out by the queries, private ids
  before a search returned them, several calls in a reply, submitted ids no search returned;
- the target's id or title anywhere; row fields other than `messages` and `tools`.
Each finding names the row, the message and the text. Exit status 1 on any finding.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hindsight.distill.judge import Judge
from hindsight.distill.prompts import TEACHER_MARKERS
from hindsight.jsonl import read_jsonl
from hindsight.leaks import PrivateText, fold, private_id_in
from hindsight.prompts import USER_TEMPLATE, brief_from_messages, system_prompt
from hindsight.schema import Instance

MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


@dataclass
class AuditReport:
    rows: int = 0
    findings: dict[int, list[str]] = field(default_factory=dict)  # row number -> what is wrong with it

    @property
    def rejected(self) -> int:
        return len(self.findings)

    def lines(self, path) -> list[str]:
        return [
            f"{path}: row {row}: {problem}" for row, problems in sorted(self.findings.items()) for problem in problems
        ]


def _message_text(message: dict) -> str:
    return (message.get("content") or "") + " " + json.dumps(message.get("tool_calls") or [], ensure_ascii=False)


def audit_row(
    row: object,
    instance_by_brief: dict[str, Instance],
    private: dict[str, PrivateText],
    n: int,
    share: float,
    judge: Judge | None = None,
) -> list[str]:
    """What is wrong with one SFT row ([] when nothing is). `judge` is replay's (hindsight.distill.judge):
    without one, the rules of check_messages at (n, share) alone."""
    judge = judge or Judge(n, share)
    if not isinstance(row, dict):
        return [f"not an SFT row (a JSON {type(row).__name__}, not an object)"]
    problems = []
    extra = set(row) - {"messages", "tools"}
    if extra:
        problems.append(f"fields other than messages and tools: {sorted(extra)}")
    messages = row.get("messages") or []
    instance = (
        instance_by_brief.get(brief_from_messages(messages)) if any(m.get("role") == "user" for m in messages) else None
    )
    if instance is None or instance.id not in private:
        return problems + ["the user message holds no known brief"]
    expected_user = USER_TEMPLATE.format(cutoff=instance.cutoff.isoformat(), brief=instance.brief)
    target_title = " ".join(fold(instance.target.title).split())
    for i, message in enumerate(messages):
        where = f"message {i} ({message.get('role')})"
        if set(message) - MESSAGE_KEYS:
            problems.append(f"{where}: unexpected keys {sorted(set(message) - MESSAGE_KEYS)}")
        text = _message_text(message)
        if private_id_in(text, {instance.target.id}):
            problems.append(f"{where}: the target's id {instance.target.id}")
        if target_title and target_title in " ".join(fold(text).split()):
            problems.append(f"{where}: the target's title")
        if message.get("role") == "tool":
            continue
        if any(marker in text for marker in TEACHER_MARKERS):
            problems.append(f"{where}: teacher-only text")
        if message.get("role") == "system" and message.get("content") not in (
            system_prompt(False),
            system_prompt(True),
        ):
            problems.append(f"{where}: not the deployment system prompt")
        if message.get("role") == "user" and i == 1 and message.get("content") != expected_user:
            problems.append(f"{where}: not the deployment user message for this brief and cutoff")
    problems += [str(finding) for finding in judge.findings(messages, private[instance.id], instance.brief)]
    return problems


def audit_file(
    sft_path: Path,
    instances: list[Instance],
    private: dict[str, PrivateText],
    n: int = 5,
    share: float = 0.6,
    judge: Judge | None = None,
) -> AuditReport:
    by_brief = {inst.brief: inst for inst in instances}
    report = AuditReport()
    for row_no, row, error in read_jsonl(sft_path):
        report.rows += 1
        problems = [error] if error else audit_row(row, by_brief, private, n, share, judge)
        if problems:
            report.findings[row_no] = problems
    return report


def audit_recipe(recipe, sft_path: Path | None = None) -> tuple[Path, AuditReport]:
    from hindsight.distill.config import DistillConfig
    from hindsight.distill.prompts import private_texts

    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = recipe.data.load()
    path = sft_path or cfg.output.sft_set
    judge = Judge.of_config(cfg, recipe.search.build(corpus) if cfg.retrieval_words is not None else None)
    private = private_texts(instances, corpus, cfg)
    return path, audit_file(path, instances, private, cfg.ngram, cfg.title_share, judge)


def main(argv: list[str] | None = None) -> int:
    from hindsight.recipe import recipe_command

    def options(parser):
        parser.add_argument("--sft", type=Path, help="the SFT set to audit (default: <distill.out_dir>/sft.jsonl)")

    def work(recipe, args):
        path, report = audit_recipe(recipe, args.sft)
        lines = report.lines(path)
        summary = f"audit: {report.rejected} of {report.rows} rows with findings ({len(lines)} in all)" + (
            " (first 200 shown)" if len(lines) > 200 else ""
        )
        return "\n".join([*lines[:200], summary]), 1 if report.rejected else 0

    return recipe_command(__doc__, work, argv, options)


if __name__ == "__main__":
    sys.exit(main())
