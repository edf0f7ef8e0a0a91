"""The leak vocabulary: one way to normalise text and find ids in it, shared by the replay
validator and the leak audit, so that both judge the same text the same way.

Text is folded before any comparison, by class of character rather than by example:
percent-encoding and HTML entities undone, Unicode compatibility forms (full-width letters and
digits, ligatures, no-break spaces), every format character and mark removed (zero-width
characters, joiners, variation selectors, combining and enclosing marks), every decimal digit
of any script made ASCII, look-alike capitals and letters of other scripts mapped to Latin,
diacritics dropped, every dash made a hyphen, lower case. Inside a word, digits and signs written
for letters are read as the letters ("hi3rarchica1"); inside an id, letters written for digits
are read as digits ("2106.O9OO1"). Words are then spelled one way (British and American
variants meet) and stemmed by the search analyser's own stemmer, so a word form that the search
would match counts as the same word. Hyphenated and joined spellings meet because adjacent words
are also compared joined, and words run together are cut apart against the private text's own
vocabulary.

What string rules cannot catch, a paraphrase with synonyms, is left to the teacher's
instructions and the audit sample (docs/concepts/boundary.md).
"""

from __future__ import annotations

import base64
import html
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import product
from typing import Protocol
from urllib.parse import unquote

from hindsight.ids import normalize_arxiv_id
from hindsight.search.text import STOPWORDS, stem


class TextReader(Protocol):
    """What tells readable text from unreadable (hindsight.lexicon.Lexicon builds one); defined
    here so that this module needs nothing of the lexicon, which builds on its folding."""

    def unreadable(self, text: str, public: frozenset[str] = frozenset()) -> str: ...

    def unknown_query_words(self, query: str, public: frozenset[str] = frozenset()) -> list[str]: ...


# Letters of other scripts that render like Latin ones (the common confusables).
_CONFUSABLES = str.maketrans(
    {
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "һ": "h",
        "ӏ": "l",
        "ɡ": "g",
        "ɑ": "a",
        "ο": "o",
        "α": "a",
        "ν": "v",
        "ι": "i",
        "κ": "k",
        "τ": "t",
        "ρ": "p",
        "υ": "u",
        "χ": "x",
        "ε": "e",
        "η": "n",
        "β": "b",
        "γ": "y",
        "ω": "w",
        "μ": "u",
        "ı": "i",
        "ȷ": "j",
        "ℓ": "l",
        "ß": "ss",
        "æ": "ae",
        "œ": "oe",
        "ø": "o",
        "đ": "d",
        "ł": "l",
    }
)
_SPELLINGS = [
    (re.compile(pattern), repl)
    for pattern, repl in (
        (r"isation", "ization"),
        (r"is(e|ed|es|ing|er|ers)$", r"iz\1"),
        (r"ys(e|ed|es|ing)$", r"yz\1"),
        (r"our(s|ed|ing|ful)?$", r"or\1"),
        (r"([^aeiou])tre(s)?$", r"\1ter\2"),
        (r"ll(ing|ed|er|ers)$", r"l\1"),
        (r"ogue(s)?$", r"og\1"),
    )
]
_WORD = re.compile(r"[a-z0-9]+")
_DIGITS = re.compile(r"\d")
_NOT_ALNUM = re.compile(r"[^0-9a-z]")
_LETTER = re.compile(r"[^\W\d_]")
_CONTENT_STOP = frozenset(STOPWORDS) | {"via", "using", "towards", "toward"}
_GLUE = frozenset(w for w in _CONTENT_STOP if len(w) >= 2)


# Capital letters of other scripts that render like Latin capitals: mapped before lower-casing,
# where they would become other letters (Greek Η is "h" to the eye, η after lower()).
_CAPITAL_CONFUSABLES = str.maketrans(
    {
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "Х": "X",
        "Ѕ": "S",
        "І": "I",
        "Ј": "J",
        "Ү": "Y",
        "Ԛ": "Q",
        "Ԝ": "W",
        "Ӏ": "I",
        "Ь": "b",
    }
)
# Digits and signs written for letters inside a word ("hi3rarchica1", "cl@ssifier").
_LETTER_OF_DIGIT = {"0": "o", "1": "l", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}
_LEET = str.maketrans(_LETTER_OF_DIGIT)
_LEET_I = str.maketrans({**_LETTER_OF_DIGIT, "1": "i"})
_LEET_BUT_ONE = str.maketrans({digit: letter for digit, letter in _LETTER_OF_DIGIT.items() if digit != "1"})
_ONE_IN_WORD = re.compile(r"[a-z]1|1[a-z]")
_SIGN_FOR_LETTER = re.compile(r"(?<=[a-z0-9])[@$](?=[a-z0-9])")
_MARKS = frozenset({"Cf", "Mn", "Me", "Mc"})
# the letter in a character's name: the first single capital after LETTER ("... LETTER DOTLESS I")
_NAMED_LETTER = re.compile(r"\bLETTER(?: [A-Z]+)*? ([A-Z])(?: |$)")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,40}>")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})")
# a token of 16 or more base64 or hex characters, none of them spaces: perhaps encoded text
_ENCODED_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/_=-])")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")


def decoded(text: str) -> str:
    """Encodings undone, twice over for text encoded twice: percent-encoding (a title in a URL),
    HTML entities, markup tags (a tag around every letter), backslash escapes (\\u0041, \\x41), and
    base64 or hex tokens that decode to text."""
    for _ in range(2):
        if "%" in text and _PERCENT.search(text):
            text = unquote(text)
        if "&" in text:
            text = html.unescape(text)
        if "<" in text:
            text = _TAG.sub("", text)
        if "\\" in text:
            text = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)
        if len(text) >= 16:
            text = _ENCODED_TOKEN.sub(_decoded_token, text)
    return text


def _decoded_token(match: re.Match) -> str:
    """A base64 or hex token as the text it encodes, or as it is when it encodes no text."""
    token = match.group()
    attempts = [lambda: bytes.fromhex(token)] if _HEX.fullmatch(token) else []
    attempts += [
        lambda: base64.b64decode(token + "=" * (-len(token) % 4), validate=True),
        lambda: base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)),
    ]
    for attempt in attempts:
        try:
            text = attempt().decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if (
            len(text) >= 4
            and text.isprintable()
            and sum(ch.isalnum() or ch.isspace() for ch in text) >= 0.7 * len(text)
        ):
            return f" {text} "
    return token


def fold(text: str) -> str:
    """Text as compared, by class of character rather than by example: encodings undone,
    compatibility forms, every format character and mark dropped (zero-width joiners, variation
    selectors, combining and enclosing marks), every decimal digit in ASCII, look-alike capitals
    and letters of other scripts mapped to Latin, diacritics dropped, ASCII hyphens, lower case."""
    text = decoded(text)
    if not text.isascii():
        # letter forms by name first: compatibility normalisation would put ⒞ in parentheses
        text = unicodedata.normalize("NFKC", "".join(_latin_letter(ch) or ch for ch in text))
        text = "".join(_fold_char(ch) for ch in text).translate(_CAPITAL_CONFUSABLES)
        text = text.lower().translate(_CONFUSABLES)
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if unicodedata.category(ch) not in _MARKS)
    text = text.lower()
    return (
        _SIGN_FOR_LETTER.sub(lambda m: "a" if m.group() == "@" else "s", text) if ("@" in text or "$" in text) else text
    )


@cache
def _fold_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in _MARKS:
        return ""
    if category == "Nd":
        return str(unicodedata.decimal(ch))
    if category == "Pd":
        return "-"
    return _latin_letter(ch) or ch


@cache
def _latin_letter(ch: str) -> str:
    """The Latin letter a character is a form of, read from its Unicode name ("LATIN LETTER SMALL
    CAPITAL A", "REGIONAL INDICATOR SYMBOL LETTER A", "NEGATIVE SQUARED LATIN CAPITAL LETTER A",
    "LATIN SMALL LETTER DOTLESS I"): small capitals, modifier and indicator letters and the like,
    which compatibility normalisation leaves alone."""
    if ch.isascii() or unicodedata.category(ch) in _MARKS:  # COMBINING LATIN SMALL LETTER A is a mark
        return ""
    name = unicodedata.name(ch, "")
    if "LATIN" not in name and not name.startswith("REGIONAL INDICATOR"):
        return ""
    match = _NAMED_LETTER.search(name)
    return match.group(1).lower() if match else ""


def _read_digits(word: str, one: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """A word of letters and digits as the word it disguises, its digits read as the letters they
    stand for, 1 as `one` (l or i); with `one` "either", each 1 as l or as i, whichever makes a
    word of `vocabulary` ("11ghtweigh7" is "lightweight"). Words of digits alone (years, id
    parts) are left as they are."""
    if word.isalpha() or word.isdigit():
        return word
    if one != "either":
        return word.translate(_LEET_I if one == "i" else _LEET)
    return _either_reading(word.translate(_LEET_BUT_ONE), vocabulary)


@lru_cache(maxsize=20_000)
def _either_reading(word: str, vocabulary: frozenset[str]) -> str:
    ones = word.count("1")
    if ones == 0 or ones > 6:  # past six ones, 64 readings: the plain ones stand
        return word.replace("1", "l")
    parts = word.split("1")
    for letters in product("li", repeat=ones):
        reading = parts[0] + "".join(letter + part for letter, part in zip(letters, parts[1:]))
        if reading in vocabulary:
            return reading
    return word.replace("1", "l")


def _readings(folded: str, vocabulary: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """How a 1 inside a word may be read: as l; also as i where the folded text has such a word;
    and, given a vocabulary, each 1 of a word as l or i, whichever spells one of its words."""
    if not _ONE_IN_WORD.search(folded):
        return ("l",)
    return ("l", "i", "either") if vocabulary else ("l", "i")


@lru_cache(maxsize=200_000)
def spelled(word: str) -> str:
    """One spelling of a word (British and American forms meet), then its stem."""
    if len(word) >= 5 and not _DIGITS.search(word):
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]  # the singular first, so that a plural meets the same spelling rule
        for pattern, repl in _SPELLINGS:
            word = pattern.sub(repl, word)
    return stem(word)


@lru_cache(maxsize=200_000)
def segment(word: str, vocabulary: frozenset[str]) -> tuple[str, ...]:
    """`word` cut into words of `vocabulary` (or the article a) when it is several of them run
    together ("componentvariant", "asurvey"), each optionally with a plural s; else the word itself."""
    if len(word) < 5 or word in vocabulary:
        return (word,)
    best: list[list[str] | None] = [[]] + [None] * len(word)  # best[i]: fewest pieces for word[:i]
    for end in range(1, len(word) + 1):
        for start in range(max(0, end - 40), end):
            piece = word[start:end]
            if best[start] is not None and (
                piece in vocabulary or piece == "a" or (piece.endswith("s") and piece[:-1] in vocabulary)
            ):
                if best[end] is None or len(best[start]) + 1 < len(best[end]):
                    best[end] = best[start] + [piece]
    return tuple(best[-1]) if best[-1] and len(best[-1]) > 1 else (word,)


def words(text: str, vocabulary: frozenset[str] = frozenset(), one: str = "l") -> list[str]:
    """The folded words of `text`, in order (hyphens split words; digits inside a word read as
    letters, 1 as `one`; words of `vocabulary` run together are cut apart)."""
    return _words_of(fold(text), vocabulary, one)


def _words_of(folded: str, vocabulary: frozenset[str], one: str) -> list[str]:
    found = [_read_digits(w, one, vocabulary) for w in _WORD.findall(folded)]
    return [piece for w in found for piece in segment(w, vocabulary)] if vocabulary else found


# -- text written to hide its words -------------------------------------------------------------
# Assistant text is also read as if it were disguised, by class of disguise: letters spread apart
# by separators, words run together around letters that are no word, every letter repeated, signs
# for letters, each word reversed or rotated (pig latin and its kin), letters shifted along the
# alphabet (rot13, any Caesar shift), words without their vowels or cut short, a word per letter.
# Each reading is only ever compared with the private text's words, so a reading of honest text
# finds nothing.
_SPREAD = re.compile(r"(?<![a-z0-9])[a-z0-9](?:[^a-z0-9]{1,3}[a-z0-9](?![a-z0-9])){2,}")
_SIGN_LETTERS = {"@": "a", "$": "s", "|": "l", "!": "i", "€": "e", "£": "l", "+": "t", "¢": "c", "§": "s"}
_SIGNS = str.maketrans(_SIGN_LETTERS)
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_SHIFTS = [str.maketrans(_LOWER, _LOWER[k:] + _LOWER[:k]) for k in range(26)]
_VOWELS = re.compile(r"[aeiou]")


def _repeated(word: str) -> str:
    """A word with every letter written k times (k = 2, 3) as the word itself; else ''."""
    for k in (2, 3):
        if len(word) >= 2 * k and len(word) % k == 0 and all(word[i::k] == word[::k] for i in range(1, k)):
            return word[::k]
    return ""


def _lenient_segment(run: str, vocabulary: frozenset[str]) -> str:
    """Letters run together (a spread-out text with its separators gone) cut into words of
    `vocabulary`, skipping as few letters as possible ("viaaself": "via", "self")."""
    inf = (len(run) + 1, 0)
    best: list[tuple[tuple[int, int], list[str]]] = [((0, 0), [])] + [(inf, [])] * len(run)
    for end in range(1, len(run) + 1):
        cost, pieces = best[end - 1]
        best[end] = ((cost[0] + 1, cost[1]), pieces)  # skip one letter
        for start in range(max(0, end - 40), end - 2):
            piece = run[start:end]
            if piece in vocabulary or (piece.endswith("s") and piece[:-1] in vocabulary):
                cost, pieces = best[start]
                if (cost[0], cost[1] + 1) < best[end][0]:
                    best[end] = ((cost[0], cost[1] + 1), pieces + [piece])
    return " ".join(best[-1][1])


def _unique(pairs) -> dict[str, str]:
    found: dict[str, str | None] = {}
    for key, word in pairs:
        found[key] = None if found.get(key, word) != word else word
    return {key: word for key, word in found.items() if word}


@lru_cache(maxsize=1024)
def _shortenings(vocabulary: frozenset[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The vocabulary's words of four letters or more by their consonants (three or more), and by
    their first five letters or more (two letters short of the word at least), where unique."""
    long_words = [w for w in vocabulary if len(w) >= 4 and w.isalpha()]
    skeletons = _unique((_VOWELS.sub("", w), w) for w in long_words)
    prefixes = _unique((w[:end], w) for w in long_words for end in range(5, len(w) - 1))
    return (
        {k: w for k, w in skeletons.items() if len(k) >= 3},
        {k: w for k, w in prefixes.items() if k not in vocabulary},
    )


def _shifted(folded: str, vocabulary: frozenset[str]) -> str:
    """The text with its letters shifted back by the one shift (rot13 or any other Caesar shift)
    that makes two or more of its words words of `vocabulary`; else ''."""
    found = [w for w in _WORD.findall(folded) if len(w) >= 3 and w.isalpha()]
    if len(found) < 2:
        return ""
    hits = [(sum(w.translate(shift) in vocabulary for w in found), k) for k, shift in enumerate(_SHIFTS) if k]
    best, k = max(hits)
    return folded.translate(_SHIFTS[k]) if best >= 2 else ""


def _rotated(word: str, vocabulary: frozenset[str]) -> str:
    """The word of `vocabulary` that `word` is a rotation of, perhaps with up to three letters
    added at its end ("atadey" is "data"); else ''."""
    if len(word) < 5 or word in vocabulary or not word.isalpha():
        return ""
    for core in (word, word[:-1], word[:-2], word[:-3]):
        for cut in range(1, len(core)):
            turned = core[cut:] + core[:cut]
            if len(turned) >= 3 and turned in vocabulary:
                return turned
    return ""


def _disguise_readings(folded: str, vocabulary: frozenset[str]) -> list[str]:
    """Other readings of folded assistant text, for each class of disguise it may hold."""
    readings = [" ".join(w[::-1] for w in folded.split())]
    shifted = _shifted(folded, vocabulary)
    if shifted:
        readings.append(shifted)
    if any(sign in folded for sign in _SIGN_LETTERS):
        readings.append(folded.translate(_SIGNS))
    spread = [_lenient_segment(_NOT_ALNUM.sub("", m.group()), vocabulary) for m in _SPREAD.finditer(folded)]
    if spread:
        readings.append(" ".join(spread))
    found = _WORD.findall(folded)
    run_together = [_lenient_segment(w, vocabulary) for w in found if len(w) >= 12 and w not in vocabulary]
    if any(run_together):
        readings.append(" ".join(run_together))
    if len(found) >= 6:  # a word per letter (a spelling alphabet, any words): the letters are their initials
        initials = _lenient_segment("".join(w[0] for w in found), vocabulary)
        if initials:
            readings.append(initials)
    rotated = [_rotated(w, vocabulary) for w in found]
    if any(rotated):
        readings.append(" ".join(r or w for r, w in zip(rotated, found)))
    repeated = [_repeated(w) for w in found]
    if any(repeated):
        readings.append(" ".join(r or w for r, w in zip(repeated, found)))
    skeletons, prefixes = _shortenings(vocabulary)
    shortened = [skeletons.get(w, "") if not _VOWELS.search(w) else prefixes.get(w, "") for w in found]
    if any(shortened):
        readings.append(" ".join(u or w for u, w in zip(shortened, found)))
    return readings


@lru_cache(maxsize=4096)
def _texts(text: str, vocabulary: frozenset[str], disguises: bool) -> tuple[str, ...]:
    """The folded text, and with `disguises` its disguise readings: kept, because the validator
    asks for both the terms and the n-grams of every text the assistant wrote."""
    folded = fold(text)
    return (folded, *_disguise_readings(folded, vocabulary)) if disguises else (folded,)


@lru_cache(maxsize=4096)
def terms(text: str, vocabulary: frozenset[str] = frozenset(), disguises: bool = False) -> frozenset[str]:
    """Every term `text` holds: its words' stems and the stems of adjacent words joined
    ("state space" also holds "statespac"), so split and joined spellings meet; a word written
    with digits for letters holds each of its readings. With `disguises`, so does each reading of
    text written to hide its words (assistant text: see _disguise_readings)."""
    held: set[str] = set()
    for folded in _texts(text, vocabulary, disguises):
        for one in _readings(folded, vocabulary):
            ws = _words_of(folded, vocabulary, one)
            held |= {spelled(w) for w in ws} | {spelled(a + b) for a, b in zip(ws, ws[1:])}
    return frozenset(held)


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in _CONTENT_STOP]


def ngrams(
    text: str, n: int, vocabulary: frozenset[str] = frozenset(), disguises: bool = False
) -> set[tuple[str, ...]]:
    """Word n-grams of the folded, stemmed text (under each reading of its digits, and with
    `disguises` of each reading of text written to hide its words)."""
    grams: set[tuple[str, ...]] = set()
    for folded in _texts(text, vocabulary, disguises):
        for one in _readings(folded, vocabulary):
            stems = [spelled(w) for w in _words_of(folded, vocabulary, one)]
            grams |= {tuple(stems[i : i + n]) for i in range(len(stems) - n + 1)}
    return grams


@lru_cache(maxsize=100_000)
def _title_stems(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A title's content-word stems, and the stems of each adjacent pair joined."""
    title_words = content_words(title)
    return tuple(spelled(w) for w in title_words), tuple(spelled(a + b) for a, b in zip(title_words, title_words[1:]))


def title_coverage(title: str, held: set[str], public: frozenset[str] = frozenset()) -> tuple[float, int]:
    """(share of the title's content words that `held` terms cover, number of content words).
    Two adjacent title words count as covered when their joined form is held. A word that is
    `public` (the brief, or a result the agent was shown, holds it) is never counted as covered:
    nobody needs hindsight to write it."""
    stems, pairs = _title_stems(title)
    covered = {i for i, stem in enumerate(stems) if stem in held}
    for i, pair in enumerate(pairs):
        if pair in held:
            covered |= {i, i + 1}
    covered = {i for i in covered if stems[i] not in public}
    return (len(covered) / len(stems) if stems else 0.0), len(stems)


def title_in_queries(
    title: str,
    queries: list[str],
    share: float,
    public: frozenset[str] = frozenset(),
    vocabulary: frozenset[str] = frozenset(),
) -> str | None:
    """Why these queries (all of an episode's so far) spell out `title`, or None. Only words
    beyond the `public` ones count, and the queries count together, so a title split across
    several of them (in any order, with other words between) is caught like a title in one.

    A title of three or more content words is spelled out when the queries hold `share` of
    them; a title of one or two content words, when one query holds it whole."""
    length = len(_title_stems(title)[0])
    if 1 <= length <= 2:
        for query in queries:
            if title_coverage(title, terms(query, vocabulary, disguises=True), public)[0] == 1.0:
                return f"query {query!r} holds the whole title"
        return None
    held = set().union(*(terms(query, vocabulary, disguises=True) for query in queries)) if queries else set()
    coverage, _ = title_coverage(title, held, public)
    if length >= 3 and coverage >= share:
        where = f"query {queries[0]!r}" if len(queries) == 1 else f"the {len(queries)} queries so far"
        return f"{where} hold {coverage:.0%} of the title's words beyond the brief and the results"
    return None


# -- ids ---------------------------------------------------------------------------------------

# An arXiv id with anything but letters and digits between its parts ("2106 . 09001",
# "2106-09001", "2106.09001v3"), old style included; full-width digits are folded first.
_SEP = r"[^a-z0-9]{0,3}"
_NEW_ID = re.compile(rf"(?<![0-9])(\d{_SEP}\d{_SEP}\d{_SEP}\d){_SEP}[.\-_/ ]{_SEP}((?:\d{_SEP}){{3,4}}\d)(?![0-9])")
_OLD_ID = re.compile(r"\b([a-z]+(?:-[a-z]+)*)(?:\.[a-z]{2})?\s*/\s*(\d{7})\b")


# An id with letters for some of its digits ("2106.O9OO1", "21O6.09001"): o for 0, l or i for 1.
_ID_WITH_LETTERS = re.compile(r"(?<![a-z0-9])([0-9oli]{4})([.\-_/ ])([0-9oli]{4,5})(?=v\d|(?![a-z0-9]))")


_DIGIT_OF_LETTER = str.maketrans({"o": "0", "l": "1", "i": "1"})


def _digits_for_letters(match: re.Match) -> str:
    head, separator, tail = match.groups()
    if sum(ch.isdigit() for ch in head + tail) < 5:  # mostly letters: a word, not an id
        return match.group()
    return head.translate(_DIGIT_OF_LETTER) + separator + tail.translate(_DIGIT_OF_LETTER)


def _id_text(text: str) -> str:
    """`text` folded, with letters written for digits inside ids read as digits."""
    return _ID_WITH_LETTERS.sub(_digits_for_letters, fold(text))


def ids_in(text: str) -> set[str]:
    """The canonical arXiv ids written anywhere in `text`, however separated or spelled."""
    if not _has_digits(text):
        return set()
    return _ids_of(_id_text(text))


def _has_digits(text: str) -> bool:
    """Whether `text` holds a digit, of any script or form (circled, full-width, encoded...)."""
    return (
        bool(_DIGITS.search(text))
        or (not text.isascii() or "\\" in text or len(text) >= 16)
        and bool(_DIGITS.search(fold(text)))
    )


def _ids_of(folded: str) -> set[str]:
    found = set()
    for head, tail in _NEW_ID.findall(folded):
        candidate = normalize_arxiv_id(re.sub(r"\D", "", head) + "." + re.sub(r"\D", "", tail))
        if candidate:
            found.add(candidate)
    for archive, number in _OLD_ID.findall(folded):
        candidate = normalize_arxiv_id(f"{archive}/{number}")
        if candidate:
            found.add(candidate)
    return found


def private_id_in(text: str, private: Iterable[str]) -> set[str]:
    """Which of the `private` ids (canonical) `text` holds: in any spelling ids_in reads, or as
    their digits run together ("210609001")."""
    private = set(private)
    if not private or not (_has_digits(text) or _NUMBER_WORD.search(text.lower()) or _SPOKEN.search(text.lower())):
        return set()
    folded = _id_text(text)
    if _NUMBER_WORD.search(folded):  # digits written as words: "two one zero six point ..."
        folded += " " + _id_text(_NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group()], folded))
    spoken = _spoken_ids(folded, private) if _SPOKEN.search(folded) else set()
    hits = _ids_of(folded) & private
    # letters for digits however many, since only the private ids themselves are looked for ("2OI2.OOO88")
    hits |= {
        pid
        for head, _, tail in _ID_WITH_LETTERS.findall(folded)
        if (pid := normalize_arxiv_id(head.translate(_DIGIT_OF_LETTER) + "." + tail.translate(_DIGIT_OF_LETTER)))
        in private
    }
    squashed = _squash(folded)
    # its digits run together, in order or reversed
    return hits | spoken | {pid for pid in private if _squash(pid) in squashed or _squash(pid)[::-1] in squashed}


_NUMBER_WORDS = {
    word: str(digit) for digit, word in enumerate("zero one two three four five six seven eight nine".split())
} | {"oh": "0", "nought": "0", "point": ".", "dot": "."}
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS) + r")\b")
# numbers as they are said: tens with or without a unit, teens, a digit doubled or tripled
_TENS = {
    word: str(tens) for tens, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_TEENS = {
    word: str(n)
    for n, word in enumerate(
        "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split(), 10
    )
}
_SPOKEN = re.compile(rf"\b(?:{'|'.join([*_TENS, *_TEENS, 'double', 'triple'])})\b")
_SAID = re.compile(r"[a-z]+|\d+|[^\sa-z\d-]+")


def _spoken_ids(folded: str, private: set[str]) -> set[str]:
    """The private ids that numbers said as words spell: "twenty-one oh six point oh nine double
    oh one". "forty five" is 45 or 40 then 5: every reading is tried against the ids sought."""
    said = _SAID.findall(folded)
    options: list[tuple[str, ...] | None] = []  # per word: the digits it may stand for (None: no number)
    for i, word in enumerate(said):
        following = said[i + 1] if i + 1 < len(said) else ""
        if word in _TENS:
            unit = following in _NUMBER_WORDS and _NUMBER_WORDS[following] not in "0."
            options.append((_TENS[word] + "0", _TENS[word]) if unit else (_TENS[word] + "0",))
        elif word in _TEENS:
            options.append((_TEENS[word],))
        elif word in ("double", "triple") and (following in _NUMBER_WORDS or following.isdigit()):
            digit = following if following.isdigit() else _NUMBER_WORDS[following]
            options.append((digit * (1 if word == "double" else 2),))  # the digit word itself gives one more
        elif word in _NUMBER_WORDS:
            options.append((_NUMBER_WORDS[word].strip("."),))
        elif word.isdigit():
            options.append((word,))
        elif word in (".", "·"):
            options.append(("",))
        else:
            options.append(None)

    def spells(i: int, rest: str) -> bool:
        if not rest:
            return True
        if i == len(options) or options[i] is None:
            return False
        for digits in options[i]:
            if rest.startswith(digits) and spells(i + 1, rest[len(digits) :]):
                return True
            if digits and digits.startswith(rest):  # the id ends inside this number
                return True
        return False

    return {pid for pid in private if any(spells(i, _squash(pid)) for i in range(len(options)) if options[i])}


@lru_cache(maxsize=100_000)
def _squash(text: str) -> str:
    return _NOT_ALNUM.sub("", text)


TARGET = "the target"  # whose title PrivateText.titles lists first


@dataclass(frozen=True)
class PrivateText:
    """What a teacher saw that a student must not: the private block's text and n-grams, the
    titles of the labels and the target, and their ids. Built once, from the recipe's settings,
    for the validator and the audit alike."""

    text: str
    ngrams: frozenset
    titles: tuple[tuple[str, str], ...]  # (whose, title): "the target", "antecedent <id>"
    ids: frozenset
    vocabulary: frozenset  # its words: what words run together are cut into
    lexicon: TextReader | None = None  # text written outside it is unreadable (None: not judged)

    @classmethod
    def build(cls, block: str, target_title: str, target_id: str, labels, n: int, lexicon=None) -> PrivateText:
        titles = ((TARGET, target_title),) + tuple((f"antecedent {lab.id}", lab.title) for lab in labels)
        # small function words too, so that "tuningof" comes apart like "tuning of"
        vocabulary = (
            frozenset(w for text in [block, *(t for _, t in titles)] for w in words(text) if len(w) >= 3) | _GLUE
        )
        return cls(
            text=block,
            ngrams=frozenset(ngrams(block, n)),
            titles=titles,
            ids=frozenset({target_id, *(lab.id for lab in labels)}),
            vocabulary=vocabulary,
            lexicon=lexicon,
        )


@dataclass(frozen=True)
class Finding:
    flag: str  # private_copy, identifying_query, unreadable, unsurfaced or malformed
    turn: int  # the message's index in the conversation
    text: str  # the offending text
    reason: str

    def __str__(self) -> str:
        return f"message {self.turn}: {self.flag}: {self.reason} in {self.text[:120]!r}"


def call_arguments(arguments) -> dict | None:
    """A call's arguments exactly as the environment reads them: a dict, or JSON text of one."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None
    return arguments if isinstance(arguments, dict) else None


def strings_of(value) -> list[str]:
    """Every string inside a JSON value (a call's arguments, a shown paper), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_of(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_of(item)]
    return []


def papers_shown(content: str) -> list[dict]:
    """The papers a tool answer showed the agent."""
    try:
        answer = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return []
    if not isinstance(answer, dict):
        return []
    papers = [hit for hit in answer.get("results", []) if isinstance(hit, dict)]
    return papers + ([answer["paper"]] if isinstance(answer.get("paper"), dict) else [])


def paper_ids(papers: list[dict]) -> set[str]:
    """The canonical ids of `papers` (malformed ones left out)."""
    return {pid for pid in (normalize_arxiv_id(p.get("id")) for p in papers) if pid}


def check_messages(messages: list[dict], private: PrivateText, brief: str, n: int, share: float) -> list[Finding]:
    """Every leak in a conversation that the ordinary interface could not explain, judged over
    the whole trajectory: titles against all queries so far, and against everything the
    assistant wrote so far (queries, rationales, free text, any argument), private ids anywhere
    in what it wrote unless a search of this conversation returned them first, phrases of the
    private block that neither the brief nor a result shown before holds, more than one call in
    a reply, and submitted or read ids that no search returned. Text a search showed is public
    from then on, like the brief: quoting a result is no leak. The target is never a result, so
    for its title only the brief's words are public."""
    reading = _Reading.of_brief(private, brief, n, share)
    for turn, message in enumerate(messages):
        if message.get("role") == "tool":
            reading.shown(message)
        elif message.get("role") == "assistant":
            reading.reply(turn, message)
    return reading.findings


@dataclass
class _Reading:
    """What `check_messages` knows at one point of a conversation, and what it found so far."""

    private: PrivateText
    n: int
    share: float
    brief_terms: frozenset[str]
    public: set[str]  # words the agent may write without hindsight: the brief's and the results'
    public_ngrams: set
    written_private: set[str] = field(default_factory=set)  # terms written, less what was public then
    written_beyond_brief: set[str] = field(default_factory=set)  # the same, less the brief's terms alone
    surfaced: set[str] = field(default_factory=set)
    queries: list[str] = field(default_factory=list)
    reported: set[str] = field(default_factory=set)  # titles already found spelled out (each once)
    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def of_brief(cls, private: PrivateText, brief: str, n: int, share: float) -> _Reading:
        vocabulary = private.vocabulary
        brief_terms = frozenset(terms(brief))
        public_ngrams = ngrams(brief, n) | ngrams(brief, n, vocabulary)
        return cls(private, n, share, brief_terms, set(brief_terms), public_ngrams)

    def shown(self, message: dict) -> None:
        """A tool result: what the agent was shown (not the answer's JSON keys) is public from now on."""
        papers = papers_shown(message.get("content") or "")
        self.surfaced |= paper_ids(papers)
        shown = [s for paper in papers for s in strings_of(paper)]
        self.public |= terms(" ".join(shown))
        for text in shown:
            self.public_ngrams |= ngrams(text, self.n) | ngrams(text, self.n, self.private.vocabulary)

    def reply(self, turn: int, message: dict) -> None:
        calls = message.get("tool_calls") or []
        public_now = frozenset(self.public)
        if len(calls) > 1:
            self.findings.append(Finding("malformed", turn, "", f"{len(calls)} tool calls in one reply"))
        written = [message.get("content") or ""]
        for call in calls:
            written += self.call(turn, call, public_now)
        for text in written:
            self.text(turn, text, public_now)

    def call(self, turn: int, call: dict, public_now: frozenset[str]) -> list[str]:
        """Check one tool call's arguments; the strings it wrote."""
        function = call.get("function", {})
        name, arguments = function.get("name"), call_arguments(function.get("arguments"))
        if arguments is None:
            self.findings.append(
                Finding("malformed", turn, str(function.get("arguments")), "arguments are not a JSON object")
            )
            return []
        if name == "search_papers" and isinstance(arguments.get("query"), str):
            self.query(turn, arguments["query"], public_now)
        for paper in arguments.get("papers", []) if name == "submit_answer" else []:
            pid = paper.get("id") if isinstance(paper, dict) else None
            if normalize_arxiv_id(pid) not in self.surfaced:
                self.findings.append(Finding("unsurfaced", turn, str(pid), "submitted an id no search returned"))
        if name == "read_paper" and normalize_arxiv_id(arguments.get("id")) not in self.surfaced:
            self.findings.append(Finding("unsurfaced", turn, str(arguments.get("id")), "read an id no search returned"))
        return strings_of(arguments)

    def query(self, turn: int, query: str, public_now: frozenset[str]) -> None:
        """A search: an id in it, or a title its words and the earlier queries' spell out."""
        self.queries.append(query)
        if ids_in(query):
            self.findings.append(Finding("identifying_query", turn, query, "an arXiv id in a query"))
        unknown = self.private.lexicon.unknown_query_words(query, public_now) if self.private.lexicon else []
        if unknown:
            self.findings.append(
                Finding(
                    "unreadable", turn, query, f"query words outside the closed vocabulary: {', '.join(unknown[:6])}"
                )
            )
        for whose, title in self.private.titles:
            known = self.brief_terms if whose == TARGET else public_now
            why = (
                None
                if whose in self.reported
                else title_in_queries(title, self.queries, self.share, known, self.private.vocabulary)
            )
            if why:
                self.reported.add(whose)
                self.findings.append(Finding("identifying_query", turn, query, f"{whose}'s title: {why}"))

    def text(self, turn: int, text: str, public_now: frozenset[str]) -> None:
        """Any string the assistant wrote: private phrases, private ids, unreadable text, and
        titles that it and what the assistant wrote before spell out."""
        private, vocabulary = self.private, self.private.vocabulary
        shared = (ngrams(text, self.n, vocabulary, disguises=True) & private.ngrams) - self.public_ngrams
        if shared:
            self.findings.append(
                Finding("private_copy", turn, text, f"repeats {' '.join(min(shared))!r} of the private block")
            )
        leaked = private_id_in(text, private.ids - self.surfaced)
        if leaked:
            self.findings.append(
                Finding(
                    "identifying_query", turn, text, f"private id(s) {sorted(leaked)} before any search returned them"
                )
            )
        unreadable = private.lexicon.unreadable(text, public_now) if private.lexicon is not None else ""
        if unreadable:
            self.findings.append(Finding("unreadable", turn, text, unreadable))
        if not _LETTER.search(text) and (text.isascii() or not _LETTER.search(fold(text))):
            return  # no letter, even folded (circled letters are symbols until folded)
        held = terms(text, vocabulary, disguises=True)
        self.written_private |= held - public_now
        self.written_beyond_brief |= held - self.brief_terms
        self.titles_written(turn, text, held, public_now)

    def titles_written(self, turn: int, text: str, held: set[str], public_now: frozenset[str]) -> None:
        for whose, title in self.private.titles:
            if whose in self.reported:
                continue
            known, before = (
                (self.brief_terms, self.written_beyond_brief) if whose == TARGET else (public_now, self.written_private)
            )
            coverage, length = title_coverage(title, held, known)
            so_far, _ = title_coverage(title, before, known)
            if length >= 3 and max(coverage, so_far) >= self.share:
                self.reported.add(whose)
                where = "holds" if coverage >= self.share else "with what the assistant wrote before, holds"
                self.findings.append(
                    Finding("private_copy", turn, text, f"{where} {max(coverage, so_far):.0%} of {whose}'s title")
                )
