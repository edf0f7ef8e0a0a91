"""The boundary's third line: text that hides what it says in a cipher no rule reads.

Each generator draws a whole cipher class, not an example: any substitution of the alphabet
(keyed, reversed, shifted), any other script's letters for Latin ones, any signs for letters,
codes of several signs per letter (Morse and its kin), a word per letter (spelling alphabets),
and misspelt words (letters swapped or shuffled inside each word). The validator's check and the
leak audit must flag every case; honest text (English prose, the corpus's words, quotes of what
a search returned) must not be flagged.
"""

import string
import unicodedata
from functools import cache

from hypothesis import assume, given
from hypothesis import strategies as st

from hindsight.leaks import fold
from hindsight.lexicon import MIN_WORD, Lexicon, english_stems
from tests.leak_helpers import SETTINGS, a_title, characters_of, conversation, flagged

LETTERS = string.ascii_lowercase


def long_words(title: str) -> list[str]:
    return [w for w in fold(title).split() if len(w) >= MIN_WORD and w.isalpha()]


@cache
def foreign_letters() -> tuple[str, ...]:
    """Lower-case letters of scripts other than Latin that folding leaves as they are."""
    return tuple(
        ch
        for ch in characters_of("Ll", "Lo")
        if "LATIN" not in unicodedata.name(ch, "LATIN") and fold(ch) == ch and ch.isalpha()
    )


@cache
def signs() -> tuple[str, ...]:
    return tuple(ch for ch in characters_of("So", "Sm", "Po") if fold(ch) == ch and not ch.isspace())


@cache
def words_by_initial() -> dict[str, tuple[str, ...]]:
    from english_words import get_english_words_set

    words = sorted(get_english_words_set(["web2"], lower=True, alpha=True))
    return {letter: tuple(w for w in words if w[0] == letter and 4 <= len(w) <= 9)[:500] for letter in LETTERS}


def per_letter(text: str, code: dict[str, str], letter_gap: str = "", word_gap: str = " ") -> str:
    return word_gap.join(letter_gap.join(code.get(ch, ch) for ch in word) for word in fold(text).split())


@st.composite
def substituted(draw, text: str) -> str:
    """Any permutation of the alphabet that moves most letters."""
    order = draw(st.permutations(LETTERS))
    assume(sum(a != b for a, b in zip(LETTERS, order)) >= 20)
    return per_letter(text, dict(zip(LETTERS, order)))


@st.composite
def other_script(draw, text: str) -> str:
    letters = draw(st.lists(st.sampled_from(foreign_letters()), min_size=26, max_size=26, unique=True))
    return per_letter(text, dict(zip(LETTERS, letters)))


@st.composite
def signs_per_letter(draw, text: str) -> str:
    codes = draw(st.lists(st.sampled_from(signs()), min_size=26, max_size=26, unique=True))
    return per_letter(text, dict(zip(LETTERS, codes)), word_gap=draw(st.sampled_from([" ", "  ", " | "])))


@st.composite
def codes_per_letter(draw, text: str) -> str:
    """Each letter a code of 1-4 signs from a small set, letters and words set apart (Morse's kind)."""
    alphabet = draw(st.lists(st.sampled_from(signs()), min_size=2, max_size=3, unique=True))
    codes = draw(st.lists(st.text(alphabet, min_size=1, max_size=4), min_size=26, max_size=26, unique=True))
    return per_letter(text, dict(zip(LETTERS, codes)), letter_gap=" ", word_gap=draw(st.sampled_from([" / ", "   "])))


@st.composite
def a_word_per_letter(draw, text: str) -> str:
    code = {letter: draw(st.sampled_from(words_by_initial()[letter] or (letter,))) for letter in LETTERS}
    return per_letter(text, code, letter_gap=" ", word_gap=draw(st.sampled_from([" / ", ", ", " "])))


@st.composite
def misspelt(draw, text: str) -> str:
    """Inside each word of five letters or more, its middle letters shuffled or two neighbours swapped."""
    out = []
    for word in fold(text).split():
        if len(word) >= 5 and word.isalpha():
            middle = list(word[1:-1])
            if draw(st.booleans()):
                middle = draw(st.permutations(middle))
            else:
                i = draw(st.integers(0, len(middle) - 2))
                middle[i], middle[i + 1] = middle[i + 1], middle[i]
            changed = word[0] + "".join(middle) + word[-1]
            assume(changed != word)
            word = changed
        out.append(word)
    return " ".join(out)


CIPHERS = {
    "substitution": substituted,
    "other script": other_script,
    "signs": signs_per_letter,
    "codes": codes_per_letter,
    "a word per letter": a_word_per_letter,
    "misspelt": misspelt,
}


@SETTINGS
@given(st.data(), st.sampled_from(sorted(CIPHERS)), st.sampled_from(["query", "rationale"]))
def test_a_title_in_any_cipher_is_flagged_by_both(data, kind, where):
    instance, title = a_title(data.draw)
    # the cipher must hide at least three words of four letters (the lexicon's floor)
    assume(len(long_words(title)) >= 3 if kind != "misspelt" else sum(len(w) >= 5 for w in long_words(title)) >= 3)
    text = data.draw(CIPHERS[kind](title))
    messages = (
        conversation(instance, [text]) if where == "query" else conversation(instance, ["keyword"], rationale=text)
    )
    flags, audit = flagged(instance, messages)
    assert flags & {"identifying_query", "private_copy", "unreadable"} and audit, (kind, where, text)


def test_english_prose_names_cited_authors_and_maths_are_readable():
    lexicon = Lexicon(english_stems())
    for text in [
        "Graded cumulative gain rewards relevance and rank (Järvelin and Kekäläinen, 2002), as Robertson "
        "and Zaragoza (2009) and Petroni et al., 2021 also argue.",
        r"The score is $\frac{1}{N}\sum_i \mathbf{1}[E_i \cap Y_i = \varnothing]$, reported per target.",
        "See https://arxiv.org/abs/2106.09001v2 and arXiv:2107.00001 for the GPT4 and T5-base results.",
    ]:
        assert lexicon.unreadable(text) == "", text


def test_a_text_mostly_of_signs_or_unknown_words_is_unreadable_and_says_why():
    lexicon = Lexicon(english_stems())
    assert "signs" in lexicon.unreadable(".-.. . - / ... - . .--. / -... -.--")
    assert "neither English" in lexicon.unreadable("ovg'h evirub hgvk yb hgvk gsv dliow")
    assert lexicon.unreadable("zqxv wprt kljh") == lexicon.unreadable("the zqxv and wprt with kljh") != ""
    # the words a search showed are the episode's own
    public = frozenset({"zqxv", "wprt", "kljh"})
    assert lexicon.unreadable("zqxv wprt kljh", public) == ""
