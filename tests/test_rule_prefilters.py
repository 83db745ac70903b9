"""Prefilters that make rules fast must never change what they find."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from nomos_forensics_rules import user_frustration as uf

from nomos_forensics.text.prefilter import AnyPattern, WordGates, any_token, letter_first, required_words
from nomos_forensics.text.prose import canonical
from nomos_forensics.text.prose import sentences as text_sentences

HERE = Path(__file__).parent


def _user_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((HERE / "cases").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            for message in case.get("messages", []):
                if isinstance(message, dict) and isinstance(message.get("user"), str):
                    texts.append(message["user"])
    return texts + _phrases("")


def _phrases(stem: str) -> list[str]:
    texts: list[str] = []
    for path in sorted((HERE / "phrases").glob(f"{stem}*.yaml")):
        for items in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).values():
            for item in items or []:
                texts += [x for x in (item if isinstance(item, list) else [item]) if isinstance(x, str)]
    return texts


def test_user_frustration_literal_prefilter_is_exact(monkeypatch):
    texts = _user_texts()
    assert len(texts) > 1000
    before = (uf.normalise("Do you want me to restart it?"), uf.normalise("I can't run that."), None)
    gated = [[uf.UserFrustration._correction(uf.normalise(t), a) for a in before] for t in texts]
    monkeypatch.setattr(uf, "_candidate_mask", lambda text: -1)  # every pattern is tried
    plain = [[uf.UserFrustration._correction(uf.normalise(t), a) for a in before] for t in texts]
    assert gated == plain
    assert sum(1 for g in gated if any(g)) > 100  # the corpus exercises the patterns


@pytest.mark.parametrize("pattern,text", [
    (r"\bwhy\s+did\s+you\b(?!\s+(?:think|say))", "why did you stop"),
    (r"(?:^|\bbut\s+)you\s+(?:didn't|never)\b", "you never listen"),
    (r"不是[,，]?\s*我(?:说|要|问)的?是", "不是我说的是这个"),
    (r"colou?r\s+check", "color check"),
    (r"(?:very\s+){0,2}bright", "bright"),
    (r"(?:very\s+){1,2}bright", "very bright"),
    (r"x(?=abc)|(?P<n>def)g", "xabc"),
    (r"[(|]ab(?:cd|\|e)", "|ab|e"),
])
def test_required_words_are_really_required(pattern, text):
    compiled = re.compile(pattern)
    words = required_words(compiled)
    assert compiled.search(text)
    assert words is None or any(w in text for w in words)


@pytest.mark.parametrize("pattern", [r"(?i)abc", r"(?i:abc)d", r"a\N{DIGIT ONE}b", r"(?x) a b c"])
def test_patterns_that_cannot_be_gated_are_always_tried(pattern):
    assert required_words(re.compile(pattern)) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcino '-.\n", max_size=40))
def test_word_gates_never_hide_a_match(text):
    patterns = [re.compile(p) for p in (
        r"\bno\s+(?:i|we)\s+(?:said|can)", r"(?:a|b)c?o+\b", r"ca(?:n't|nnot)", r"(?:in\s+){0,2}on", r"-bi\b",
    )]
    gates = WordGates()
    group = gates.add(patterns)
    tried = set(WordGates.candidates(group, gates.mask(text)))
    assert all(p in tried for p in patterns if p.search(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="abcinoé规 '-.\n", max_size=12), min_size=1, max_size=6))
def test_word_gate_masks_are_the_substring_tests(texts):
    """A letter run's bits come from an Aho-Corasick pass: the same bits as testing each required
    word in the run, the way the gates were first written (overlapping words, words inside words)."""
    patterns = [re.compile(p) for p in (r"\bno\s+(?:i|we)\s+(?:said|can)", r"(?:a|b)c?o+\b", r"ca(?:n't|nnot)",
                                        r"(?:in\s+){0,2}on", r"-bi\b", r"cannot", r"nn", r"规则")]
    gates = WordGates()
    gates.add(patterns)
    for text in texts:
        expected = gates.always
        for run in re.findall(r"[^\W\d_]{2,}", text):
            for word, bits in gates.bits.items():
                if word in run:
                    expected |= bits
        assert gates.mask(text) == expected


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["`", "``", "```", "~~~", "~", "<think>", "<thinking>", "</think>", "</thinking>",
                                 "<think", "</think", "<thinkingx>", "\n", "a", " ", "x>", "ing>"]), max_size=14))
def test_without_blocks_is_the_block_pattern(parts):
    """The blocks are found with str.find: the same text as the pattern's substitution, unclosed
    blocks, a final newline (where `$` also matches) and nested openings included."""
    from nomos_forensics.text.prose import _CODE_BLOCK, without_blocks

    text = "".join(parts)
    assert without_blocks(text) == _CODE_BLOCK.sub(" ", text)


def test_straight_quotes_is_the_translation():
    from nomos_forensics.text.prose import _QUOTES, straight_quotes

    for text in ("", "plain", "can’t “x” `y` ‘z’ ´", "规则’s", "’’``", "no quotes — at all"):
        assert straight_quotes(text) == text.translate(_QUOTES)


def test_gated_alternation_is_exact():
    """AnyPattern over the classes cant-run does not flag (alternatives with macros) says what the pattern says."""
    texts = _user_texts() + _phrases("no-web-tool") + _phrases("cant-run")
    sentences = [canonical(s) for t in texts for s in text_sentences(t)]
    assert len(sentences) > 1000
    from nomos_forensics.text import claims

    gated = AnyPattern(claims._NOT)
    found = [bool(claims._NOT.search(s)) for s in sentences]
    assert [gated.matches(s) for s in sentences] == found
    assert sum(found) >= 4
    # the other languages' claims, as claim_in tests them
    found = [bool(claims._OTHER_LANGUAGES.search(s)) for s in sentences]
    assert [claims._other_languages().matches(s) for s in sentences] == found
    assert sum(found) >= 4


# word-boundary cues of a dozen languages, the shape letter_first rewrites
OTHER_CUE = (
    r"\bno (?:p|t|s|e|m|d)|\bn[ãa]o\b|\bje\b|\bnon\b|\bich\b|\bhabe\b|\bkann\b|\bdarf\b|\bik\b|\bkan\b|\bnie\b|"
    r"\bimpossible pour|\bne\b|\bnicht\b|\bkein|\bgeen\b|\bniet\b|\btidak\b|\btak\b"
)
_OTHER_CUE = letter_first(OTHER_CUE)
CUE_WORDS = frozenset("no not none nothing never unable lack beyond outside cannot cant dont auto-deny".split())
_CUE_TOKEN = any_token(CUE_WORDS)


def test_letter_first_cues_find_the_same_texts():
    original = re.compile(OTHER_CUE)
    texts = [t.lower() for t in _user_texts() + _phrases("")]
    texts += ["nicht", "xnicht", "_je", "je_", "-je", "no p", "no pa", "kein-x", "1ich", "ñich", "não", "nao"]
    assert sum(1 for t in texts if original.search(t)) > 20
    for text in texts:
        assert bool(_OTHER_CUE.search(text)) == bool(original.search(text)), text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="nojeichabkdrfgtpsmãi _-'.1", max_size=30))
def test_letter_first_is_a_word_boundary(text):
    assert bool(_OTHER_CUE.search(text)) == bool(re.search(OTHER_CUE, text)), text


def test_letter_first_refuses_other_shapes():
    with pytest.raises(ValueError):
        letter_first(r"\bno|yes")


_TOKEN_TEXT = st.lists(st.sampled_from(list("nota'-cdy ,.\n") + ["no", "not", "can't", "don't", "cant", "never"]),
                       max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TOKEN_TEXT.map(lambda t: t.lower()))
def test_any_token_is_the_token_set_test(text):
    """`any_token(words).search` says what the token-set test it replaces says, on every text."""
    tokens = re.findall(r"[a-z'-]+", text)
    assert (_CUE_TOKEN.search(text) is not None) == (not CUE_WORDS.isdisjoint(tokens)), text


def test_any_token_examples():
    found = any_token(["no", "not", "can't"])
    assert found.search("there is no way") and found.search("i can't.") and found.search("no")
    assert not found.search("no-op notes cannot") and not found.search("snot nothing")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["pol", "icy", "polic", "rule", "s", "é", "规则", " ", "x"]), max_size=20).map("".join),
       st.lists(st.sampled_from(["polic", "rule", "règle", "规则", "icy", "xx"]), max_size=4))
def test_any_substring_is_any_in(text, words):
    from nomos_forensics.text.prefilter import AnySubstring

    assert AnySubstring(words).search(text) == any(w in text for w in words)


def _all_rule_patterns_loaded() -> None:
    from nomos_forensics import plugins

    plugins.load(())  # every built-in rule module, so every literal_first call has run


def _literal_first_texts() -> list[str]:
    texts = _user_texts() + _phrases("")
    return texts + [t.lower() for t in texts] + [canonical(t) for t in texts]


def test_every_literal_first_rewrite_finds_the_same_matches():
    """Each pattern the rules rewrote finds what its source finds, at the same spans, on the
    cases' and phrase lists' texts (as written, lower-cased and canonical)."""
    from nomos_forensics.text.prefilter import rewrites

    _all_rule_patterns_loaded()
    texts = _literal_first_texts()
    assert len(texts) > 3000
    rewritten = rewrites()
    assert len(rewritten) > 100  # the phrase tables of user-frustration, cant-run, policy-refusal, endings …
    matched = 0
    for source, flags, fast in rewritten:
        original = re.compile(source, flags)
        assert fast.pattern != source and fast.flags == original.flags and fast.groups == original.groups == 0
        for text in texts:
            spans = [m.span() for m in original.finditer(text)]
            assert [m.span() for m in fast.finditer(text)] == spans, (source[:80], text[:80])
            matched += bool(spans)
    assert matched > 1000  # the texts exercise the patterns


_PIECE = st.sampled_from([
    r"\b", r"\b", r"(?<![a-z])", r"(?<=\s)", r"(?<!n)", "no", "t", "é", "-", r"\s+", r"\.", " ", "o?", r"\b(?:no|not)",
    r"(?:on|é)", r"(?:n\s)?", r"(?:t|)", r"(?<![\w'-])(?:i|we)", r"(?:x|\bo)", r"n(?!o)", "(?=t)",
])
_SOURCE = st.lists(st.lists(_PIECE, min_size=1, max_size=4).map("".join), min_size=1, max_size=3).map("|".join)


@settings(max_examples=600, deadline=None)
@given(_SOURCE, st.lists(st.text(alphabet="notaéiwe -x.\n'", max_size=24), min_size=1, max_size=8))
def test_literal_first_keeps_every_match(source, texts):
    """On patterns made of the shapes it rewrites (and some it must leave alone), every match
    of the rewritten pattern is a match of the source at the same span, and none is lost."""
    from nomos_forensics.text.prefilter import literal_first

    original = re.compile(source)
    fast = literal_first(source)
    for text in texts:
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in original.finditer(text)], (source, text)
        assert bool(fast.match(text)) == bool(original.match(text))


@pytest.mark.parametrize("source,expected", [
    (r"\bno\b", r"n(?<!\wn)o\b"),
    (r"(?<![a-z])(?:no|not)(?![a-z])", r"n(?<!(?:[a-z])n)o(?![a-z])|n(?<!(?:[a-z])n)ot(?![a-z])"),
    (r"\b(?:sí\s+)?puedes\b|\bdu\s+x", r"s(?<!\ws)í\s+puedes\b|p(?<!\wp)uedes\b|d(?<!\wd)u\s+x"),
    (r"\b\.x", r"\.(?<=\w\.)x"),
])
def test_literal_first_examples(source, expected):
    from nomos_forensics.text.prefilter import literal_first

    assert literal_first(source).pattern == expected


@pytest.mark.parametrize("source,flags", [
    (r"^no|\bnot", 0),  # a branch anchored at the start
    (r"[ab]c|\bd", 0),  # a class first
    (r"(no)\b", 0),  # a capturing group: the rewrite would renumber groups
    (r"\b(?P<w>no)", 0),
    (r"\bno", re.IGNORECASE),  # the engine does not skip by cased letters
    (r"\b(?:a|b)+c", 0),  # a repeated group
    (r"\b(?:a|)", 0),  # a branch that may match nothing
    (r"x?y", 0),
])
def test_literal_first_leaves_other_shapes_as_written(source, flags):
    from nomos_forensics.text.prefilter import literal_first

    assert literal_first(source, flags).pattern == source
    compiled = re.compile(source, flags)
    assert literal_first(compiled) is compiled


def test_literal_first_keeps_the_gates_as_selective():
    """Word gates read a rewritten pattern's source: spread over its branches, with lookbehinds
    between its letters, the rewrite itself would give more and shorter words (user-frustration's
    German "… noch nicht" gate would grow from "nicht" to four words)."""
    from nomos_forensics.text.prefilter import literal_first

    for source in (r"\bdu\s+(?:kannst|hast)\b|\btu\s+(?:peux|as)\b", r"(?<![a-z'-])(?:nothing|never)(?![a-z])",
                   r"\b(?:i|we)\s+can't\s+run", r"\b(?:funktioniert|klappt|läuft)\s+(?:immer\s+)?noch\s+nicht\b",
                   r"\bas\s+i\s+(?:said|told\s+you)|\blike\s+i\s+said"):
        fast = literal_first(source)
        assert fast.pattern != source
        assert required_words(fast) == required_words(re.compile(source))


def test_claim_reading_gate_loses_nothing():
    """A reply the claim reading's gate turns away (no cue word of text.refusal's gate, none of a
    terminal, sudo or auto-deny claim's words) holds no claim (replies of the cases and phrases)."""
    from nomos_forensics.text import claims, refusal

    texts = _user_texts() + _phrases("")
    for path in sorted((HERE / "cases").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            for message in case.get("messages", []):
                reply = message.get("assistant") if isinstance(message, dict) else None
                texts.append(reply if isinstance(reply, str) else (reply or {}).get("text") or "")
    claimed = 0
    for text in texts:
        if claims.first_claim(text) is not None:
            claimed += 1
            assert refusal.holds_cue(text) or claims.may_claim(text), text
    assert claimed >= 200


def _shipped_lazy_patterns() -> list:
    """The lazy patterns the package's and the built-in rules' modules hold, at module level or
    in their tables (lists, tuples, dicts; not gc.get_objects(): scan freezes the heap)."""
    import sys

    from nomos_forensics.text.prefilter import LazyPattern

    _all_rule_patterns_loaded()
    found: dict[int, LazyPattern] = {}

    def walk(value, depth: int = 0) -> None:
        if isinstance(value, LazyPattern):
            found[id(value)] = value
        elif depth < 3 and isinstance(value, (list, tuple, dict)):
            for item in (value.items() if isinstance(value, dict) else value):
                walk(item, depth + 1)

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("nomos_forensics", "nomos_forensics_rules"):
            for value in list(vars(module).values()):
                walk(value)
    return list(found.values())


def test_every_shipped_lazy_pattern_compiles_with_the_flags_it_announced():
    """Patterns compiled on first use still fail here, not mid-scan: each one the package and
    the built-in rules hold compiles, and the flags it gave the word gates before compiling
    are the compiled pattern's."""
    lazy = _shipped_lazy_patterns()
    assert len(lazy) > 200  # user-frustration's tables, the endings, the claim tables …
    for pattern in lazy:
        announced = pattern.flags
        assert pattern.compiled.flags == announced, pattern


@pytest.mark.parametrize("source,flags", [
    ("abc", 0), ("abc", re.M), ("(?i)abc", 0), ("(?im)a", re.S), ("(?s)(?m)x", 0), ("(?a)x", 0), ("(?x) a b", 0),
])
def test_lazy_pattern_flags_before_compiling(source, flags):
    from nomos_forensics.text.prefilter import LazyPattern

    pattern = LazyPattern(source, flags)
    assert pattern.flags == re.compile(source, flags).flags
    assert "compiled" not in vars(pattern)  # reading flags and source compiles nothing
    assert pattern.pattern == source


def test_lazy_pattern_compiles_once_and_then_is_the_compiled_pattern():
    from nomos_forensics.text.prefilter import LazyPattern

    pattern = LazyPattern(r"\bno\b")
    assert "compiled" not in vars(pattern)
    assert pattern.search("say no more").span() == (4, 6)
    compiled = pattern.compiled
    assert compiled is pattern.compiled and vars(pattern)["search"] == compiled.search  # no __getattr__ from now on
    assert [m.span() for m in pattern.finditer("no, no")] == [(0, 2), (4, 6)]
    assert pattern.sub("yes", "no") == "yes" and pattern.groups == 0


def test_lazy_pattern_falls_back_and_reports_bad_sources_on_use():
    from nomos_forensics.text.prefilter import LazyPattern

    fallback = LazyPattern(r"(?<=a+)b", fallback=r"ab")  # the first does not compile (variable lookbehind)
    assert fallback.search("xab").span() == (1, 3)
    broken = LazyPattern(r"(unclosed")
    with pytest.raises(re.error):
        broken.search("x")


def test_literal_first_of_a_source_is_lazy_and_finds_the_same():
    from nomos_forensics.text.prefilter import LazyPattern, literal_first

    fast = literal_first(r"\b(?:no|not)\b")
    assert isinstance(fast, LazyPattern) and "compiled" not in vars(fast)
    assert required_words(fast) == ("no", "not")  # the gates read it before it is compiled
    assert "compiled" not in vars(fast)
    assert [m.span() for m in fast.finditer("not now, no")] == [(0, 3), (9, 11)]


def test_the_missing_gate_of_acting_claims_is_exact():
    """cant-run's acting claims test a statement's named gap before the claim reading; the words
    that gate that test are the ones every match needs, so the gate hides no match."""
    from nomos_forensics.text import claims
    from nomos_forensics.text.prose import statements

    assert claims._MISSING_GATE  # the pattern's words can be told: the gate is in use
    plains = [plain for text in _literal_first_texts() for _, plain in statements(text)]
    assert len(plains) > 3000
    found = [claims._MISSING.search(p) is not None for p in plains]
    assert [claims._names_missing(p) for p in plains] == found
    assert sum(found) > 20  # the texts exercise the pattern


_OPENER_WORDS = ("would you like do it there i we can could are is shall should o a senhor senhora você gostaria "
                 "deseja quer pode usted quiere le gustaría möchten haben sie voulez-vous avez-vous ok the file . ! ? "
                 "\n , ").split(" ")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_OPENER_WORDS), max_size=40), st.sampled_from(["", " ", "\n", ".", "!"]))
def test_the_last_question_opener_is_the_patterns_own_search(words, end):
    """`_opens_last_question` reads from the last sentence end on: it must say what the whole
    pattern's search says, newlines inside an opener ("möchten \\n sie") included."""
    tail = (" ".join(words) + end).rstrip()
    assert uf._opens_last_question(tail) == bool(uf._QUESTION_OPENER.search(tail)), tail
