"""Offline language identification for chat text: scripts, word lists, then Lingua.

Three stages, cheapest first, all offline:

1. Scripts. Prose (code blocks, reasoning blocks, inline code, quoted lines and strings, URLs,
   paths and technical tokens removed) is measured in *word units* per Unicode script: a Latin
   or Cyrillic word is one unit, Han characters count 1/1.5 unit each, Kana 1/2.5, Thai 1/5, …
   so that "为什么 kubectl 连不上 API server？" is Chinese and an English sentence quoting
   "清华大学开源软件镜像站" is not. Scripts that identify a language (or a family) decide by
   themselves: Han/Kana/Hangul, Cyrillic (Ukrainian, Serbian, Bulgarian… by their letters),
   Arabic (Persian and Urdu by theirs), Hebrew, Greek, Devanagari, Thai…
2. Word lists (`LEXICONS`): function words, polite words and everyday operations words of
   English and 32 other Latin-script languages, plus letters that only some languages use
   (ñ ¿ ß ł ğ ő ă đ ơ å ø …). Each word's vote is shared among the languages that use it
   (English keeps half of a word it shares); words that every language borrows ("server",
   "backup", "container", "nginx") vote for none. A reply needs several different function
   words of its language (a list of names with one "Sans" in it is not French); a short user
   message may be decided by one word ("danke", "gracias"). This decides almost every English
   text, and most others, at once.
3. Lingua (lingua-language-detector; its models ship inside the wheel, nothing is downloaded)
   in low-accuracy mode over a fixed set of Latin-script languages, only for Latin prose of at
   least LINGUA_MIN_LETTERS letters in which the word lists saw another language but could not
   decide, and never when English leads. English text almost never gets here (Cyrillic and
   other scripts never do); the detector loads lazily, once per process.

Whose words: `own_prose` keeps what the user wrote themself in a user message (client-injected
text such as a compaction summary or <system-reminder> blocks, and pasted log, trace and code
lines, out: `without_pasted_lines`); `told_apart` separates close languages (Spanish and
Portuguese) when both sides are clear; `asked_for` reads a request for a language. The
patterns are data in lexicons/langid.toml.

Prose is read in chunks of CHUNK_CHARS, at most ANALYSE_CHARS characters, and reading stops as
soon as one language family has clearly won: a long English reply costs one chunk, tens of
microseconds.
"""

from __future__ import annotations

import functools
import re

from . import lexicon
from .profile import (  # noqa: F401  (re-exported: the language API rules use)
    _LETTER_RUN,
    _PROSE_WORD,
    _REQUEST_NAME,
    _TRANSLATE,
    ANALYSE_CHARS,
    CHUNK_CHARS,
    CLOSE,
    LANGUAGE_NAMES,
    LANGUAGE_REQUEST_NAMES,
    LEXICON,
    LEXICONS,
    LINGUA_LANGUAGES,
    LINGUA_MIN_LETTERS,
    MIN_CONFIDENCE,
    MIN_LETTERS,
    MIN_UNITS,
    NEUTRAL,
    RAW_CHARS,
    Detection,
    Profile,
    is_close,
    profile,
    prose,
)

_DETECTOR: list = []  # the one Lingua detector of this process, built on first need (or by `preload`)


def _detector():
    if not _DETECTOR:
        _DETECTOR.append(_build_detector(preloaded=False))
    return _DETECTOR[0]


def _build_detector(*, preloaded: bool):
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in LINGUA_LANGUAGES]
    builder = LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode()
    return (builder.with_preloaded_language_models() if preloaded else builder).build()


def preload() -> None:
    """Load Lingua's models now, all of them (about 50 MB, 0.3 s), instead of at the first
    detection. For a process about to fork workers (`scan --jobs N`): the models are read, never
    written, so the workers share their pages. Loaded lazily, they would be loaded again by each
    worker, which costs the tree about 40 MB of private memory per worker."""
    _DETECTOR[:] = [_build_detector(preloaded=True)]


def _lingua(text: str) -> Detection | None:
    words = " ".join(w.lower() for w in _LETTER_RUN.findall(prose(text, drop_quotes=True)))
    values = _detector().compute_language_confidence_values(words)
    if not values:
        return None
    best = values[0].language.iso_code_639_1.name.lower()
    # close languages share the confidence (Swedish/Danish/Norwegian text splits it three ways)
    confidence = sum(float(v.value) for v in values if is_close(v.language.iso_code_639_1.name.lower(), best))
    return Detection(best, min(1.0, confidence), "lingua")


def detect(
    text: str | None, *, min_letters: int = MIN_LETTERS, lingua_min_letters: int = LINGUA_MIN_LETTERS,
    min_units: float = MIN_UNITS, min_score: float = 1.5, margin: float = 2.0, running_text: bool = True,
) -> Detection | None:
    """The language of `text`, or None when there is too little prose or evidence to tell.

    `min_units` is how many word units of prose are needed (a Latin word is one unit; see the
    module docstring); `lingua_min_letters` how many letters of Latin prose the statistical
    detector needs when the word lists cannot decide; `min_score` and `margin` how many word-list
    votes the winning language needs, and by how much it must beat any unrelated language;
    `running_text` asks for several different function words of a non-English language (a
    reply), where a short user message may be decided by a single word ("danke", "gracias").
    `min_letters` is accepted for compatibility and only used as a floor for Lingua.
    """
    return decide(profile(text), text, min_letters=min_letters, lingua_min_letters=lingua_min_letters,
                  min_units=min_units, min_score=min_score, margin=margin, running_text=running_text)


def decide(
    prof: Profile, text: str | None, *, min_letters: int = MIN_LETTERS,
    lingua_min_letters: int = LINGUA_MIN_LETTERS, min_units: float = MIN_UNITS,
    min_score: float = 1.5, margin: float = 2.0, running_text: bool = True,
) -> Detection | None:
    """`detect` on an already computed profile of `text` (see `detect` for the parameters)."""
    if prof.units < min_units:
        return None
    lang, own, other = prof.best()
    if lang is not None:
        script_lang = lang not in LEXICONS and lang != "en"
        if script_lang and own >= max(min(1.0, min_units), 0.4 * prof.units) and own >= 1.5 * other:
            return Detection(lang, min(0.99, 0.7 + 0.3 * own / prof.units), "script")
        if not script_lang and own >= min_score and own >= margin * other and (
            lang == "en" or not running_text or _prose_like(prof, lang)
        ):
            method = "stopwords" if lang == "en" else "lexicon"
            return Detection(lang, min(0.99, 0.6 + 0.4 * own / (own + other + 1)), method)
    english = prof.scores.get("en", 0.0)
    foreign = max((prof.family_score(k) for k in prof.scores if k != "en"), default=0.0)
    if (
        prof.latin_letters >= max(lingua_min_letters, min_letters)
        and prof.latin_letters * 2 >= prof.units
        and foreign >= 1.0  # the word lists saw some other language …
        and not (english >= 1.0 and english >= foreign)  # … and English does not lead: data, not a foreign text
    ):
        found = _lingua(text or "")
        # trust Lingua only where the word lists saw at least a trace of its language
        if found is not None and prof.family_score(found.language) > 0 and (
            prof.units <= 12 or prof.distinct_words(found.language) >= 2
        ):
            if prof.family_score(found.language) >= 1.0:  # two signals agree
                return Detection(found.language, min(1.0, found.confidence + 0.2), "lingua")
            return found
    return None


def _prose_like(prof: Profile, language: str) -> bool:
    """Enough different function words of `language` for running text, not a list of names
    ("DejaVu Sans Mono", "E E E" columns) that happens to contain one of its words."""
    needed = 1 if prof.units <= 3 else 2 if prof.units <= 6 else 3
    return prof.distinct_words(language) >= needed and prof.family_score(language) >= 0.1 * prof.units


def _lingua_family(text: str) -> dict[str, float]:
    """Lingua's confidence per language for `text` (prose words only)."""
    words = " ".join(w.lower() for w in _PROSE_WORD.findall(prose(text, drop_quotes=True)))
    if not words:
        return {}
    return {
        v.language.iso_code_639_1.name.lower(): float(v.value)
        for v in _detector().compute_language_confidence_values(words)
    }


def guess_short(text: str, prof: Profile) -> Detection | None:
    """The language of a short message the word lists could not decide ("O backup terminou?",
    "Yedekleme bitti mi?"): asked of Lingua only when no word in it is English, at least two
    words are not borrowed technical vocabulary, and Lingua is nearly certain."""
    if prof.scores.get("en", 0.0) > 0 or prof.latin_letters < 10 or prof.units > 12:
        return None
    words = [w.lower() for w in _PROSE_WORD.findall(prose(text, drop_quotes=True))]
    if sum(1 for w in words if w not in NEUTRAL and len(w) > 1) < 2:
        return None
    values = _lingua_family(text)
    if not values or values.get("en", 0.0) >= 0.05:
        return None
    best = max(values, key=values.__getitem__)
    confidence = sum(v for k, v in values.items() if is_close(k, best))
    return Detection(best, confidence, "lingua") if confidence >= 0.9 else None


def could_be(text: str, prof: Profile, language: str) -> bool:
    """Might a short message without English words be in `language`? (Lingua, generous.)"""
    if prof.scores.get("en", 0.0) > 0 or prof.latin_letters < 4 or language not in LINGUA_LANGUAGES:
        return False
    values = _lingua_family(text)
    return sum(v for k, v in values.items() if is_close(k, language)) >= 0.3


def evidence(prof: Profile, language: str) -> float:
    """How much `prof` speaks for `language` (or a language close to it)."""
    return prof.family_score(language)


def requested_language(text: str | None, language: str) -> bool:
    """Does `text` (a user message) ask for `language`, or for a translation?"""
    if not text:
        return False
    pattern = _REQUEST_NAME.get(language)
    if pattern is not None and pattern.search(text):
        return True
    return bool(_TRANSLATE.search(text))


def asked_for(text: str | None, language: str) -> bool:
    """Did the user ask for `language` in `text`: by name ("answer in French", "auf Englisch"),
    or a translation that names no language ("translate the error for me")? A translation into
    named languages ("translate the page into Russian, Kazakh and Spanish") asks for those only.
    A long message is read in its head and tail (REQUEST_HEAD, REQUEST_TAIL characters: a
    request is in the user's own words, not in the middle of what they paste)."""
    if not text:
        return False
    named, translate = _requests(text if len(text) <= REQUEST_HEAD + REQUEST_TAIL
                                 else text[:REQUEST_HEAD] + "\n" + text[-REQUEST_TAIL:])
    return language in named or (translate and not named)


REQUEST_HEAD, REQUEST_TAIL = 3000, 1000


@functools.lru_cache(maxsize=1024)
def _requests(text: str) -> tuple[frozenset[str], bool]:
    """The languages `text` asks for by name, and whether it asks for a translation (each user
    message is read once, however many replies are checked against it): one pass of an
    Aho-Corasick automaton over the request_names and translate entries, which are literal
    alternatives with character classes (`ingl[eéê]s`) and a few word boundaries (`\\bthai\\b`)."""
    lowered = text.lower()
    named: set[str] = set()
    translate = False
    for end, entries in _request_automaton().iter(lowered):
        for key, length, bounded in entries:
            if bounded and not _word_at(lowered, end + 1 - length, end + 1):
                continue
            if key == "":
                translate = True
            else:
                named.add(key)
    return frozenset(named), translate


def _word_at(text: str, start: int, stop: int) -> bool:
    return (start == 0 or not text[start - 1].isalnum()) and (stop == len(text) or not text[stop].isalnum())


@functools.cache
def _request_automaton():
    """Each literal the request patterns stand for -> (language, or "" for a translation; its
    length; whether it must be a whole word). tests/test_language.py checks it finds what the
    patterns find."""
    import itertools

    import ahocorasick

    from .profile import LEXICON

    automaton = ahocorasick.Automaton()
    sources = [*LANGUAGE_REQUEST_NAMES.items(), ("", lexicon.pattern(LEXICON["patterns"], "translate"))]
    for key, source in sources:
        for branch in source.split("|"):
            bounded = branch.startswith("\\b")
            parts = re.findall(r"\[([^\]]*)\]|([^\[]+)", branch.replace("\\b", ""))
            for letters in itertools.product(*[list(cls) if cls else [text] for cls, text in parts]):
                literal = "".join(letters).lower()
                found = automaton.get(literal, ())
                automaton.add_word(literal, (*found, (key, len(literal), bounded)))
    automaton.make_automaton()
    return automaton


def confidence_for(text: str, language: str) -> float:
    """Lingua's confidence that `text` is in `language` (0 when it is not among LINGUA_LANGUAGES)."""
    if language not in LINGUA_LANGUAGES:
        return 0.0
    from lingua import IsoCode639_1, Language

    lang = Language.from_iso_code_639_1(getattr(IsoCode639_1, language.upper()))
    words = " ".join(w.lower() for w in _LETTER_RUN.findall(prose(text)))
    return float(_detector().compute_language_confidence(words, lang))


# ----------------------------------------------------------------------------- whose words
_PATTERNS = LEXICON["patterns"]
_INJECTED_MESSAGE = re.compile(lexicon.pattern(_PATTERNS, "injected_message"), re.I | re.S)
_INJECTED_TAG = re.compile(r"<(" + _PATTERNS["injected_tags"] + r")\b[^>]*>.*?(?:</\1\s*>|\Z)", re.I | re.S)
_PASTED_START = re.compile(lexicon.pattern(_PATTERNS, "pasted_start"), re.I)
_PASTED_END = re.compile(lexicon.pattern(_PATTERNS, "pasted_end"), re.I)
_PASTED_FLAGS = re.compile(lexicon.pattern(_PATTERNS, "pasted_flags"), re.I)
# Every pattern above, and a line of symbols, needs one of these (or starts with such a word).
_CODEISH = re.compile(r"""[$%>@/\\~{}();=\[\]:|#"+-]|\d\d|^(?:import|from|export)\s""", re.I)
_FIRST_CHARS = frozenset(LEXICON["pasted_gate"]["first_chars"])
_FIRST_WORDS = frozenset(lexicon.words(LEXICON["pasted_gate"]["first_words"]))
_WORD_END = re.compile(r"[\s(:{\[<]")


def _first_word(line: str) -> str:
    """The line's first word, lower case; any word ending in error/exception counts as "error"."""
    end = _WORD_END.search(line, 0, 40)
    word = (line[: end.start()] if end else line[:40]).lower()
    return "error" if word.endswith(("error", "exception")) else word


_NOT_LETTER = re.compile(r"[\W\d_]+")
_ASCII_LETTERS = str.maketrans("", "", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# Close languages told apart when both sides are clear (a Portuguese reply to a Spanish user).
SEPARABLE = frozenset(frozenset(pair) for pair in LEXICON["separable"])
SEPARATE_SCORE = 6.0  # the reply's own votes for its language, at least
SEPARATE_RATIO = 2.5  # … this many times its votes for the user's language (and the user's, the other way)
SEPARATE_LINGUA = 0.7  # and Lingua, asked between the two, at least this sure of the reply's


def is_injected(text: str | None) -> bool:
    """Is this user-role message text the client wrote (a context summary, an interruption
    marker, local command output)? Such text is never the user's language."""
    return bool(text) and _INJECTED_MESSAGE.match(text) is not None


def _pasted(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if not _CODEISH.search(stripped):
        return False  # plain words: nothing below can match
    if stripped[0] in _FIRST_CHARS or stripped[1:3] == ":\\" or _first_word(stripped) in _FIRST_WORDS:
        if _PASTED_START.match(stripped):
            return True
    if stripped[-1] in ";{}>" and _PASTED_END.search(stripped[-80:]):
        return True
    if "--" in stripped and _PASTED_FLAGS.search(stripped):
        return True
    if len(stripped) < 12:
        return False
    # mostly digits and symbols (tables of numbers, hex dumps, paths and flags)
    chars = len(stripped) - stripped.count(" ")
    if stripped.isascii():
        letters = chars - len(stripped.translate(_ASCII_LETTERS).replace(" ", ""))
    else:
        letters = len(_NOT_LETTER.sub("", stripped))
    return letters * 5 < chars * 2


def without_pasted_lines(text: str) -> str:
    """`text` without the lines that are pasted output or code rather than prose: timestamps,
    tracebacks, log levels, prompts, command lines, statements, lines of symbols."""
    if "\n" not in text:
        return "" if _pasted(text) else text
    return "\n".join(line for line in text.splitlines() if not _pasted(line))


# A user message longer than this is read by its head and tail only (whole lines of each): a
# 4 MB paste cost the language rule 100 ms of line tests, for prose profile() reads 1,500
# characters of (from the first RAW_CHARS of what is left).
OWN_PROSE_MAX, OWN_PROSE_HEAD, OWN_PROSE_TAIL = 8_000, 6_000, 2_000


def own_prose(text: str | None) -> str:
    """What the user wrote themself in a user message: client-injected text (whole injected
    messages, <system-reminder>/<command-…>/<local-command-stdout> blocks) and pasted output
    or code lines removed; `profile` then drops code blocks, quotes and technical tokens."""
    if not text or is_injected(text):
        return ""
    if "<" in text:
        text = _INJECTED_TAG.sub(" ", text)
    if len(text) > OWN_PROSE_MAX:  # a pasted log or file: the user's own words sit before or after it
        head, tail = text[:OWN_PROSE_HEAD], text[-OWN_PROSE_TAIL:]
        text = head[: head.rfind("\n") + 1 or None] + tail[tail.find("\n") + 1:]
    return without_pasted_lines(text)


def told_apart(reply: Profile, reply_text: str, language: str, user_scores: dict[str, float],
               expected: str) -> bool:
    """Is a reply in `language` (close to the user's `expected`, e.g. Portuguese and Spanish)
    clearly in the other one? Both sides must be clear: the reply's votes and the user's,
    each SEPARATE_RATIO times the other language's, and Lingua sure of the reply's."""
    if language == expected or frozenset((language, expected)) not in SEPARABLE:
        return False
    own, other = reply.scores.get(language, 0.0), reply.scores.get(expected, 0.0)
    if own < SEPARATE_SCORE or own < SEPARATE_RATIO * other:
        return False
    users, theirs = user_scores.get(expected, 0.0), user_scores.get(language, 0.0)
    if users < 2.0 or users < SEPARATE_RATIO * theirs:
        return False
    from lingua import IsoCode639_1, Language

    pair = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in (language, expected)]
    detector = _pair_detector(tuple(pair))
    words = " ".join(w.lower() for w in _LETTER_RUN.findall(prose(reply_text, drop_quotes=True)))
    return detector.compute_language_confidence(words, pair[0]) >= SEPARATE_LINGUA


@functools.cache
def _pair_detector(pair):
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(*pair).with_low_accuracy_mode().build()
