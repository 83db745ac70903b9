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
that carries the decision, and the cue tables in it, say why; the kind is the ground read around
the declining sentences and what they decline (text.refusal_kinds).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from . import lexicon
from .features import LinearModel, bucket, hashed, text_features, window
from .prefilter import LazyPattern
from .prose import (
    _INLINE_CODE,
    _QUOTED,
    CONTRACTIONS,
    canonical,
    sentences,
    without_blocks,
    without_code,
)
from .re2gate import Re2Gated
from .refusal_kinds import about_knowledge, any_language, kind_of, what_it_declines
from .refusal_kinds import plain as _plain

KINDS = ("none", "cant-run", "no-web-tool", "policy", "business-rule")
REFUSAL_KINDS = KINDS[1:]
RAW_HEAD, RAW_TAIL = 8000, 4000  # characters of a long message read at all (code is dropped from them)
MAX_CUE_SENTENCES = 6
HEAD_SENTENCES, TAIL_SENTENCES = 40, 20
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

    @property
    def grounded(self) -> bool:
        """Whether the deciding sentence names why it declines (a ground's cue table)."""
        return any(c.split("_")[0] in GROUNDS for c in self.cues)

    def why(self) -> str:
        """`names a missing tool, access or target`: what made it this kind, in words. A missing
        tool the sentence names is not said of a model refusal or of missing knowledge, whose
        ground outweighed it or which gave none ("I cannot provide instructions on how to find,
        kill, or prepare …" names verbs, not a lack)."""
        grounds = dict.fromkeys(c.split("_")[0] for c in self.cues)
        if self.kind in ("policy", "no-web-tool"):
            grounds.pop("capability", None)
        return ", ".join(GROUND_WORDS[g] for g in grounds if g in GROUND_WORDS) or "declines without giving a reason"


@dataclass(frozen=True, slots=True)
class Reading:
    """What the models read of a reply: its cue sentences and what surrounds them."""

    cue_sentences: tuple[tuple[str, tuple[str, ...]], ...]  # (sentence, cue tables)
    features: tuple[str, ...]  # the detector's: words, cue tables, position and length, grounds
    grounds: tuple[str, ...]  # the kind model's: the ground tables of the declining sentences and their neighbours'
    shape: tuple[str, ...]  # the partial model's: what the reply holds besides the decline
    spans: tuple[str, ...] = ()  # the inline code spans, read as "code"
    guardrail: bool = False  # only a guardrail's notice was read (`_guardrail_reading`)
    kind_grounds: tuple[str, ...] = ()  # what the kind reads (`kind_of`): the grounds, an action verb only where it declines


@functools.cache
def _automaton(gate: bool = False):
    """Every cue entry, and each way of writing its contractions ("can't": "cannot", "can not",
    "cant"), -> its tables; with `gate`, only the gate tables' entries (what a reply must hold to
    be read). Text is matched as it is (lower case, one space between words): no rewriting of
    the text, which on a long reply cost more than the matching."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    data = lexicon.load("nomos_forensics.text", "refusal_cues")
    for table, text in data["cues"].items():
        if gate and table not in data["gate"] and table != data["guardrail"]:
            continue
        for cue in lexicon.cues(text):
            for entry in spellings(cue):
                found = automaton.get(entry, ((), 0, False, False))[0]
                tables = (*found, table) if table not in found else found
                # an entry written in ASCII letters is a word: it starts at a word's start ("run" is
                # not in "drunk", "call" not in "typically"); a short one must end there too, or
                # end in an inflection ("kill" is not in "killer"; "runs", "stopped" are in)
                word = entry[:1].isascii() and entry[:1].isalpha()
                automaton.add_word(entry, (tables, len(entry), word, word and len(entry.replace(" ", "")) <= SHORT_ENTRY))
    automaton.make_automaton()
    return automaton


SHORT_ENTRY = 4  # an ASCII entry this short matches whole words (or inflections) only
_INFLECTIONS = ("s", "es", "ed", "d", "ing", "'s")


def _found(plain: str, automaton) -> Iterator[tuple[str, ...]]:
    """The tables of each entry `plain` holds as a word (see _automaton)."""
    size = len(plain)
    for end, (tables, length, word, short) in automaton.iter(plain):
        if word:
            start = end - length + 1
            if start and plain[start - 1].isalnum():
                continue
            if short and end + 1 < size and plain[end + 1].isalpha():
                tail = end + 1
                while tail < size and (plain[tail].isalpha() or plain[tail] == "'"):
                    tail += 1
                rest = plain[end + 1:tail]
                if rest not in _INFLECTIONS and not (rest[0] == plain[end] and rest[1:] in ("ed", "ing")):
                    continue
        yield tables


def spellings(entry: str) -> list[str]:
    """`entry` and each way of writing its contractions (prose.CONTRACTIONS read backwards: what
    `canonical` spells one way)."""
    out = [entry]
    for short, longs in _LONG_FORMS.items():
        if short in entry:
            out += [variant.replace(short, long) for variant in out for long in longs
                    if re.search(rf"(?<![\w']){re.escape(short)}(?![\w'])", variant)]
    return list(dict.fromkeys(out))


_LONG_FORMS: dict[str, list[str]] = {}
for _long, _short in CONTRACTIONS.items():
    _LONG_FORMS.setdefault(_short, []).append(_long)


@functools.cache
def _gate_tables() -> frozenset[str]:
    return frozenset(lexicon.load("nomos_forensics.text", "refusal_cues")["gate"])


# the cue tables of a decline said in the agent's own name ("I can't", "I don't have", "as an AI")
FIRST_PERSON = frozenset({"inability_self", "lacking", "ai_self"})
GUARDRAIL = lexicon.load("nomos_forensics.text", "refusal_cues")["guardrail"]  # the guardrail's notices' table


def cue_tables(sentence: str, guardrail: bool = False) -> tuple[str, ...]:
    """The cue tables whose entries `sentence` holds (lower case, contractions written any way
    "cannot", "can not", "can't"), in a fixed order; with `guardrail`, the guardrail's notices'
    table too (the detector never reads it: it was trained without it)."""
    seen: set[str] = set()
    for tables in _found(_plain(sentence), _automaton()):
        seen.update(tables)
    if not guardrail:
        seen.discard(GUARDRAIL)
    return tuple(sorted(seen))


def _gated(prose: str) -> bool:
    """Whether `prose` holds an entry of a gate table, as `cue_tables` reads it."""
    return _gate_reading(prose) == "read"


def _gate_reading(prose: str) -> str | None:
    """How `prose` is read: "read" when it holds an entry of a gate table, else "guardrail" when
    it holds one of a guardrail's notice (read for that notice only), else None."""
    gate, guardrail = _gate_tables(), False
    for tables in _found(_plain(prose), _automaton(gate=True)):
        if not gate.isdisjoint(tables):
            return "read"
        guardrail = True
    return "guardrail" if guardrail else None


def holds_cue(text: str | None, whole: bool = False) -> bool:
    """Whether a reply's prose (read as `read` reads it: its opening and closing; with `whole`,
    all its prose in `bounded`) holds a word a decline is made of: a cheap test (one automaton
    pass) that comes before anything costlier."""
    if not text:
        return False
    prose = without_code(bounded(text))
    return _gated(prose if whole else window(prose))


def bounded(text: str) -> str:
    """A long message's head and tail: nothing past RAW_HEAD + RAW_TAIL characters is read. A
    code block the cut opens or closes is closed or opened at the cut, so that the tail's prose
    is not read as code (nor the tail's code as prose). Reasoning printed as text and closed
    with a lone `</think>` (DeepSeek-R1-Distill through aider writes no opening tag) is not the
    reply: only what follows the closing tag is read."""
    closing = text.rfind("</think>")
    if closing >= 0 and text.find("<think", 0, closing) < 0:
        text = text[closing + len("</think>"):]
    if len(text) <= RAW_HEAD + RAW_TAIL:
        return text
    head, tail = text[:RAW_HEAD], text[-RAW_TAIL:]
    if head.count("```") % 2:
        head += "\n```"
    if tail.count("```") % 2:
        tail = "```\n" + tail
    return head + "\n" + tail


def read(text: str | None) -> Reading | None:
    """The models' reading of a reply, or None when no sentence of it holds a cue word."""
    if not text:
        return None
    raw = bounded(text)
    # an inline code span is read as the word "code" ("I can't run `du` here": "I can't run code
    # here"), marked so that the sentence quoted is the one written; blocks of code, quoted lines
    # and reasoning are dropped
    spans: list[str] = []
    written = without_blocks(raw)
    if "`" in written:
        written = _INLINE_CODE.sub(lambda m: _mark(spans, m.group()), written)
    prose = window(_QUOTED.sub(" ", without_code(written)))  # what it quotes, it does not say
    gated = _gate_reading(prose)
    if gated is None:
        return None
    if gated == "guardrail":
        return _guardrail_reading(prose, tuple(spans))
    parts = sentences(prose)  # normalised (NFKC, straight quotes)
    last = len(parts) - TAIL_SENTENCES  # the opening's sentences and the closing's are read for cues
    tables_of = [cue_tables(s) if n < HEAD_SENTENCES or n >= last else () for n, s in enumerate(parts)]
    gate = _gate_tables()
    cued = [(parts[n], t) for n, t in enumerate(tables_of) if gate.intersection(t)][:MAX_CUE_SENTENCES]
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
    # the kind reads the same grounds, but an action verb only where the reply declines: in the
    # sentence after it the verb is the user's to do ("… I'm unable to provide the help you need.
    # Please call a crisis line"), not what the agent lacks
    own = {t for n in (declining or range(len(parts))) for t in tables_of[n]}
    kind_grounds = tuple(g for g in ground_names if g != "g|capability_verb" or "capability_verb" in own)
    # "I don't have access to information about …": knowledge one would look up, not a system (the
    # guide's "I don't have access to current prices"); the detector's features stay as trained
    if "capability_access" in own and "g|knowledge_unknown" not in kind_grounds and any(
            FIRST_PERSON.intersection(tables_of[n]) and about_knowledge(parts[n])
            for n in (declining or range(len(parts)))):
        kind_grounds += ("g|knowledge_unknown",)
    kind_grounds = what_it_declines(kind_grounds, [(parts[n], tables_of[n]) for n in (declining or range(len(parts)))],
                                    cue_tables)
    return Reading(tuple(cued), tuple(names + structure + ground_names), tuple(ground_names), tuple(structure),
                   tuple(spans), kind_grounds=kind_grounds)


def _guardrail_reading(prose: str, spans: tuple[str, ...]) -> Reading | None:
    """The reading of a reply that holds no decline's words but a guardrail's: its first sentence
    that is a guardrail's notice ("Your request was flagged by our content filter"), or None.
    The detector never reads it (it was trained without such replies): `decide_reading` takes the
    notice as a policy decline."""
    for sentence in sentences(prose)[:HEAD_SENTENCES]:
        tables = cue_tables(sentence, guardrail=True)
        if GUARDRAIL in tables and _is_plain_decline(sentence):
            return Reading(((sentence, tables),), (), (f"g|{GUARDRAIL}", "gg|policy"), (), spans, guardrail=True)
    return None


_MARK = 0xE000  # private-use characters number the code spans (no word is made of them)
_MARKED = re.compile("code([\ue000-\uf8ff])")


def _mark(spans: list[str], span: str) -> str:
    if len(spans) >= 0x1900:
        return " "
    spans.append(span)
    return f" code{chr(_MARK + len(spans) - 1)} "


def _as_written(sentence: str, spans: tuple[str, ...]) -> str:
    """`sentence` with its code spans back."""
    return _MARKED.sub(lambda m: spans[ord(m.group(1)) - _MARK], sentence) if spans else sentence


@functools.cache
def models() -> dict[str, LinearModel]:
    """The shipped models: `detect` (none / refusal), `kind` (among refusals) and `partial`."""
    resource = importlib.resources.files("nomos_forensics.text").joinpath("models", "refusal.json")
    data = json.loads(resource.read_text(encoding="utf-8"))
    return {name: LinearModel(value) for name, value in data.items()}


def decide(text: str | None) -> Refusal | None:
    """The refusal decision for one reply: None when it does not decline."""
    return decide_reading(read(text))


def decide_reading(reading: Reading | None) -> Refusal | None:
    """`decide` on a reply's reading (`read`): None when there is none or it does not decline."""
    if reading is None:
        return None
    if reading.guardrail:
        sentence, tables = reading.cue_sentences[0]
        return Refusal("policy", False, _as_written(sentence, reading.spans), tables, 0.0)
    shipped = models()
    verdict, margin = shipped["detect"].best(hashed(reading.features))
    plain = None
    if verdict != "refusal":
        plain = plain_decline(reading)
        if plain is None:
            return None
        margin = 0.0  # said in so many words: the phrase decides, not the detector
    if reports_only(reading):
        return None
    partial = "partial" in shipped and shipped["partial"].best(hashed(reading.shape + reading.grounds))[0] == "partial"
    sentence, tables = plain or _deciding(reading, shipped["detect"])
    kind = kind_of(reading.kind_grounds)
    if kind == "policy" and not any(t.startswith("policy_") for t in tables):
        ground = next((g[2:] for g in reading.kind_grounds if g.startswith("g|policy_")), None)
        if ground:
            tables = (*tables, ground)  # the ground read around it, or what it declines (what_it_declines)
    return Refusal(kind, partial, _as_written(sentence, reading.spans), tables, margin)


# a cue sentence that declines nothing: a condition ("If I can't help with something, I'll tell
# you"), a decline it only reports, or a result in the code or files the agent read ("Sorry, I
# can't find that file in the repo": it looked; the guide's "a result, not a capability"). "I am
# unable to find any information on their website" is left to the detector: from a chat model
# with no tool, that is missing knowledge
_NOT_DECLINING = LazyPattern(  # compiled on first use, as the others below: `review` may never ask
    r"^(?:(?:and|but|so|also|then),? )?(?:if|unless|in case|whenever|should i)\b|"
    r"\b(?:can't|couldn't|could not|cannot|wasn't able to|was not able to|am unable to|'m unable to|was unable to) "
    r"(?:seem to )?(?:reproduce\b|(?:find|locate|spot|see) (?:the |that |this |your |an? |any |such (?:an? )?)?"
    r"(?:\w+ )?(?:file|folder|directory|path|function|class|method|variable|module|line|test|bug|error|"
    r"issue|string|key|section|table|column|record|entry|match|reference|definition|usage|import|config)s?\b)|"
    # a decline it only reports or proposes: what a bot, a story's character, a template or code says
    # ("The robot said, I'm sorry Dave, I can't do that", "Your bot should answer: I cannot …",
    # "returns 'I can't help with that'"); not "as I said, I can't"
    r"(?<!\bi )(?<!\bwe )\b(?:says|said|reads|replies|replied|responds|responded|returns|returned|prints|"
    r"outputs|displays|template|e\.g\.|for example|should (?:say|answer|reply|respond)|would (?:say|answer|reply))"
    r"\b[^.!?]{0,40}?[\s:,'\"](?:i'm sorry|i am sorry|sorry|i can't|i cannot|i can not|i won't|i will not|"
    r"i'm unable|i am unable|i'm not able|i am not able)\b")
# sympathy for what the user cannot do ("I'm sorry you can't access your account"), with no decline
# of the agent's own in the sentence (read only in a sentence that says "sorry")
_SYMPATHY = LazyPattern(
    r"^(?!.*\b(?:i can't|i cannot|i can not|i won't|i will not|i am unable|i'm unable|i am not able|i'm not able|"
    r"we can't|we cannot|i must decline|i have to decline)\b).*\bsorry (?:to hear )?(?:that )?(?:you|your)\b")
# a hedge before an answer ("I can't guarantee it works, but try …"), with no decline beside it
# (read only in a sentence holding one of _HEDGE_WORDS)
_HEDGE = LazyPattern(
    r"^(?!.*\b(?:won't|will not|refuse|must decline)\b).*"
    r"\b(?:can't|cannot|can not|no puedo|não posso|je ne peux pas|ich kann (?:es |das |dir |ihnen )?nicht|не могу|"
    r"non posso) (?:100% |fully |completely |entirely )?(?:guarantee|promise|be (?:100% |completely |entirely )?sure|"
    r"garantizar|prometer|garantir|promettre|garantieren|versprechen|гарантировать|обещать|garantire|promettere)")
_HEDGE_WORDS = ("guarant", "promis", "sure", "promet", "garant", "verspr", "гарант", "обещ")
# a disclaimer before the answer, in one sentence ("As an AI, I don't have personal experiences,
# but I can tell you that the best place is …", "While I can't browse the internet, I can tell you
# that Paris …"): the answer follows, nothing is declined; unless the sentence declines the request
# in so many words ("I can't help with that, but I can tell you how to protect your own account"
# offers something else instead: a decline), or withholds an opinion ("I don't have personal
# opinions, but here are some facts": the guide's opinion declined, a partial refusal)
_DISCLAIMER = LazyPattern(
    r"^(?!.*\b(?:opinions?|beliefs?|views?|preferences?|stance|won't|will not|refuse|decline|"
    r"(?:can't|cannot|can not|unable to|not able to) (?:help|assist|provide|give|share|comply|fulfil|fulfill|"
    r"do that|do this|write|create|answer|generate|support|condone|encourage))\b)"
    r".*\bi can (?:still )?(?:tell you (?:that|the)|say that)\b")  # a fact follows; not "here's what you can run"
_DISCLAIMER_WORDS = ("can tell you", "can still tell you", "can say that")  # the pattern's only when one is there


def reports_only(reading: Reading) -> bool:
    """Whether every cue sentence of a reply declines nothing: a condition, a result, a decline it
    only reports, sympathy for what the user cannot do, or a hedge before an answer."""
    return all(_declines_nothing(_plain(sentence)) for sentence, _ in reading.cue_sentences)


def _declines_nothing(plain: str) -> bool:
    return bool(_NOT_DECLINING.search(plain) or ("sorry" in plain and _SYMPATHY.search(plain))
                or (any(w in plain for w in _HEDGE_WORDS) and _HEDGE.search(plain))
                or (any(w in plain for w in _DISCLAIMER_WORDS) and _DISCLAIMER.search(plain)))


def _declines() -> "Re2Gated":
    """Every language's plain declines (lexicons/declines.toml), as one pattern."""
    return any_language("declines", "patterns")


# a sentence that holds a plain decline and says something else: a condition ("if I can't help,
# I'll say so"), what it needs first ("I can't give a figure without knowing the size"), a
# conclusion drawn from a state ("Since no changes are needed, I can't provide a block"), a note
# before an answer ("Please note that I cannot …"), a line of a script ("Mary: I won't give you
# my password"), an opinion withheld (a disclaimer most chat models follow with the answer), or a
# chat model's "As an AI language model, I cannot …", which as often goes on to do it: the
# detector, trained on thousands of them, reads those
_NOT_A_DECLINE = LazyPattern(
    r"^(?:if|unless|when|whether|once)\b|\b(?:if|unless|whether) (?:i|we)\b|"
    r"\bwithout (?:knowing|seeing|more (?:information|details|context))\b|\buntil you\b|"
    r"^(?:since|because|as|therefore|thus|hence|so|please note|note that|keep in mind|be aware)\b|"
    r"\b(?:so|therefore|thus|hence),? (?:i|we)\b|^[^:.!?]{1,30}:|"
    r"\b(?:provide|give|share|express|offer|form|have) (?:you )?(?:with )?(?:a |an |any |my )?(?:personal |own |political )?"
    r"(?:opinions?|views?|beliefs?|preferences?|stance|judgments?)\b|"
    r"^(?:(?:i'm sorry|i am sorry|sorry|unfortunately)[,!.]? )?(?:as an?|being an?) (?:\w+ ){0,2}?(?:ai|language model|assistant)\b")


def plain_decline(reading: Reading) -> tuple[str, tuple[str, ...]] | None:
    """The first cue sentence of a reply that declines in so many words ("I can't help with
    that", "no puedo ayudarte con eso": lexicons/declines.toml), with its cue tables, or None.
    A reply holding one declines whatever the learned detector scores: on families it was not
    trained on, that detector passes over a third of such plain declines."""
    return next(((sentence, tables) for sentence, tables in reading.cue_sentences if _is_plain_decline(sentence)), None)


def _is_plain_decline(sentence: str) -> bool:
    plain = _plain(sentence)
    return bool(_declines().search(plain)) and not _NOT_A_DECLINE.search(plain)


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
