"""Leak audit of an SFT set: could every row have come from the ordinary interface alone?

    python distill/audit.py outputs/distill/sft.jsonl INSTANCES.jsonl

Label papers may appear in search results and in the submission: that is the point. What the
interface could not have produced, and this audit reports:
- a system or user message that is not the deployment prompt for that row's brief and cutoff;
- teacher-only text anywhere outside tool results (private block markers, tier tags);
- an assistant turn sharing a long n-gram with the private block, or holding most of a label's
  or the target's title;
- an id in an assistant turn that no earlier search result in the row returned;
- the target's id or title anywhere; row fields other than `messages` and `tools`.
Exit status 1 on any finding, naming the row and the message.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the checkout, not this script's folder

from distill.prompts import TEACHER_MARKERS  # noqa: E402
from distill.replay import ngrams, title_share, words  # noqa: E402
from hindsight.data import load_instances  # noqa: E402
from hindsight.prompts import USER_TEMPLATE, system_prompt  # noqa: E402
from hindsight.schema import Instance  # noqa: E402

MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


def private_ngrams(instance: Instance, n: int, abstract_chars: int = 1200) -> set:
    text = " ".join(f"{lab.title} {' '.join(lab.abstract.split())[:abstract_chars]}" for lab in instance.labels)
    return ngrams(words(text), n)


def audit_row(row: dict, instance_by_brief: dict[str, Instance], n: int = 5, title_limit: float = 0.6) -> list[str]:
    problems = []
    extra = set(row) - {"messages", "tools"}
    if extra:
        problems.append(f"fields other than messages and tools: {sorted(extra)}")
    messages = row.get("messages") or []
    user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    brief = user.split("Research brief:\n", 1)[-1]
    instance = instance_by_brief.get(brief)
    if instance is None:
        return problems + ["the user message holds no known brief"]
    expected_user = USER_TEMPLATE.format(cutoff=instance.cutoff.isoformat(), brief=instance.brief)
    private = private_ngrams(instance, n)
    returned: set[str] = set()
    for i, message in enumerate(messages):
        where = f"message {i} ({message.get('role')})"
        if set(message) - MESSAGE_KEYS:
            problems.append(f"{where}: unexpected keys {sorted(set(message) - MESSAGE_KEYS)}")
        content = message.get("content") or ""
        text = content + " " + json.dumps(message.get("tool_calls") or [])
        if instance.target.id in text:
            problems.append(f"{where}: the target's id {instance.target.id}")
        if " ".join(words(instance.target.title)) in " ".join(words(text)):
            problems.append(f"{where}: the target's title")
        if message.get("role") == "tool":
            try:
                returned.update(hit["id"] for hit in json.loads(content).get("results", []))
                paper = json.loads(content).get("paper")
                if paper:
                    returned.add(paper["id"])
            except (json.JSONDecodeError, AttributeError, KeyError, TypeError):
                pass
            continue
        if any(marker in text for marker in TEACHER_MARKERS):
            problems.append(f"{where}: teacher-only text")
        if message.get("role") == "system" and content not in (system_prompt(False), system_prompt(True)):
            problems.append(f"{where}: not the deployment system prompt")
        if message.get("role") == "user" and i == 1 and content != expected_user:
            problems.append(f"{where}: not the deployment user message for this brief and cutoff")
        if message.get("role") != "assistant":
            continue
        if ngrams(words(text), n) & private:
            problems.append(f"{where}: shares a {n}-word phrase with the private block")
        for label in instance.labels:
            if title_share(label.title, text) >= title_limit:
                problems.append(f"{where}: holds most of the title of antecedent {label.id}")
        for call in message.get("tool_calls") or []:
            arguments = call.get("function", {}).get("arguments")
            for paper in (arguments or {}).get("papers", []) if isinstance(arguments, dict) else []:
                if paper.get("id") not in returned:
                    problems.append(f"{where}: submits {paper.get('id')!r}, which no earlier search returned")
    return problems


def audit_file(sft_path: Path, instances: list[Instance]) -> list[str]:
    by_brief = {inst.brief: inst for inst in instances}
    findings = []
    with open(sft_path, encoding="utf-8") as handle:
        for row_no, line in enumerate(handle, start=1):
            findings += [f"{sft_path}: row {row_no}: {p}" for p in audit_row(json.loads(line), by_brief)]
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sft_set", type=Path)
    parser.add_argument("instances", type=Path)
    args = parser.parse_args(argv)
    findings = audit_file(args.sft_set, load_instances(args.instances))
    for finding in findings[:200]:
        print(finding)
    rows = sum(1 for _ in open(args.sft_set, encoding="utf-8"))
    print(f"audit: {len(findings)} finding(s) in {rows} rows" + (" (first 200 shown)" if len(findings) > 200 else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
