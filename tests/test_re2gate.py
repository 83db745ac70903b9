"""text.re2gate: RE2 rules texts out, Python's re decides; the result is always Python's."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nomos_forensics.text.re2gate import Re2Gated, relaxed

from .test_rule_prefilters import _all_rule_patterns_loaded, _literal_first_texts


def _same(gated: Re2Gated, pattern: re.Pattern, text: str) -> bool:
    found, expected = gated.search(text), pattern.search(text)
    return (found and found.span()) == (expected and expected.span())


def test_every_rule_pattern_gated_by_re2_finds_what_python_finds():
    """Each pattern the rules rewrote with literal_first (the big alternations: phrase tables,
    claims, endings), gated by RE2, finds the same first match as Python on the cases' and
    phrase lists' texts, alone and run together into long texts (where the gate pays)."""
    from nomos_forensics.text.prefilter import rewrites

    _all_rule_patterns_loaded()
    texts = [t for t in _literal_first_texts() if t.isascii()]
    texts += [" ".join(texts[i:i + 7]) for i in range(0, len(texts), 7)]
    gated_count = matched = 0
    for _source, _flags, fast in rewrites():
        gated = Re2Gated(fast, min_chars=0)
        for text in texts:
            assert _same(gated, fast, text), (fast.pattern[:80], text[:80])
            matched += gated.search(text) is not None
        gated_count += gated._gate is not False
    assert gated_count > 100  # RE2 compiled the relaxed form of most of them
    assert matched > 1000


def test_the_wired_patterns_are_exact():
    """The patterns wired to the gate (the ending's caveats, the plain declines of every
    language, the contractions) search as Python alone does."""
    from nomos_forensics import ending
    from nomos_forensics.text import prose

    texts = [canonical_text for canonical_text in (prose.canonical(t) for t in _literal_first_texts())]
    texts += [" ".join(texts[i:i + 9]) for i in range(0, len(texts), 9)]
    texts += ["i haven't actually fixed the bug", "50 tests (43 passing)", "50 tests (50 passing)",
              "3 tests failed before the change", "the tests still have some issues\n"]
    from nomos_forensics.text import refusal

    declines = refusal._declines()
    for text in texts:
        assert _same(ending.CAVEAT, ending.CAVEAT.python, text), text[:80]
        assert _same(declines, declines.python, text), text[:80]
        lowered = text.lower()
        assert prose.canonical(text) == prose._CONTRACTION.sub(lambda m: prose.CONTRACTIONS[m.group()], lowered)
    assert declines._gate not in (None, False)  # RE2 read the relaxed alternation of every language


@pytest.mark.parametrize("source, flags, expected", [
    (r"\bno(?!t)\b", 0, r"\bno\b"),
    (r"(?<![\w'])i\s+can't", 0, r"i[\t\n\x0b\x0c\r\x1c-\x1f ]+can't"),
    (r"[\s,]+done", 0, r"[\t\n\x0b\x0c\r\x1c-\x1f ,]+done"),
    (r"[]\s]x[^]$]", 0, r"[]\t\n\x0b\x0c\r\x1c-\x1f ]x[^]$]"),  # a leading ] is a member of its class
    (r"(?P<n>\d+) of (?!(?P=n)\b)\d+", 0, r"(?P<n>\d+) of \d+"),  # the back reference goes with its lookahead
    (r"^done$", re.MULTILINE, r"(?m)^done$"),
    (r"done", re.IGNORECASE, r"(?i)done"),
])
def test_relaxed_examples(source, flags, expected):
    assert relaxed(source, flags) == expected


@pytest.mark.parametrize("source, flags", [
    (r"(\w+) \1", 0),  # a back reference that stays
    (r"done$", 0),  # Python's $ also matches before a final newline
    (r"done\Z", 0),
    (r"(?=a)*b", 0),  # a quantified lookaround
    (r"a b", re.VERBOSE),
    ("bilmiyorum|ıi", re.IGNORECASE),  # Python matches "ı" to "i" when case is ignored, RE2 does not
    ("(?i:kısa)", 0),
    (r"a{,3}b", 0),  # Python's "at most three", RE2's literal "{,3}"
])
def test_patterns_that_cannot_be_relaxed_are_searched_by_python(source, flags):
    assert relaxed(source, flags) is None
    gated = Re2Gated(re.compile(source, flags), min_chars=0)
    for text in ("done", "done\n", "a a b", "ab", "", "ii", "KISA", "aab"):
        assert _same(gated, re.compile(source, flags), text)


_PIECE = st.sampled_from([
    r"\b", r"(?<![a-z])", r"(?<=\s)", r"(?!o)", r"(?=t)", "no", "t", r"\s+", r"\s*", r"[\s,]", r"\S", r"\w+", r"\d",
    r"\W", ".", " ", "o?", r"(?:no|not)", r"(?:t|)", "^", "$", r"[^a-z]", r"\.", "-", "{,2}", "{2}", "{1,}",
])
_SOURCE = st.lists(st.lists(_PIECE, min_size=1, max_size=5).map("".join), min_size=1, max_size=3).map("|".join)


@settings(max_examples=500, deadline=None)
@given(_SOURCE, st.sampled_from([0, re.MULTILINE, re.IGNORECASE, re.DOTALL]),
       st.lists(st.text(alphabet="notNOT 1\n\t\x0b\x1c,.-", max_size=30), min_size=1, max_size=6))
def test_re2_gate_never_changes_a_search(source, flags, texts):
    """On patterns made of the shapes RE2 reads differently (lookarounds, \\s and Python's wider
    ASCII whitespace, $, case, dot), and ASCII texts with those characters, the gated search
    is Python's."""
    try:
        pattern = re.compile(source, flags)
    except re.error:
        return
    gated = Re2Gated(pattern, min_chars=0)
    for text in texts:
        assert _same(gated, pattern, text), (source, flags, text)


def test_short_and_non_ascii_texts_go_to_python_alone():
    gated = Re2Gated(re.compile(r"\bdone\b"))
    assert gated.search("done").span() == (0, 4) and gated._gate is None  # short: RE2 not even compiled
    long_text = "é " * 40 + "done"
    assert gated.search(long_text).span() == re.search(r"\bdone\b", long_text).span()


def test_a_source_re2_refuses_says_nothing_on_stderr(capfd):
    gated = Re2Gated(re.compile(r"[\u3040-\u30ff]x"), min_chars=0)
    assert gated.search("x" * 100) is None and gated._gate is False
    assert capfd.readouterr().err == ""
