"""Language identification, stages 1 and 2 (see nomos_forensics.text.language): prose measured in word
units per Unicode script, and votes from the word lists in lexicons/langid.toml. No model."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain

from . import lexicon
from .prose import without_blocks, without_code, without_snippets

# Languages Lingua chooses among for Latin-script text (ISO 639-1).
LINGUA_LANGUAGES = (
    "en es fr de pt it nl pl tr vi id ms sv da nb fi cs sk ro hu hr ca sl lt lv et tl sw af sq eu ga is"
).split()

MIN_LETTERS = 20  # kept for callers; replies are measured in word units (MIN_UNITS)
MIN_CONFIDENCE = 0.6
MIN_UNITS = 3.0  # word units of prose needed to call the language of a reply
LINGUA_MIN_LETTERS = 24
ANALYSE_CHARS = 1500

# A token (a run of non-space characters) with a digit, `_`, a path or URL character, an
# operator, or a dot or colon inside: paths, URLs, versions, commands, key=value, e-mails.
_TECH_TOKEN = re.compile(r"(?<!\S)(?=\S*?(?:[\d_@=<>{}\[\]\\|$#*/~^]|[.:]\w))\S+")
_QUOTED = re.compile(r'"[^"\n]{1,300}"|“[^”\n]{1,300}”|„[^“”\n]{1,300}[“”]|«[^»\n]{1,300}»|「[^」\n]{1,300}」|『[^』\n]{1,300}』')
_LETTER_RUN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# A word of prose: letters (with inner apostrophes) that are not part of a technical token,
# i.e. not glued to digits, `_`, path, URL or operator characters, nor to an inner dot or colon
# ("nginx.conf", "/etc/hosts", "v1.2", "key=value", "user@host" yield no word).
_PROSE_WORD = re.compile(
    r"(?<![\w/\\@=$#.:~%&+])[^\W\d_]+(?:['’][^\W\d_]+)*(?![\w/\\@=$#~%&+]|[.:'’][^\W_])"
)
# The same words in lowered ASCII text (the usual case), where letters are [a-z], found in about
# 60% of the time: explicit classes, a leading [a-z] that lets the engine skip to letters (so the
# lookbehind moves after it), and possessive runs, since backtracking into a word never matches.
_ASCII_PROSE_WORD = re.compile(
    r"[a-z](?<![a-z0-9_/\\@=$#.:~%&+].)[a-z]*+(?:'[a-z]+)*+(?![a-z0-9_/\\@=$#~%&+]|[.:'][a-z0-9])"
)
# Tokens that are paths, URLs, e-mails or assignments (removed before counting scripts).
_PATHLIKE = re.compile(r"(?<!\S)\S*?[/\\@=_]\S*")

# ----------------------------------------------------------------------------- word lists
# Kept as data in nomos_forensics/text/lexicons/langid.toml (docs/writing-rules.md, "Adding a language").
LEXICON = lexicon.load("nomos_forensics.text", "langid")
# Words every language borrows in operations talk: no vote.
NEUTRAL = frozenset(lexicon.words(LEXICON["neutral"]))
# English words in two tiers: markers (weight 1) and common content words (weight 0.5).
ENGLISH_MARKERS = frozenset(lexicon.words(LEXICON["english"]["markers"]))
ENGLISH_WORDS = frozenset(lexicon.words(LEXICON["english"]["words"]))
# Function words, polite words and everyday operations words per language, in file order.
LEXICONS: dict[str, str] = {lang: table["words"] for lang, table in LEXICON["languages"].items()}
# Letters (and marks) that only some Latin-script languages use: a vote per occurrence.
LETTER_HINTS: dict[str, tuple[str, ...]] = {chars: tuple(langs) for chars, langs in LEXICON["letter_hints"].items()}
_LETTER_HINT = {ch: langs for chars, langs in LETTER_HINTS.items() for ch in chars}
_HINT_CHARS = re.compile("[" + "".join(LETTER_HINTS) + "]")
# Closely related languages: a call between them is no evidence of a switch.
CLOSE = [set(group) for group in LEXICON["close"]]


def _build_index() -> dict[str, tuple[tuple[str, float], ...]]:
    votes: dict[str, dict[str, float]] = {}
    for word in ENGLISH_MARKERS:
        votes.setdefault(word, {})["en"] = 1.0
    for word in ENGLISH_WORDS:
        votes.setdefault(word, {}).setdefault("en", 0.5)
    for lang, words in LEXICONS.items():
        for word in words.split():
            votes.setdefault(word, {})[lang] = 1.0
    index = {}
    for word, langs in votes.items():
        if word in NEUTRAL:
            continue
        # a word shared by n languages gives each 1/n, except that English (by far the most
        # common language here) keeps half of a word it shares; one- and two-letter words count
        # half, unless they carry a diacritic ("är", "és", "że")
        size = 0.5 if len(word) <= 2 and word.isascii() else 1.0
        if "en" in langs and len(langs) > 1:
            share = {lang: (0.5 if lang == "en" else 0.5 / (len(langs) - 1)) for lang in langs}
        else:
            share = {lang: 1 / len(langs) for lang in langs}
        index[word] = tuple((lang, weight * size * share[lang]) for lang, weight in langs.items())
    return index


_INDEX = _build_index()

# ----------------------------------------------------------------------------- scripts
# (script, regex of its characters, characters per word unit, language or None)
_SCRIPTS: tuple[tuple[str, re.Pattern[str], float], ...] = tuple(
    (name, re.compile(f"[{chars}]"), per_unit)
    for name, chars, per_unit in (
        ("Han", "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df", 1.5),
        ("Kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f", 2.5),
        ("Hangul", "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f", 2.5),
        ("Cyrillic", "\u0400-\u052f", 6.0),
        ("Greek", "\u0370-\u03ff\u1f00-\u1fff", 6.0),
        ("Arabic", "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff", 4.5),
        ("Hebrew", "\u0590-\u05ff", 4.5),
        ("Devanagari", "\u0900-\u097f", 4.0),
        ("Bengali", "\u0980-\u09ff", 4.5),
        ("Gurmukhi", "\u0a00-\u0a7f", 4.5),
        ("Gujarati", "\u0a80-\u0aff", 4.5),
        ("Tamil", "\u0b80-\u0bff", 6.0),
        ("Telugu", "\u0c00-\u0c7f", 6.0),
        ("Kannada", "\u0c80-\u0cff", 6.0),
        ("Malayalam", "\u0d00-\u0d7f", 7.0),
        ("Sinhala", "\u0d80-\u0dff", 5.0),
        ("Thai", "\u0e00-\u0e7f", 5.0),
        ("Lao", "\u0e80-\u0eff", 5.0),
        ("Myanmar", "\u1000-\u109f", 5.0),
        ("Khmer", "\u1780-\u17ff", 5.0),
        ("Georgian", "\u10a0-\u10ff", 7.0),
        ("Armenian", "\u0530-\u058f", 6.0),
        ("Ethiopic", "\u1200-\u137f", 4.0),
    )
)
_NON_LATIN = re.compile("[" + "".join(p.pattern[1:-1] for _, p, _ in _SCRIPTS) + "]")
_SCRIPT_LANGUAGE = {
    "Hangul": "ko", "Greek": "el", "Hebrew": "he", "Devanagari": "hi", "Bengali": "bn",
    "Gurmukhi": "pa", "Gujarati": "gu", "Tamil": "ta", "Telugu": "te", "Kannada": "kn",
    "Malayalam": "ml", "Sinhala": "si", "Thai": "th", "Lao": "lo", "Myanmar": "my", "Khmer": "km",
    "Georgian": "ka", "Armenian": "hy", "Ethiopic": "am",
}
_CJK = ("Han", "Kana", "Hangul")
_UKRAINIAN = re.compile("[іїєґІЇЄҐ]")
_BELARUSIAN = re.compile("[ўЎ]")
_SERBIAN = re.compile("[ђјљњћџЂЈЉЊЋЏ]")
_MACEDONIAN = re.compile("[ѓќѕЃЌЅ]")
_KAZAKH = re.compile("[әғқңөұүһӘҒҚҢӨҰҮҺ]")
_RUSSIAN_ONLY = re.compile("[ыэёЫЭЁ]")
_PERSIAN = re.compile("[پچژگکی]")
_URDU = re.compile("[ٹڈڑںےھ]")

LANGUAGE_NAMES: dict[str, str] = dict(LEXICON["names"])
# How users name a language when they ask for it ("answer in French", "auf Englisch", "翻译成英文").
LANGUAGE_REQUEST_NAMES: dict[str, str] = dict(LEXICON["request_names"])
_REQUEST_NAME = {lang: re.compile(pattern, re.I) for lang, pattern in LANGUAGE_REQUEST_NAMES.items()}
_TRANSLATE = re.compile(lexicon.pattern(LEXICON["patterns"], "translate"), re.I)


@dataclass(frozen=True)
class Detection:
    language: str  # ISO 639-1
    confidence: float
    method: str  # "script", "stopwords", "lexicon", "lingua"

    @property
    def name(self) -> str:
        return LANGUAGE_NAMES.get(self.language, self.language)


@dataclass
class Profile:
    """Evidence for each language in a text: word-list votes and script units."""

    units: float = 0.0  # word units of prose
    latin_letters: int = 0
    scores: dict[str, float] = field(default_factory=dict)  # language -> votes (+ script units)
    voters: list[str] = field(default_factory=list)  # the words that voted, in order

    def distinct_words(self, language: str) -> int:
        """How many different words voted for `language` or a language close to it."""
        close = _close_to(language)
        return len({w for w in self.voters if any(lang in close for lang, _ in _INDEX[w])})

    def family_score(self, language: str) -> float:
        close = _close_to(language)
        return sum(v for k, v in self.scores.items() if k in close)

    def best(self) -> tuple[str | None, float, float]:
        """(language, its family's score, best score of any language outside the family)."""
        scores = self.scores
        if not scores:
            return None, 0.0, 0.0
        lang = max(scores, key=scores.__getitem__)
        family = _FAMILY.get(lang)
        other = 0.0
        if family is None:  # a family of its own (English, most scripts): no sum to make
            for k, v in scores.items():
                if v > other and k != lang:
                    other = v
            return lang, scores[lang], other
        own = 0.0
        for k, v in scores.items():
            if _FAMILY.get(k) == family:
                own += v
            elif v > other:
                other = v
        return lang, own, other


# Each language grouped in CLOSE with the languages close to it (itself included).
_CLOSE_TO: dict[str, frozenset[str]] = {}
for _group in CLOSE:
    for _lang in _group:
        _CLOSE_TO[_lang] = _CLOSE_TO.get(_lang, frozenset()) | _group


def _close_to(language: str) -> frozenset[str] | tuple[str]:
    return _CLOSE_TO.get(language, (language,))


def is_close(a: str, b: str) -> bool:
    return b in _close_to(a)


# One family per language for the hot path (a language in two groups, like Serbian, takes its first).
_FAMILY: dict[str, int] = {}
for _i, _group in enumerate(CLOSE):
    for _lang in _group:
        _FAMILY.setdefault(_lang, _i)


def _without_quotes(text: str) -> str:
    """Quoted strings removed, unless the text is mostly quotation (a translation, a banner)."""
    if not ('"' in text or "“" in text or "„" in text or "«" in text or "「" in text or "『" in text):
        return text
    stripped = _QUOTED.sub(" ", text)
    return stripped if len(stripped.split()) * 3 >= len(text.split()) else text


RAW_CHARS = 8000  # characters of a message read at all for its language (its head: code blocks are cut first)


def prose(text: str, *, drop_quotes: bool = False) -> str:
    """Text with code, URLs, paths and technical tokens removed: what is left is language. Only
    the first RAW_CHARS characters are read, whatever the message's length."""
    text = without_code(text[:RAW_CHARS], ANALYSE_CHARS + 300)
    if drop_quotes:
        text = _without_quotes(text)
    return _TECH_TOKEN.sub(" ", text)[:ANALYSE_CHARS]


def _chunks(text: str, size: int) -> list[str]:
    """The pieces of `text` that are read: about `size` characters each, cut at whitespace,
    as many as start within the first ANALYSE_CHARS characters."""
    if len(text) <= size:  # most messages: one piece, no loop
        return [text] if text else []
    pieces = []
    start, end = 0, len(text)
    while start < end and start < ANALYSE_CHARS:
        stop = start + size
        if stop < end:
            space = text.find(" ", stop)
            stop = end if space < 0 else space
        pieces.append(text[start:stop])
        start = stop
    return pieces


def _cyrillic_language(text: str) -> str:
    if _UKRAINIAN.search(text) and not _RUSSIAN_ONLY.search(text):
        return "be" if _BELARUSIAN.search(text) else "uk"
    if _SERBIAN.search(text):
        return "mk" if _MACEDONIAN.search(text) else "sr"
    if _KAZAKH.search(text):
        return "kk"
    if not _RUSSIAN_ONLY.search(text) and text.count("ъ") + text.count("Ъ") >= 2:
        return "bg"
    return "ru"


def _arabic_language(text: str) -> str:
    if _URDU.search(text):
        return "ur"
    return "fa" if len(_PERSIAN.findall(text)) >= 2 else "ar"


CHUNK_CHARS = 400
# Evidence at which reading stops early: this many votes, this many times any other family's.
DECIDED_SCORE, DECIDED_MARGIN = 8.0, 4.0


def profile(text: str | None, *, drop_quotes: bool = True) -> Profile:
    """Evidence per language in `text` (prose only). Never calls Lingua.

    Reads at most ANALYSE_CHARS characters of prose from the message's first RAW_CHARS, chunk by
    chunk, and stops as soon as one language family has clearly won (a long English reply costs
    about one chunk).
    """
    result = Profile()
    if not text:
        return result
    text = without_blocks(text[:RAW_CHARS])  # code, and reasoning blocks some models emit (in a bounded head)
    base = text[: ANALYSE_CHARS + 300]
    if not base.isascii() and _NON_LATIN.search(base):
        # other scripts: clean the whole window once and count their units first
        base = without_snippets(base)
        if drop_quotes:
            base = _without_quotes(base)
        if "/" in base or "@" in base or "=" in base or "_" in base or "\\" in base:
            base = _PATHLIKE.sub(" ", base)
        _score_scripts(base[:ANALYSE_CHARS], result)
        clean = False
    else:
        clean = True
    chunks = _chunks(base, CHUNK_CHARS)
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        if clean:
            chunk = without_snippets(chunk)
            if drop_quotes:
                chunk = _without_quotes(chunk)
        _score_words(chunk, result)
        if i == last:
            break  # nothing left to read: no need to ask whether to stop
        lang, own, other = result.best()
        if own >= DECIDED_SCORE and own >= DECIDED_MARGIN * other:
            break
    return result


_SCRIPT_OF: dict[str, tuple[str, float] | None] = {}  # a character's script and weight, looked up once


def _script_of(ch: str) -> tuple[str, float] | None:
    found = _SCRIPT_OF.get(ch, False)
    if found is False:
        found = next(((script, per_unit) for script, pattern, per_unit in _SCRIPTS if pattern.match(ch)), None)
        if len(_SCRIPT_OF) >= 1 << 16:
            _SCRIPT_OF.clear()
        _SCRIPT_OF[ch] = found
    return found


def _script_units(cleaned: str) -> dict[str, float]:
    counts = Counter(_NON_LATIN.findall(cleaned))  # counted in C, in the order first seen
    units: dict[str, float] = {}
    for ch, n in counts.items():
        found = _script_of(ch)
        if found is not None:
            script, per_unit = found
            units[script] = units.get(script, 0.0) + n / per_unit
    return units


def _score_scripts(cleaned: str, result: Profile) -> None:
    scores = result.scores
    script_units = _script_units(cleaned)
    if not script_units:
        return
    cjk = sum(script_units.get(s, 0.0) for s in _CJK)
    if cjk:
        kana = script_units.get("Kana", 0.0)
        hangul = script_units.get("Hangul", 0.0)
        han = script_units.get("Han", 0.0)
        if hangul >= han and hangul >= kana:
            lang = "ko"
        elif kana * 2.5 >= max(1.0, 0.1 * (han * 1.5 + kana * 2.5)):
            lang = "ja"
        else:
            lang = "zh"
        scores[lang] = scores.get(lang, 0.0) + cjk
    for script, units in script_units.items():
        if script in _CJK:
            continue
        if script == "Cyrillic":
            lang = _cyrillic_language(cleaned)
        elif script == "Arabic":
            lang = _arabic_language(cleaned)
        else:
            lang = _SCRIPT_LANGUAGE[script]
        scores[lang] = scores.get(lang, 0.0) + units
    result.units += sum(script_units.values())


def _score_words(cleaned: str, result: Profile) -> None:
    lowered = cleaned.lower()
    if lowered.isascii():
        _score_ascii_words(lowered, result)
        return
    scores = result.scores
    index = _INDEX
    words = 0
    for word in _PROSE_WORD.findall(lowered):
        if not word.isascii():
            if _NON_LATIN.search(word):
                continue  # counted by script
            word = word.replace("’", "'")
            for ch in _HINT_CHARS.findall(word):
                langs = _LETTER_HINT[ch]
                for lang in langs:
                    scores[lang] = scores.get(lang, 0.0) + 0.5 / len(langs)
        words += 1
        result.latin_letters += len(word)
        votes = index.get(word)
        if votes:
            result.voters.append(word)
            for lang, weight in votes:
                scores[lang] = scores.get(lang, 0.0) + weight
    if "¿" in cleaned or "¡" in cleaned:
        scores["es"] = scores.get("es", 0.0) + 1.0
    result.units += words


def _score_ascii_words(lowered: str, result: Profile) -> None:
    """`_score_words` for lowered ASCII text: no letter hints, no other scripts, no ¿ ¡, so
    counting and picking the voters is left to C. The votes are still added one by one in text
    order: the weights (1/12, 0.05, 0.1 …) are not exact in binary, so the sums (and the decisions
    taken on them, e.g. `>= 1.0`) depend on the order of the additions."""
    words = _ASCII_PROSE_WORD.findall(lowered)
    if not words:
        return
    result.units += len(words)
    result.latin_letters += sum(map(len, words))
    index = _INDEX
    voters = list(filter(index.__contains__, words))
    result.voters += voters
    scores = result.scores
    get = scores.get
    for lang, weight in chain.from_iterable(map(index.__getitem__, voters)):
        scores[lang] = get(lang, 0.0) + weight
