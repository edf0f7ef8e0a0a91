"""The one judgement of a conversation that replay, the teacher's guard and the leak audit share:
the rules of hindsight.leaks (check_messages) and, where the recipe turns it on and a search
index is at hand, the second line (hindsight.distill.retrieval). A row the audit passes is a row
replay would pass, because both ask this."""

from __future__ import annotations

from dataclasses import dataclass

from hindsight.distill.retrieval import retrieval_findings
from hindsight.leaks import Finding, PrivateText, check_messages


@dataclass(frozen=True)
class Judge:
    ngram: int = 5  # shared n-gram length that flags private copying (distill.ngram)
    title_share: float = 0.6  # share of a private title's words queries may not spell out (distill.title_share)
    retrieval_words: int | None = None  # the second line's minimum words (distill.retrieval_words; None: off)
    backend: object = None  # the search index the second line asks (None: off)

    @classmethod
    def of_config(cls, cfg, backend=None) -> Judge:
        """From a DistillConfig and the recipe's search backend."""
        return cls(cfg.ngram, cfg.title_share, cfg.retrieval_words, backend)

    def findings(
        self, messages: list[dict], private: PrivateText, brief: str, only_turn: int | None = None
    ) -> list[Finding]:
        """Every finding in the conversation; with `only_turn`, the second line searches only
        that message's texts (the guard judges one new reply)."""
        findings = check_messages(messages, private, brief, self.ngram, self.title_share)
        if self.backend is not None and self.retrieval_words is not None:
            findings += retrieval_findings(
                messages, self.backend, private, brief, self.retrieval_words, only_turn=only_turn
            )
        return findings
