"""Is a text written in words? The boundary's check for text that hides what it says.

The leak rules (hindsight.leaks) read each class of disguise they know back into plain words.
A cipher they do not know (a keyed substitution, another script's transliteration, Morse or
Braille, scrambled or misspelt words) reads as nothing, and passes. This check judges the other
way round: an honest agent writes its queries and rationales in words of English, of the corpus
it searches, of its brief and of the results it was shown, so a text with several words that
are none of these, or made mostly of signs, is refused as unreadable whatever the cipher. A
query, the one free text a training row keeps, is held to a closed vocabulary: a single word
outside it refuses it (`Lexicon.unknown_query_words`).
It does not read meaning: synonyms and translation into English words pass it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hindsight.leaks import fold, spelled

_ALNUM_RUN = re.compile(r"[^\W_]+")
_URL = re.compile(r"(?:https?://|www\.)\S+")
# words of citing a paper and of writing maths, which any episode may use beside the prompt's
_PLAIN = (
    "arxiv doi preprint frac mathbf mathrm mathcal mathbb operatorname ldots cdots dots textbf "
    "textit qquad varnothing emptyset infty leq geq neq approx cdot sqrt"
)
# authors as a citation names them: "Robertson and Zaragoza, 2009", "Petroni et al., 2021"
_NAME = r"[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*"
_CITATION = re.compile(rf"\b({_NAME})(?:\s+et\s+al\.?|\s+(?:and|&)\s+({_NAME}))?,?\s+\(?(?:19|20)\d\d[a-z]?\b")
MIN_WORD = 4  # shorter words are too often some dictionary's word by chance
MIN_SIGNED_TEXT = 12  # non-space characters before the share of signs is judged


@lru_cache(maxsize=1)
def english_stems() -> frozenset[str]:
    """Stems of the English dictionary words (Webster's Second and GCIDE, lower case, from the
    english-words package): about 4 s the first time in a process."""
    from english_words import get_english_words_set

    from hindsight.prompts import USER_TEMPLATE, system_prompt

    plain = _ALNUM_RUN.findall(fold(f"{system_prompt(True)} {USER_TEMPLATE} {_PLAIN}"))
    return frozenset(spelled(w) for w in [*get_english_words_set(["web2", "gcide"], lower=True, alpha=True), *plain])


@dataclass(frozen=True)
class Lexicon:
    """The words an honest agent writes with: stems of English and of a corpus's titles and
    abstracts. A text with `min_unknown` words of MIN_WORD letters or more outside it (and outside
    what the episode made public), making at least `min_share` of its words, is unreadable."""

    stems: frozenset[str]
    min_unknown: int = 3
    min_share: float = 0.2
    numbers: frozenset[str] = frozenset()  # numbers the corpus writes (years, versions, sizes)

    @classmethod
    def of_corpus(cls, corpus, min_unknown: int = 3) -> Lexicon:
        return cls(english_stems() | corpus_stems(corpus), min_unknown, numbers=corpus_numbers(corpus))

    def _known(self, word: str, public: frozenset[str]) -> bool:
        stem = spelled(word)
        return stem in self.stems or stem in public

    def unreadable(self, text: str, public: frozenset[str] = frozenset()) -> str:
        """Why `text` cannot be read as words ('' when it can). Authors named in a citation are words."""
        cited = {w for m in _CITATION.finditer(text) for name in m.groups() if name for w in _tokens(fold(name))}
        public = public | {spelled(w) for w in cited}
        folded = fold(text)
        chars = [ch for ch in folded if not ch.isspace()]
        signs = sum(1 for ch in chars if not ch.isalnum())
        if len(chars) >= MIN_SIGNED_TEXT and signs > len(chars) / 2:
            return f"{signs} of its {len(chars)} characters are signs, not letters or digits"
        written = _tokens(folded)
        unknown = [w for w in written if not self._known(w, public)]
        # a short text (a query) whose every word is unknown needs only two of them
        if (len(unknown) >= self.min_unknown and len(unknown) >= self.min_share * len(written)) or (
            len(unknown) >= 2 and len(unknown) == len(written)
        ):
            return (
                f"{len(unknown)} words are neither English, the corpus's nor the episode's ({', '.join(unknown[:6])})"
            )
        return ""

    def unknown_query_words(self, query: str, public: frozenset[str] = frozenset()) -> list[str]:
        """The words of a query outside the closed vocabulary (English, the corpus, what the
        episode made public), each once: every run of letters and digits counts, however short,
        and a number is a word only where the corpus, the brief or a result wrote it. No share or
        threshold: one such word refuses the query."""
        unknown = []
        for token in dict.fromkeys(_ALNUM_RUN.findall(fold(query).lower())):
            stem = spelled(token)
            if stem in public or (token in self.numbers if token.isdigit() else stem in self.stems):
                continue
            unknown.append(token)
        return unknown


def _tokens(folded: str) -> list[str]:
    """Runs of letters of any script, MIN_WORD long or more, once each; URLs and runs with digits
    (ids, versions, model names) are no words. Digits written for letters are the rules' to read."""
    return list(
        dict.fromkeys(
            w
            for w in _ALNUM_RUN.findall(_URL.sub(" ", folded))
            if len(w) >= MIN_WORD and not any(ch.isdigit() for ch in w)
        )
    )


def corpus_stems(corpus) -> frozenset[str]:
    """Stems of every word of the corpus's titles and abstracts."""
    return _corpus_vocabulary(corpus)[0]


def corpus_numbers(corpus) -> frozenset[str]:
    """Every number the corpus's titles and abstracts write, as a run of digits ("2.0" gives 2 and 0)."""
    return _corpus_vocabulary(corpus)[1]


def _corpus_vocabulary(corpus) -> tuple[frozenset[str], frozenset[str]]:
    """(stems of its words, its numbers), from one folding pass over the corpus, once per process."""
    if corpus.hash not in _CORPUS_VOCABULARY:
        runs = {w for p in corpus for w in _ALNUM_RUN.findall(fold(f"{p.title}\n{p.abstract}"))}
        _CORPUS_VOCABULARY[corpus.hash] = (
            frozenset(spelled(w) for w in runs if not w.isdigit()),
            frozenset(w for w in runs if w.isdigit()),
        )
    return _CORPUS_VOCABULARY[corpus.hash]


_CORPUS_VOCABULARY: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # corpus hash -> (stems, numbers)
