"""The boundary's second round: disguises by class of character and of encoding, a title spread
over several rationales, and the legitimate quoting of what a search showed.

Each generator draws from a whole class (any mark of categories Mn/Me/Cf, any decimal digit
system, any look-alike capital, any digit-for-letter substitution, percent- and HTML-encoding,
letter forms of other blocks, letters spread by any separator, markup, repeated letters, signs
for letters, reversed words, any Caesar shift, base64/hex/escapes, words run together; ids as
number words, reversed, circled, encoded or spread), not from a list of examples: the validator's check and the leak audit must flag every case, and
must never flag a quote or repeat of a title or id a search of the episode had returned.
"""

import base64
import html
import unicodedata
from functools import cache
from urllib.parse import quote

from hypothesis import assume, given
from hypothesis import strategies as st

from hindsight.distill.audit import audit_row
from hindsight.leaks import check_messages, content_words, spelled, terms
from tests.leak_helpers import (
    SETTINGS,
    SHARE,
    N,
    a_title,
    characters_of,
    conversation,
    digits_for_letters,
    flagged,
    instances,
    marked,
    private_for,
)


@cache
def digit_systems() -> tuple[tuple[str, ...], ...]:
    """Every run of ten decimal digits 0-9 Unicode has (Arabic-Indic, Devanagari, Thai, ...)."""
    zeros = [ch for ch in characters_of("Nd") if unicodedata.decimal(ch) == 0]
    return tuple(
        tuple(chr(ord(z) + i) for i in range(10))
        for z in zeros
        if all(unicodedata.decimal(chr(ord(z) + i), -1) == i for i in range(10))
    )


# Latin capitals and the capitals of other scripts that are drawn the same
CAPITALS = {
    "A": "ΑА",
    "B": "ΒВ",
    "E": "ΕЕ",
    "H": "ΗН",
    "I": "ΙІӀ",
    "K": "ΚК",
    "M": "ΜМ",
    "N": "Ν",
    "O": "ΟО",
    "P": "ΡР",
    "T": "ΤТ",
    "X": "ΧХ",
    "Y": "ΥҮ",
    "Z": "Ζ",
    "C": "С",
    "S": "Ѕ",
    "J": "Ј",
}


@st.composite
def capitalised_lookalikes(draw, text: str) -> str:
    out = []
    for ch in text.upper():
        out.append(draw(st.sampled_from(CAPITALS[ch])) if ch in CAPITALS and draw(st.booleans()) else ch)
    return "".join(out)


@st.composite
def encoded(draw, text: str) -> str:
    how = draw(st.sampled_from(["url", "url-plus", "entities", "markdown"]))
    if how == "url":
        return f"https://example.org/search?q={quote(text)}"
    if how == "url-plus":
        return f"see https://example.org/{quote(text.replace(' ', '-'), safe='')}"
    if how == "entities":
        return "".join(f"&#{ord(ch)};" if ch.isalpha() and draw(st.booleans()) else html.escape(ch) for ch in text)
    return f"[{text}](https://example.org/{quote(text)})"


# Unicode names of letter forms that compatibility normalisation leaves as they are
LETTER_FORMS = (
    "LATIN LETTER SMALL CAPITAL {}",
    "REGIONAL INDICATOR SYMBOL LETTER {}",
    "NEGATIVE SQUARED LATIN CAPITAL LETTER {}",
    "NEGATIVE CIRCLED LATIN CAPITAL LETTER {}",
    "SQUARED LATIN CAPITAL LETTER {}",
    "CIRCLED LATIN SMALL LETTER {}",
    "PARENTHESIZED LATIN SMALL LETTER {}",
    "MATHEMATICAL BOLD SMALL {}",
    "FULLWIDTH LATIN SMALL LETTER {}",
)


@cache
def letter_forms(letter: str) -> tuple[str, ...]:
    forms = []
    for pattern in LETTER_FORMS:
        try:
            forms.append(unicodedata.lookup(pattern.format(letter.upper())))
        except KeyError:
            pass
    return tuple(forms)


@st.composite
def other_letter_forms(draw, text: str) -> str:
    return "".join(
        draw(st.sampled_from(letter_forms(ch)))
        if ch.isascii() and ch.isalpha() and letter_forms(ch) and draw(st.booleans())
        else ch
        for ch in text
    )


SEPARATORS = st.text(alphabet=" .-_*·/|:~'", min_size=1, max_size=3)


@st.composite
def spread_letters(draw, text: str) -> str:
    """Each word's letters apart, by any separator; between words one or several spaces."""
    separator = draw(SEPARATORS)
    return draw(st.sampled_from([" ", "  ", " / "])).join(separator.join(word) for word in text.split())


@st.composite
def markup_around_letters(draw, text: str) -> str:
    tag = draw(st.sampled_from(["b", "i", "span", "em", "sub"]))
    return "".join(f"<{tag}>{ch}</{tag}>" if ch.isalpha() and draw(st.booleans()) else ch for ch in text)


@st.composite
def repeated_letters(draw, text: str) -> str:
    times = draw(st.integers(2, 3))
    return " ".join("".join(ch * times for ch in word) for word in text.split())


SIGNS = {"a": "@", "s": "$", "l": "|", "i": "!", "e": "€", "t": "+"}


@st.composite
def signs_for_letters(draw, text: str) -> str:
    return "".join(SIGNS[ch] if ch in SIGNS and draw(st.booleans()) else ch for ch in text.lower())


@st.composite
def reversed_words(draw, text: str) -> str:
    words = [word[::-1] for word in text.split()]
    return " ".join(words[::-1] if draw(st.booleans()) else words)


@st.composite
def shifted_letters(draw, text: str) -> str:
    """A Caesar shift: every letter moved k places along the alphabet."""
    k = draw(st.integers(1, 25))
    lower = "abcdefghijklmnopqrstuvwxyz"
    return text.lower().translate(str.maketrans(lower, lower[k:] + lower[:k]))


@st.composite
def machine_encoded(draw, text: str) -> str:
    how = draw(st.sampled_from(["base64", "urlsafe", "hex", "unicode escapes", "byte escapes"]))
    if how == "base64":
        return "ref " + base64.b64encode(text.encode()).decode()
    if how == "urlsafe":
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
    if how == "hex":
        return text.encode().hex()
    if how == "unicode escapes":
        return "".join(f"\\u{ord(ch):04x}" if draw(st.booleans()) else ch for ch in text)
    return "".join(f"\\x{ord(ch):02x}" if ch.isascii() and draw(st.booleans()) else ch for ch in text)


@st.composite
def run_together(draw, text: str) -> str:
    return "".join(word.capitalize() if draw(st.booleans()) else word.lower() for word in text.split())


CLASSES = {
    "marks": marked,
    "capitals": capitalised_lookalikes,
    "digits for letters": digits_for_letters,
    "encodings": encoded,
    "other letter forms": other_letter_forms,
    "spread letters": spread_letters,
    "markup around letters": markup_around_letters,
    "repeated letters": repeated_letters,
    "signs for letters": signs_for_letters,
    "reversed words": reversed_words,
    "shifted letters": shifted_letters,
    "machine encodings": machine_encoded,
    "run together": run_together,
}


@SETTINGS
@given(st.data(), st.sampled_from(sorted(CLASSES)), st.sampled_from(["query", "rationale"]))
def test_a_title_disguised_by_any_class_is_flagged_by_both(data, kind, where):
    instance, title = a_title(data.draw)
    text = data.draw(CLASSES[kind](title))
    messages = (
        conversation(instance, [text]) if where == "query" else conversation(instance, ["keyword"], rationale=text)
    )
    flags, audit = flagged(instance, messages)
    assert flags & {"identifying_query", "private_copy"} and audit, (kind, where, text)


@SETTINGS
@given(st.data())
def test_a_private_id_in_any_digit_system_or_with_letters_for_digits_is_flagged_by_both(data):
    instance = data.draw(st.sampled_from(instances()))
    pid = data.draw(st.sampled_from([lab.id for lab in instance.labels if "." in lab.id] or [None]))
    assume(pid)
    if data.draw(st.booleans()):
        system = data.draw(st.sampled_from(digit_systems()))
        text = "".join(system[int(ch)] if ch.isdigit() else ch for ch in pid)
    else:
        text = "".join(
            {"0": "O", "1": data.draw(st.sampled_from("lI"))}.get(ch, ch) if data.draw(st.booleans()) else ch
            for ch in pid
        )
    text = data.draw(st.sampled_from([text, f"arXiv:{text}", f"see {text}v2"]))
    flags, audit = flagged(instance, conversation(instance, ["keyword"], rationale=text))
    assert "identifying_query" in flags and audit, text


NUMBER_WORDS = "zero one two three four five six seven eight nine".split()
CIRCLED_DIGITS = "⓪①②③④⑤⑥⑦⑧⑨"


TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()


@st.composite
def spoken(draw, digits: str) -> str:
    """Digits said as people say numbers: in ones and pairs, 0 as "oh", pairs as "twenty-one",
    "twelve", "oh six" or "double oh"."""
    said, i = [], 0
    while i < len(digits):
        pair = digits[i : i + 2] if i + 1 < len(digits) and draw(st.booleans()) else digits[i]
        i += len(pair)
        if len(pair) == 1:
            said.append("oh" if pair == "0" and draw(st.booleans()) else NUMBER_WORDS[int(pair)])
        elif pair[0] == pair[1] and draw(st.booleans()):
            said.append("double " + ("oh" if pair == "00" else NUMBER_WORDS[int(pair[0])]))
        elif pair[0] == "0":
            said.append("oh " + NUMBER_WORDS[int(pair[1])])
        elif pair[0] == "1":
            said.append(TEENS[int(pair[1])])
        else:
            unit = "" if pair[1] == "0" else draw(st.sampled_from(["-", " "])) + NUMBER_WORDS[int(pair[1])]
            said.append(TENS[int(pair[0])] + unit)
    return " ".join(said)


@SETTINGS
@given(st.data(), st.sampled_from(["words", "spoken", "reversed", "circled", "base64", "spaced"]))
def test_a_private_id_written_as_words_reversed_or_encoded_is_flagged_by_both(data, how):
    instance = data.draw(st.sampled_from(instances()))
    pid = data.draw(st.sampled_from([lab.id for lab in instance.labels if "." in lab.id] or [None]))
    assume(pid)
    if how == "words":
        point = data.draw(st.sampled_from(["point", "dot"]))
        text = " ".join(NUMBER_WORDS[int(ch)] if ch.isdigit() else point for ch in pid)
    elif how == "spoken":
        text = f" {data.draw(st.sampled_from(['point', 'dot']))} ".join(
            data.draw(spoken(part)) for part in pid.split(".")
        )
    elif how == "reversed":
        text = pid[::-1]
    elif how == "circled":
        text = "".join(CIRCLED_DIGITS[int(ch)] if ch.isdigit() else ch for ch in pid)
    elif how == "base64":
        text = base64.b64encode(f"arXiv {pid}".encode()).decode()
    else:
        text = data.draw(SEPARATORS).join(pid)
    flags, audit = flagged(instance, conversation(instance, ["keyword"], rationale=f"see {text}"))
    assert "identifying_query" in flags and audit, text


@SETTINGS
@given(st.data())
def test_a_title_spread_over_several_rationales_is_flagged_by_both(data):
    instance, title = a_title(data.draw)
    words = title.split()
    assume(len(content_words(title)) >= 4)
    middle = data.draw(st.integers(1, len(words) - 1))
    # each piece alone holds less than the share of the title's words beyond the brief
    pieces = [" ".join(words[:middle]), " ".join(words[middle:])]
    brief = terms(instance.brief)
    stems = [spelled(w) for w in content_words(title)]
    for piece in pieces:
        alone = [spelled(w) for w in content_words(piece) if spelled(w) not in brief]
        assume(len(alone) < SHARE * len(stems))
    messages = conversation(instance, ["keyword"], submit=())
    # two submitted papers, each with one piece as its rationale
    submission = messages[-2]["tool_calls"][0]["function"]["arguments"]
    submission["papers"] = [{"id": "2001.00001", "rationale": pieces[0]}, {"id": "2001.00002", "rationale": pieces[1]}]
    flags, audit = flagged(instance, messages)
    assert "private_copy" in flags and audit, pieces


@SETTINGS
@given(st.data())
def test_quoting_and_repeating_titles_and_ids_a_search_returned_is_never_flagged(data):
    instance = data.draw(st.sampled_from(instances()))
    label = data.draw(st.sampled_from(instance.labels))
    returned = [{"id": lab.id, "title": lab.title} for lab in instance.labels]
    prefix = data.draw(st.sampled_from(["", "arXiv:", "https://arxiv.org/abs/"]))
    suffix = data.draw(st.sampled_from(["", "v1", "v3"]))
    quote_ = data.draw(
        st.sampled_from(
            [
                f'"{label.title}"',
                f"{label.title} ({prefix}{label.id}{suffix})",
                f"builds on {prefix}{label.id}{suffix}: {label.title}",
            ]
        )
    )
    repeat = data.draw(st.booleans())
    queries = ["keyword search", label.title] if repeat else ["keyword search"]
    submit = (label.id + suffix,)
    messages = conversation(instance, queries, papers=returned, rationale=quote_, submit=submit)
    private = private_for(instance)
    findings = [
        f
        for f in check_messages(messages, private, instance.brief, N, SHARE)
        if not (f.flag == "identifying_query" and "an arXiv id in a query" in f.reason)
    ]
    assert findings == [], (quote_, queries, [str(f) for f in findings])
    assert (
        audit_row({"messages": messages, "tools": []}, {instance.brief: instance}, {instance.id: private}, N, SHARE)
        == []
    )


@SETTINGS
@given(st.data(), st.sampled_from(["query", "rationale"]))
def test_the_target_title_after_a_search_showed_some_of_its_words_is_flagged_by_both(data, where):
    """The target is never a search result, so its words that a result happened to show are not
    public: a result holding part of the target's title (a paper that shares its words) does not
    license writing the whole of it."""
    instance = data.draw(st.sampled_from(instances()))
    title = instance.target.title
    brief = terms(instance.brief)
    beyond = [w for w in content_words(title) if spelled(w) not in brief]
    assume(len(content_words(title)) >= 3 and len(beyond) >= SHARE * len(content_words(title)))
    shown = data.draw(st.lists(st.sampled_from(beyond), min_size=1, max_size=len(beyond), unique=True))
    returned = [{"id": "2001.00001", "title": "A study of " + " and ".join(shown)}]
    text = data.draw(st.sampled_from([title, data.draw(digits_for_letters(title)), data.draw(marked(title))]))
    messages = (
        conversation(instance, ["keyword search", text], papers=returned)
        if where == "query"
        else conversation(instance, ["keyword search"], papers=returned, rationale=text, submit=("2001.00001",))
    )
    flags, audit = flagged(instance, messages)
    assert flags & {"identifying_query", "private_copy"} and audit, (where, shown, text)
