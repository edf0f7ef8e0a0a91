"""The privileged teacher's prompt: the deployment system prompt, demonstration instructions,
then a private block of antecedent titles and abstracts (never ids). Our own words."""

from __future__ import annotations

import math
from collections import Counter

from hindsight.corpus import Corpus
from hindsight.prompts import USER_TEMPLATE, system_prompt
from hindsight.schema import Instance, Label, Task
from hindsight.search.text import analyze

DEMONSTRATION_INSTRUCTIONS = """\
You are recording a worked example of this task for a smaller student model to learn from. Each \
of your replies must contain exactly one function call. Plan your searches from the research \
brief. Work only through search_papers, and submit only ids that search_papers has returned to you."""

PRIVATE_HEADER = "TEACHER-ONLY HINTS (the student never sees this block)"
PRIVATE_RULES = (
    "These are papers the eventual solution built on. Use them only to decide what to search "
    "for. Do not copy their titles or phrases into queries or reasons, and never submit an id "
    "that a search did not return."
)
# Strings that only the teacher's prompt contains; the leak audit looks for them.
TEACHER_MARKERS = (PRIVATE_HEADER, "TEACHER-ONLY", "[T3/", "[T2/", "[T1/")


def specificity(label: Label, idf: dict[str, float]) -> float:
    terms = analyze(label.title)
    return sum(idf.get(t, 0.0) for t in terms) / len(terms) if terms else 0.0


def private_block(instance: Instance, idf: dict[str, float], limit: int = 12, abstract_chars: int = 1200) -> str:
    """Antecedents sorted by tier (T3 first), then by how specific their titles are."""
    labels = sorted(instance.labels, key=lambda lab: (-int(lab.tier[1]), -specificity(lab, idf), lab.id))[:limit]
    entries = []
    for i, label in enumerate(labels, start=1):
        abstract = " ".join(label.abstract.split())[:abstract_chars]
        entries.append(f"{i}. [{label.tier}/{label.role}] {' '.join(label.title.split())}\n   Abstract: {abstract}")
    return f"{PRIVATE_HEADER}\n{PRIVATE_RULES}\n\n" + "\n\n".join(entries)


def teacher_messages(
    task: Task, instance: Instance, idf: dict[str, float], limit: int, abstract_chars: int, read_paper: bool = False
) -> list[dict]:
    if task.brief != instance.brief or task.cutoff != instance.cutoff:
        raise ValueError(f"task {task.task_id} does not belong to instance {instance.id}")
    system = "\n\n".join(
        [system_prompt(read_paper), DEMONSTRATION_INSTRUCTIONS, private_block(instance, idf, limit, abstract_chars)]
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": USER_TEMPLATE.format(cutoff=task.cutoff.isoformat(), brief=task.brief)},
    ]


def corpus_idf(corpus: Corpus) -> dict[str, float]:
    """Each analysed term's inverse document frequency over the corpus's titles and abstracts."""
    df = Counter(term for paper in corpus for term in set(analyze(f"{paper.title}\n{paper.abstract}")))
    return {term: math.log(len(corpus) / count) for term, count in df.items()}


def private_texts(instances, corpus, cfg, idf: dict[str, float] | None = None) -> dict:
    """instance id -> hindsight.leaks.PrivateText: the private block exactly as the teacher got it
    under the recipe's `distill` settings, for the teacher's guard, the validator and the audit alike."""
    from hindsight.leaks import PrivateText
    from hindsight.lexicon import Lexicon

    idf = idf if idf is not None else corpus_idf(corpus)
    lexicon = Lexicon.of_corpus(corpus, cfg.unreadable_words) if cfg.unreadable_words is not None else None
    return {
        inst.id: PrivateText.build(
            private_block(inst, idf, cfg.private_max, cfg.abstract_chars),
            inst.target.title,
            inst.target.id,
            inst.labels,
            cfg.ngram,
            lexicon,
        )
        for inst in instances
    }
