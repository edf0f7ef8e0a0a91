"""The requests the builder sends, in our own words: one per judge and target (every eligible
reference in one list), two briefs per target, one identity audit per brief."""

from __future__ import annotations

from hindsight.builder.config import ModelSpec
from hindsight.builder.inputs import Reference
from hindsight.schema import Paper

TARGET_ABSTRACT_CHARS = 1500
REFERENCE_ABSTRACT_CHARS = 600
BRIEF_ABSTRACT_CHARS = 1800

JUDGE_SYSTEM = """\
You grade the references of a research paper for a literature-search benchmark. For each earlier \
paper the TARGET cites, decide how much the target's central contribution rests on it.

Tiers:
T3 - the target's core method is built directly on this paper.
T2 - it supplies an important ingredient: a concept or tool the method adapts, or the approach it is \
chiefly measured against.
T1 - context: background, a foundation or a comparison that is not part of the mechanism.
T0 - cited in passing, or not relevant.

Roles:
conceptual - the target reasons with its idea, mechanism or finding.
infrastructural - the target uses its model, software, data or benchmark.

Prefer specific predecessors to famous generic ones: a standard architecture or a method every \
paper in the field cites is easy to find with any search, so grade it T1 or T0 unless the target \
truly builds on it. Where a citation context is given, judge by how the target uses the reference.

Answer with a JSON array only, one object per reference in the order given, for example
[{"index": 0, "tier": "T2", "role": "conceptual", "rationale": "The method adapts its loss."}]
where tier is one of T0, T1, T2 and T3, role is conceptual or infrastructural, and the rationale is one short sentence."""

DETAILED_SYSTEM = """\
You write the research brief of a literature-search task from a paper's title and abstract. The \
brief describes the problem as it stood before this paper: why it matters, where existing \
approaches fall short, and what a solution must achieve. It must not give the solution away: no \
name of the paper's method or system, no description of its mechanism, no result, dataset or \
benchmark that belongs to this paper. Write in the first person plural, as plain prose of 150 to \
220 words with no title or list, and end by asking which earlier work we should read."""

TERSE_SYSTEM = DETAILED_SYSTEM.replace("150 to 220 words", "80 to 120 words")

AUDIT_SYSTEM = """\
You are shown a research brief that was written from one published paper with the paper's identity \
removed. Say which paper you think it was written from, if you can tell, with no tools and no \
search. Answer with a JSON object only, for example
{"guess": "Learning Sparse Graph Filters", "confidence": 0.3, "rationale": "The brief describes filters on graphs."}
where guess is the paper's title (an empty string if you cannot tell) and confidence is between 0 and 1."""


def _clip(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _request(spec: ModelSpec, system: str, user: str) -> dict:
    return {
        "model": spec.model,
        "api_base": spec.api_base,
        "temperature": 0.0,
        "max_tokens": spec.max_tokens,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


def judge_request(spec: ModelSpec, target: Paper, references: list[tuple[Reference, Paper]]) -> dict:
    lines = [
        f"TARGET\ntitle: {target.title}\nabstract: {_clip(target.abstract, TARGET_ABSTRACT_CHARS)}\n",
        "REFERENCES",
    ]
    for index, (reference, paper) in enumerate(references):
        lines.append(
            f"[{index}] {paper.id} ({paper.date.isoformat()}) {paper.title}\n"
            f"abstract: {_clip(paper.abstract, REFERENCE_ABSTRACT_CHARS)}"
        )
        if reference.context:
            lines.append(f"cited as: {_clip(reference.context, REFERENCE_ABSTRACT_CHARS)}")
    return _request(spec, JUDGE_SYSTEM, "\n".join(lines))


def brief_request(spec: ModelSpec, target: Paper, terse: bool) -> dict:
    user = f"Title: {target.title}\n\nAbstract: {_clip(target.abstract, BRIEF_ABSTRACT_CHARS)}"
    return _request(spec, TERSE_SYSTEM if terse else DETAILED_SYSTEM, user)


def audit_request(spec: ModelSpec, brief: str) -> dict:
    return _request(spec, AUDIT_SYSTEM, f"BRIEF\n{brief}")
