"""One refusal decision per assistant message (issue 31): does the reply decline, and on what
ground: `cant-run` (it lacks a capability, a tool, access or a target), `no-web-tool` (it lacks
live or local knowledge and a way to look it up), `policy` (a model refusal: safety, ethics,
law, guidelines, or no reason at all), `business-rule` (a support agent applying its operator's
written rule). cant-run, no-web-tool and policy-refusal each report the messages of their kind,
so a message gets at most one refusal finding.

How: the reply's prose is read in bounded windows (features.window); a reply holding none of the
cue words (lexicons/refusal_cues.toml, in a dozen languages) is not read further. Otherwise its
sentences that hold a cue are read by a linear model over hashed words and cue tables trained on
the labelled real-text corpus (bench/train_text.py; weights: models/refusal.json). The sentence
that carries the decision, and the cue tables in it, say why.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from dataclasses import dataclass

from . import lexicon
from .features import LinearModel, bucket, hashed, text_features, window
from .prose import canonical, sentences, without_code

KINDS = ("none", "cant-run", "no-web-tool", "policy", "business-rule")
REFUSAL_KINDS = KINDS[1:]
RAW_HEAD, RAW_TAIL = 6000, 3000  # characters of a long message read at all (code is dropped from them)
MAX_CUE_SENTENCES = 6
_REST_EDGES = (1, 200, 800, 2500)
_LENGTH_EDGES = (200, 1000, 4000)

# what each ground's cue tables tell a reader, for the finding's words
GROUND_WORDS = {
    "capability": "names a missing tool, access or target", "knowledge": "names missing live or local knowledge",
    "policy": "gives a safety, ethics, law, rules or opinion ground", "business": "applies an operator's rule",
}
# the tables that say why a reply declines (the kind model reads only these: no words, so no
# language or family of the training text can stand in for the ground)
GROUNDS = ("capability", "knowledge", "policy", "business")


@dataclass(frozen=True, slots=True)
class Refusal:
    kind: str  # one of KINDS but "none"
    partial: bool  # it does part of the request and declines part
    sentence: str  # the sentence the decision rests on, as written
    cues: tuple[str, ...]  # the cue tables in that sentence (CUE_WORDS)
    margin: float  # how far the kind's score is above the runner-up's

    def why(self) -> str:
        """`names a missing tool, access or target`: what made it this kind, in words."""
        grounds = dict.fromkeys(c.split("_")[0] for c in self.cues)
        return ", ".join(GROUND_WORDS[g] for g in grounds if g in GROUND_WORDS) or "declines without giving a reason"


@dataclass(frozen=True, slots=True)
class Reading:
    """What the models read of a reply: its cue sentences and what surrounds them."""

    cue_sentences: tuple[tuple[str, tuple[str, ...]], ...]  # (sentence, cue tables)
    features: tuple[str, ...]  # the detector's: words, cue tables, position and length
    grounds: tuple[str, ...]  # the kind model's: the ground tables of the declining sentences and their neighbours'
    shape: tuple[str, ...]  # the partial model's: what the reply holds besides the decline


@functools.cache
def _automaton():
    import ahocorasick

    automaton = ahocorasick.Automaton()
    tables = lexicon.load("nomos_forensics.text", "refusal_cues")["cues"]
    for table, text in tables.items():
        for entry in lexicon.cues(text):
            found = automaton.get(entry, ())
            automaton.add_word(entry, (*found, table) if table not in found else found)
    automaton.make_automaton()
    return automaton


def _tables(text: str) -> tuple[str, ...]:
    """The cue tables whose words `text` (lower case) holds, in a fixed order."""
    seen: set[str] = set()
    for _end, tables in _automaton().iter(text):
        seen.update(tables)
    return tuple(sorted(seen))


def bounded(text: str) -> str:
    """A long message's head and tail: nothing past RAW_HEAD + RAW_TAIL characters is read."""
    return text if len(text) <= RAW_HEAD + RAW_TAIL else text[:RAW_HEAD] + "\n" + text[-RAW_TAIL:]


def read(text: str | None) -> Reading | None:
    """The models' reading of a reply, or None when no sentence of it holds a cue word."""
    if not text:
        return None
    raw = bounded(text)
    prose = window(without_code(raw))
    lowered = canonical(prose)
    if next(_automaton().iter(lowered), None) is None:
        return None
    parts = sentences(prose)
    tables_of = [_tables(canonical(s)) if n < 40 else () for n, s in enumerate(parts)]
    cued = [(parts[n], t) for n, t in enumerate(tables_of) if t][:MAX_CUE_SENTENCES]
    if not cued:
        return None
    declining = [n for n, t in enumerate(tables_of) if "inability" in t or "apology" in t]
    rest = sum(len(s) for n, s in enumerate(parts) if not tables_of[n])
    names: list[str] = []
    for sentence, tables in cued:
        names.extend(text_features(canonical(sentence)))
        names.extend(f"cue|{t}" for t in tables)
        names.extend(f"cc|{a}+{b}" for i, a in enumerate(tables) for b in tables[i + 1:])
    structure = [f"rest|{bucket(rest, _REST_EDGES)}", f"len|{bucket(len(prose), _LENGTH_EDGES)}",
                 f"ncue|{min(len(cued), 3)}"]
    if tables_of[0]:
        structure.append("pos|first")
    if tables_of[-1] and len(parts) > 1:
        structure.append("pos|last")
    if len(parts) == 1:
        structure.append("pos|only")
    if "```" in raw:
        structure.append("code|1")
    if parts[-1].endswith(("?", "？")):
        structure.append("ask|1")
    near = {m for n in declining for m in (n - 1, n, n + 1) if 0 <= m < len(parts)} or set(range(len(parts)))
    grounds = sorted({t for n in near for t in tables_of[n] if t.split("_")[0] in GROUNDS or t == "ai_self"})
    ground_names = [f"g|{g}" for g in grounds] + [f"gg|{g.split('_')[0]}" for g in grounds]
    if not any(g.split("_")[0] in GROUNDS for g in grounds):
        ground_names.append("g|no-reason")
    ground_names.extend(f"g2|{a}+{b}" for i, a in enumerate(grounds) for b in grounds[i + 1:])
    return Reading(tuple(cued), tuple(names + structure), tuple(ground_names), tuple(structure))


@functools.cache
def models() -> dict[str, LinearModel]:
    """The shipped models: `detect` (none / refusal), `kind` (among refusals) and `partial`."""
    resource = importlib.resources.files("nomos_forensics.text").joinpath("models", "refusal.json")
    data = json.loads(resource.read_text(encoding="utf-8"))
    return {name: LinearModel(value) for name, value in data.items()}


def decide(text: str | None) -> Refusal | None:
    """The refusal decision for one reply: None when it does not decline."""
    reading = read(text)
    if reading is None:
        return None
    shipped = models()
    verdict, margin = shipped["detect"].best(hashed(reading.features))
    if verdict != "refusal":
        return None
    kind = kind_of(reading.grounds)
    partial = "partial" in shipped and shipped["partial"].best(hashed(reading.shape + reading.grounds))[0] == "partial"
    sentence, tables = _deciding(reading, shipped["detect"])
    return Refusal(kind, partial, sentence, tables, margin)


# the ground that decides when a reply gives several, first first: an operator's rule is named
# on purpose; a safety, ethics, law or rules ground outweighs the means (the guide: when two
# weigh alike, policy); missing live knowledge is what "no access to current data" is about
PRIORITY = (("business", "business-rule"), ("policy", "policy"), ("knowledge", "no-web-tool"), ("capability", "cant-run"))


def kind_of(grounds: tuple[str, ...]) -> str:
    """The refusal kind the grounds read near the declining sentences give: the first of
    PRIORITY among them, else `policy` (a decline that gives no reason is a model refusal)."""
    present = {g.split("|", 1)[1].split("_")[0] for g in grounds if g.startswith("g|")}
    return next((kind for ground, kind in PRIORITY if ground in present), "policy")


def _deciding(reading: Reading, model: LinearModel) -> tuple[str, tuple[str, ...]]:
    """The cue sentence that weighs most for a refusal, read alone."""
    if len(reading.cue_sentences) == 1:
        return reading.cue_sentences[0]
    refusal = model.classes.index("refusal")
    none = model.classes.index("none")

    def weight(item: tuple[str, tuple[str, ...]]) -> float:
        sentence, tables = item
        scores = model.scores(hashed([*text_features(canonical(sentence)), *(f"cue|{t}" for t in tables)]))
        return scores[refusal] - scores[none]

    return max(reading.cue_sentences, key=weight)
