"""One frustration decision per user message (issue 32): did the user have to clarify, correct,
repeat or complain, and how strongly (low, medium, high)?

How: the user's own words (code, pasted lines and client text out, at most the head and tail of a
long message) are read by linear models over hashed words and the cue tables of
lexicons/frustration_cues.toml (a dozen languages), beside what surrounds the message: how close
it is to the user's earlier messages (a request sent again, in any language: shared words and
characters), whether the agent's turn before it ended on an error card or a blank, asked a
question or declined, and the phrase signal of the user-frustration rule (its corrections, nudges,
pushback and repeats, tuned on coding-agent sessions). Trained on the labelled user messages of
the real-text corpus's tune families by bench/train_text.py (weights: models/frustration.json).
The first user message is never frustration (there is nothing yet to be frustrated with).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from dataclasses import dataclass

from . import lexicon
from .features import LinearModel, bucket, hashed, text_features

KINDS = ("none", "clarify", "correct", "repeat", "complain")
GRADES = ("low", "medium", "high")
HEAD, TAIL = 1500, 500  # characters of the user's own words read
# how far above "none" the detector must score a message that no phrase of the rule found: on the
# tune families held out (bench/train_frustration.py) +1.0 trades recall 0.38 -> 0.27 for
# precision 0.61 -> 0.73 (the rule's phrases alone: 0.77 / 0.20); a false alarm costs more
MIN_MARGIN = 1.0
REPLY_TAIL = 1500  # characters of the end of the agent's reply before read
EARLIER_READ = 6  # how many of the user's earlier messages a message is compared with
_LENGTH_EDGES = (8, 30, 120, 400)
_SIMILAR_EDGES = (0.3, 0.5, 0.7, 0.9, 0.999)
_SIMILAR_MILLI = tuple(int(1000 * e) for e in _SIMILAR_EDGES)
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True, slots=True)
class Context:
    """What surrounds a user message."""

    earlier: tuple[str, ...] = ()  # the user's earlier messages (own words), most recent last (the last EARLIER_READ read)
    reply: str | None = None  # the agent's last text before it (None: it said nothing)
    reply_error: bool = False  # the agent's turn before it ended on an error card or a blank
    reply_asked: bool = False  # that text ends by asking the user something
    reply_declined: bool = False  # that text declines (text.refusal's gate and model)
    signal: str | None = None  # the user-frustration rule's phrase signal ("correction", "repeat", …)


@dataclass(frozen=True, slots=True)
class Frustration:
    kind: str  # clarify, correct, repeat or complain
    grade: str  # low, medium or high
    margin: float  # how far the detector's score is above "none"
    cues: tuple[str, ...]  # the cue tables the message holds


@functools.cache
def _automaton(section: str = "cues"):
    """The entries of one section of frustration_cues.toml (`cues`: the user's words; `reply`:
    the agent's reply before) -> their tables."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for table, text in lexicon.load("nomos_forensics.text", "frustration_cues")[section].items():
        for entry in lexicon.cues(text):
            found = automaton.get(entry, ())
            automaton.add_word(entry, (*found, table) if table not in found else found)
    automaton.make_automaton()
    return automaton


def cue_tables(text: str, section: str = "cues") -> tuple[str, ...]:
    """The cue tables (of `section`) whose entries the lower-case `text` holds."""
    seen: set[str] = set()
    for _end, tables in _automaton(section).iter(text):
        seen.update(tables)
    return tuple(sorted(seen))


def own_words(text: str) -> str:
    """The head and tail of what the user wrote, lower case, one space between words."""
    if len(text) > HEAD + TAIL:
        text = text[:HEAD] + " " + text[-TAIL:]
    return " ".join(text.lower().replace("\u2019", "'").split())


@functools.lru_cache(maxsize=256)  # a message is compared with the next six: read it once
def _units(text: str) -> frozenset[str]:
    """Words, and the characters of scripts written without spaces: what two requests share."""
    if not _UNSPACED.search(text):  # nearly every message: words only
        return frozenset(_WORD.findall(text))
    out = set()
    for word in _WORD.findall(text):
        if _UNSPACED.search(word):
            out.update(word)
        else:
            out.add(word)
    return frozenset(out)


def similarity(text: str, earlier: tuple[str, ...]) -> float:
    """The highest share of units `text` has in common with one of the `earlier` messages
    (Jaccard over words and unspaced characters): 1.0 is the same request sent again."""
    mine = _units(text)
    if not mine:
        return 0.0
    best = 0.0
    for other in earlier[-EARLIER_READ:]:
        theirs = _units(other)
        if theirs:
            shared = len(mine & theirs)  # the union's size is counted, not built
            best = max(best, shared / (len(mine) + len(theirs) - shared))
    return best


def features(text: str, context: Context) -> tuple[str, ...] | None:
    """The models' reading of a user message (its own words and what surrounds it), or None when
    it says nothing."""
    own = own_words(text)
    if not own:
        return None
    tables = cue_tables(own)
    names = list(text_features(own[:600]))
    names += [f"cue|{t}" for t in tables]
    names += [f"cc|{a}+{b}" for i, a in enumerate(tables) for b in tables[i + 1:]]
    letters = list(filter(str.isalpha, text[:300]))  # shouting shows in the opening words
    upper = sum(map(str.isupper, letters))
    names += [f"len|{bucket(len(own), _LENGTH_EDGES)}",
              f"sim|{bucket(int(1000 * similarity(own, context.earlier)), _SIMILAR_MILLI)}",
              f"earlier|{min(len(context.earlier), 3)}"]
    if len(letters) >= 8 and upper >= 0.6 * len(letters):
        names.append("shout|1")
    if "!!" in text or "！！" in text:
        names.append("bang|2")
    if own.rstrip(" .").endswith(("?", "？")):
        names.append("ask|1")
    if own.strip(" ?？") == "":
        names.append("only|?")
    if context.reply is None:
        names.append("prev|none")
    else:
        names += [f"prev|{t}" for t in cue_tables(own_words(context.reply[-REPLY_TAIL:]), "reply")]
    if context.reply_error:
        names.append("prev|error")
    if context.reply_asked:
        names.append("prev|asked")
    if context.reply_declined:
        names.append("prev|declined")
    if context.signal:
        names.append(f"rule|{context.signal}")
        names.extend(f"rule+{t}" for t in tables)
    return tuple(names)


@functools.cache
def models() -> dict[str, LinearModel]:
    """The shipped models: `detect` (none / frustrated), `kind` and `grade` (among the frustrated)."""
    resource = importlib.resources.files("nomos_forensics.text").joinpath("models", "frustration.json")
    data = json.loads(resource.read_text(encoding="utf-8"))
    return {name: LinearModel(value) for name, value in data.items()}


def decide(text: str | None, context: Context, always: bool = False) -> Frustration | None:
    """The frustration decision for a user message that follows an agent's reply: None when it
    is not frustration. With `always` (another reading found it), its kind and grade whatever
    the detector says."""
    if not text:
        return None
    names = features(text, context)
    if names is None:
        return None
    shipped = models()
    buckets = hashed(names)
    margin = shipped["detect"].margin(buckets, "frustrated")
    if not always and margin <= MIN_MARGIN:
        return None
    kind = shipped["kind"].best(buckets)[0]
    grade = shipped["grade"].best(buckets)[0]
    return Frustration(kind, grade, margin, tuple(n[4:] for n in names if n.startswith("cue|")))
