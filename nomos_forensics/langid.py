"""Offline language identification for chat text: Unicode scripts first, then Lingua.

Lingua (lingua-language-detector) ships its models inside the wheel, so nothing is downloaded
at run time. It runs in low-accuracy mode over a fixed set of languages, loaded lazily once per
process (~40 MB, ~0.2 s). Most English text never reaches it: a stop-word test answers first.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Languages Lingua chooses among for Latin and Cyrillic text (ISO 639-1).
LINGUA_LANGUAGES = (
    "en es fr de pt it nl pl tr vi id ms sv da nb fi cs sk ro hu hr ca sl lt lv et "
    "ru uk bg sr tl sw af sq eu ga is"
).split()

MIN_LETTERS = 20
MIN_CONFIDENCE = 0.6

_CODE_BLOCK = re.compile(r"```.*?(```|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# ASCII-only: scripts written without spaces (Chinese, Japanese) must not vanish as one "token"
_URL = re.compile(r"\b(?:https?|ftp|ssh)://[!-~]+|\bwww\.[!-~]+", re.I)
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-/~]+", re.ASCII)
_TECH_TOKEN = re.compile(r"[!-~]*[\d_@=<>{}\[\]\\|$#][!-~]*|[!-~]+\.[!-~]+")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.U)

# Distinctively English function words (none is a common word in the other listed languages).
ENGLISH_MARKERS = frozenset(
    """the and is are you your that this with have has it's i'm i've i'll can't don't
    doesn't didn't won't isn't aren't wasn't be it what which would should could there
    their they here from not but or if we our were been just please sorry can
    any some about into out up these those how when where why who than then them she his
    it’s i’m can’t don’t doesn’t didn’t won’t isn’t does did let's let’s yes
    unfortunately however able unable""".split()
)

# Common English words, including operations vocabulary: short English requests ("check the
# certificate", "restart nginx please") are too short for statistical detectors.
ENGLISH_LEXICON = ENGLISH_MARKERS | frozenset(
    """a an to of in on at by for as or my me i he her him us so no yes ok okay all also
    one two three new old good bad same other more most less many much very really still
    again now today yesterday tomorrow time day week hour minute please thanks thank hi hello
    hey sure right wrong fine done need want like know think see look get got make go going
    show list check find give tell help try use set put keep take send start stop restart
    reboot run update upgrade install remove delete create add fix clean move copy open close
    enable disable status state log logs error errors warning issue problem service services
    server servers host hosts node nodes container containers disk disks space usage memory
    cpu load network port ports file files folder directory config configuration backup
    backups database job jobs task tasks user users password certificate cert valid expired
    version latest release package packages system systems machine vm vms web site page
    why what which who how when where there here this that these those it its is are was
    were be been being do does did done has have had will would can could should may might
    must shall not no nor but and if then than because while after before during until
    about above below over under up down out off into onto from with without within per
    every each some any few all both either neither only just even ever never always
    again already yet soon running stopped active inactive healthy down working broken
    slow fast high low full empty free used left right first last next previous""".split()
)
_SUFFIXES = ("ing", "ed", "es", "s", "ly")

# Function words of the most common user languages, for texts too short for Lingua.
FUNCTION_WORDS = {
    "es": "el la los las del un una y es no que por para con en se lo mi tu su al como pero más está este esta eso esto puedes puede necesito quiero hay muy sí gracias favor también ya todo".split(),
    "fr": "le la les de des du un une et est pas ne je tu il nous vous que qui pour dans sur avec ce cette mais ou s'il plaît merci bien très aussi tout mon ma mes peux peut veux faire".split(),
    "de": "der die das und ist nicht ich du sie es ein eine mit auf für bitte zu den dem von ist sind wir ihr kann kannst mir mich auch noch schon aber oder wie was warum danke".split(),
    "pt": "o os as do da dos das um uma e é não que para com em se você por favor obrigado isso isto meu minha está pode posso preciso quero também muito já".split(),
    "it": "il lo gli di del della un una e è non che per con in mi ti questo questa sono puoi può voglio grazie anche molto già perché come".split(),
    "nl": "de het een en is niet ik je jij van op met voor dat dit zijn wij kun kan wil graag ook maar nog wel".split(),
    "en": sorted(ENGLISH_MARKERS | {"a", "to", "of", "in", "on", "for", "my", "i", "please", "the"}),
}
_FUNCTION_INDEX: dict[str, set[str]] = {}
for _lang, _words in FUNCTION_WORDS.items():
    for _w in _words:
        _FUNCTION_INDEX.setdefault(_w, set()).add(_lang)


def function_word_vote(words: list[str]) -> tuple[str, int] | None:
    """The language whose function words clearly dominate `words`, with its hit count."""
    votes: dict[str, float] = {}
    for word in words:
        langs = _FUNCTION_INDEX.get(word)
        if langs:
            for lang in langs:
                votes[lang] = votes.get(lang, 0) + 1 / len(langs)
    if not votes:
        return None
    ranked = sorted(votes.items(), key=lambda kv: -kv[1])
    best, score = ranked[0]
    runner = ranked[1][1] if len(ranked) > 1 else 0
    if score >= 1.5 and score >= 2 * runner:
        return best, int(score)
    return None


def _english_word(word: str) -> bool:
    if word in ENGLISH_LEXICON:
        return True
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if stem in ENGLISH_LEXICON or stem + "e" in ENGLISH_LEXICON or stem[:-1] in ENGLISH_LEXICON:
                return True
    return False


# Unicode blocks of the scripts that identify a language (or a small family) by themselves.
_SCRIPTS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("Han", ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF))),
    ("Kana", ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F))),
    ("Hangul", ((0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F))),
    ("Cyrillic", ((0x0400, 0x052F),)),
    ("Greek", ((0x0370, 0x03FF), (0x1F00, 0x1FFF))),
    ("Arabic", ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))),
    ("Hebrew", ((0x0590, 0x05FF),)),
    ("Devanagari", ((0x0900, 0x097F),)),
    ("Bengali", ((0x0980, 0x09FF),)),
    ("Thai", ((0x0E00, 0x0E7F),)),
    ("Georgian", ((0x10A0, 0x10FF),)),
    ("Armenian", ((0x0530, 0x058F),)),
    ("Tamil", ((0x0B80, 0x0BFF),)),
    ("Ethiopic", ((0x1200, 0x137F),)),
)
_SCRIPT_LANGUAGE = {
    "Hangul": "ko", "Greek": "el", "Hebrew": "he", "Devanagari": "hi", "Bengali": "bn",
    "Thai": "th", "Georgian": "ka", "Armenian": "hy", "Tamil": "ta", "Ethiopic": "am", "Arabic": "ar",
}
LANGUAGE_NAMES = {
    "en": "English", "es": "Spanish", "fr": "French", "de": "German", "pt": "Portuguese",
    "it": "Italian", "nl": "Dutch", "pl": "Polish", "tr": "Turkish", "vi": "Vietnamese",
    "id": "Indonesian", "ms": "Malay", "sv": "Swedish", "da": "Danish", "nb": "Norwegian",
    "fi": "Finnish", "cs": "Czech", "sk": "Slovak", "ro": "Romanian", "hu": "Hungarian",
    "hr": "Croatian", "ca": "Catalan", "sl": "Slovene", "lt": "Lithuanian", "lv": "Latvian",
    "et": "Estonian", "ru": "Russian", "uk": "Ukrainian", "bg": "Bulgarian", "sr": "Serbian",
    "tl": "Tagalog", "sw": "Swahili", "af": "Afrikaans", "sq": "Albanian", "eu": "Basque",
    "ga": "Irish", "is": "Icelandic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
    "el": "Greek", "he": "Hebrew", "hi": "Hindi", "bn": "Bengali", "th": "Thai", "ka": "Georgian",
    "hy": "Armenian", "ta": "Tamil", "am": "Amharic", "ar": "Arabic",
}
# Languages close enough that a low-margin call between them is no evidence of a switch.
CLOSE = [
    {"es", "pt", "ca", "it"}, {"da", "nb", "sv"}, {"ru", "uk", "bg", "sr"}, {"id", "ms", "tl"},
    {"cs", "sk"}, {"hr", "sr", "sl"}, {"nl", "af"},
]


@dataclass(frozen=True)
class Detection:
    language: str  # ISO 639-1
    confidence: float
    method: str  # "stopwords", "script", "lingua"

    @property
    def name(self) -> str:
        return LANGUAGE_NAMES.get(self.language, self.language)


def prose(text: str) -> str:
    """Text with code, URLs, paths and technical tokens removed: what is left is language."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _PATH.sub(" ", text)
    return _TECH_TOKEN.sub(" ", text)


def _script_of(ch: str) -> str | None:
    cp = ord(ch)
    if cp < 0x0250:
        return "Latin" if ch.isalpha() else None
    for script, ranges in _SCRIPTS:
        for low, high in ranges:
            if low <= cp <= high:
                return script
    if 0x1E00 <= cp <= 0x1EFF:
        return "Latin"
    return "Other" if ch.isalpha() else None


def script_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isascii() and not ch.isalpha():
            continue
        script = _script_of(ch)
        if script:
            counts[script] = counts.get(script, 0) + 1
    return counts


def is_close(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in CLOSE)


@functools.cache
def _detector():
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in LINGUA_LANGUAGES]
    return LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()


CYRILLIC_LANGUAGES = ("ru", "uk", "bg", "sr")


def detect(
    text: str | None, *, min_letters: int = MIN_LETTERS, lingua_min_letters: int = MIN_LETTERS
) -> Detection | None:
    """The language of `text`, or None when there is too little prose to tell.

    `lingua_min_letters` is how much Latin-script prose the statistical detector needs before
    its answer is trusted (short texts are decided by scripts and English word lists only).
    """
    if not text:
        return None
    cleaned = prose(text)
    counts = script_counts(cleaned)
    letters = sum(counts.values())
    cjk = counts.get("Han", 0) + counts.get("Kana", 0) + counts.get("Hangul", 0)
    # CJK scripts carry a word per one or two characters: fewer letters are enough
    if letters < min_letters and cjk < max(4, min_letters // 4):
        return None
    dominant, top = max(counts.items(), key=lambda kv: kv[1])
    share = top / letters
    if cjk and cjk / letters >= 0.3:
        if counts.get("Kana", 0) >= max(2, cjk * 0.1):
            return Detection("ja", 0.95, "script")
        if counts.get("Hangul", 0) >= counts.get("Han", 0):
            return Detection("ko", 0.95, "script")
        return Detection("zh", 0.95, "script")
    if dominant in _SCRIPT_LANGUAGE and share >= 0.5:
        return Detection(_SCRIPT_LANGUAGE[dominant], 0.9, "script")
    if dominant not in ("Latin", "Cyrillic"):
        return None
    words = [w.lower() for w in _WORD.findall(cleaned)]
    if dominant == "Latin" and words:
        hits = sum(1 for w in words if w in ENGLISH_MARKERS)
        if hits >= 3 and hits / len(words) >= 0.25:
            return Detection("en", 0.95, "stopwords")
        known = sum(1 for w in words if _english_word(w))
        if len(words) >= 2 and known / len(words) >= 0.6:
            return Detection("en", 0.85, "lexicon")
        if letters < 60:
            vote = function_word_vote(words)
            if vote is not None:
                return Detection(vote[0], 0.8, "function-words")
        if letters < lingua_min_letters:
            return None
    values = _detector().compute_language_confidence_values(" ".join(words) or cleaned)
    if not values:
        return None
    if dominant == "Cyrillic":  # the script settles the family; Lingua picks the member
        best = next((v for v in values if v.language.iso_code_639_1.name.lower() in CYRILLIC_LANGUAGES), None)
        if best is None:
            return None
        return Detection(best.language.iso_code_639_1.name.lower(), max(0.9, float(best.value)), "script")
    best = values[0]
    return Detection(best.language.iso_code_639_1.name.lower(), float(best.value), "lingua")


def confidence_for(text: str, language: str) -> float:
    """Lingua's confidence that `text` is in `language` (0 when it is not among LINGUA_LANGUAGES)."""
    if language not in LINGUA_LANGUAGES:
        return 0.0
    from lingua import IsoCode639_1, Language

    lang = Language.from_iso_code_639_1(getattr(IsoCode639_1, language.upper()))
    words = " ".join(w.lower() for w in _WORD.findall(prose(text)))
    return float(_detector().compute_language_confidence(words, lang))
