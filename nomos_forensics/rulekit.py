"""The toolkit for rule authors: everything a rule needs, from one documented module.

The built-in rules import nothing else from nomos-forensics, so a plugin can do all that they
do. What is here is a stable API; the modules behind it are not.

- Rules: `Rule`, `Option`, `Severity`, `Need`, `Finding`, `Evidence`, `RuleContext`, `hookimpl`.
- The session model: `Session`, `SessionInfo`, `Message`, `ToolCall`, `ToolResult`, `Turn`, and
  `Session.ending` (an `Ending`: how the conversation stops, with the kinds below).
- Text: `prose` (code, reasoning and quoted lines removed), `sentences`, `canonical`
  (contractions spelled one way), `normalise`, `excerpt`, `quote_from`, `human_bytes`,
  `parse_timestamp`.
- Reading replies: `replies` (assistant messages that answer in text), `acts` (a message calls a
  tool, or is a text-protocol agent's "THOUGHT: …" step with its command block), `first_sentence`,
  `statements` (a reply's sentences that state something, ready for phrase patterns), and
  `refusals` (each assistant message that declines, with its one `Refusal`: kind, partial, the
  sentence it rests on and why; text.refusal's learned decision, shared by every rule);
  `acting_claim` (in a message that calls a tool, a claim that names what is missing),
  `declined(hits)` (the parts a refusal finding shares: quotes, partial, data.messages),
  `cued` (whether `refusals` read a reply past its gate: it holds a word declines are made of),
  `holds_cue` (the same test for any text), `cue_tables` (which refusal cue tables a sentence holds: inability, lacking, policy_harm, …)
  and `bounded` (the head and tail of a long message: all that a text rule should read).
- Reading the record and the user: `results_of` (each tool result a message holds, with whether
  it failed), `failed_row` (a `tool` row failed: its error flag, or an output that opens as an
  error), `is_finishing` (a call that ends the task: complete_task or a submit step),
  `failed_action` (a failure of that tool is a failed action: not a coding shell's
  probe, not the user declining a question tool), `SUCCESS_CLAIM` and `ADMITS` (the patterns the
  Outcome reads a final answer with), `frustration` (text.frustration's model of a user message),
  `failure_signature` (what `scan` groups an unexplained failure by: how it ended, the last
  reply's shape, the last tool error; the rule skeletons of docs/unexplained.md test it).
- Fast matching: `AnyPattern`, `AnySubstring`, `WordGates`, `letter_first`, `any_token` (exact word prefilters),
  `literal_first` (the same pattern, rewritten so the regex engine skips to where a match can start),
  `Re2Gated` (RE2 rules an ASCII text out before Python's re searches: the same result, for a big
  alternation read over long texts).
- Data and language: `lexicon` (word lists and patterns kept in TOML files), `language`
  (offline language identification: `language.detect`, `language.profile`,
  `language.LANGUAGE_NAMES`, …).
- Testing: `nomos_forensics.testing` (`session_from_case` in memory, `insert_case` and
  `review_case` against a real database).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .ending import (
    ADMITS,
    ANSWERED,
    BLANK,
    COMPLETED,
    EMPTY,
    ERROR,
    HANDED_OFF,
    SUCCESS_CLAIM,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Ending,
)
from .hookspecs import hookimpl
from .model import Message, Session, SessionInfo, ToolCall, ToolResult, Turn, excerpt, parse_timestamp
from .render import human_bytes
from .rounds import ASKING_TOOLS, SHELL_TOOLS, failed_action, failed_row, is_finishing, results_of
from .rule import Evidence, Finding, Need, Option, Rule, RuleContext, Severity
from .text import claims, closings, frustration, language, lexicon
from .text.claims import acting_claim
from .text.prefilter import AnyPattern, AnySubstring, WordGates, any_token, letter_first, literal_first
from .text.prose import canonical, normalise, sentences, statements
from .text.prose import without_code as prose
from .text.re2gate import Re2Gated
from .text.refusal import FIRST_PERSON, Refusal, about_knowledge, bounded, cue_tables, decide_reading, holds_cue
from .text.refusal import read as read_reply
from .unexplained import failure_signature

__all__ = [
    "ADMITS", "ASKING_TOOLS", "SHELL_TOOLS", "failed_action", "failed_row", "is_finishing", "results_of", "SUCCESS_CLAIM", "ANSWERED", "BLANK", "COMPLETED", "EMPTY", "ERROR", "HANDED_OFF", "TOOL_CALL", "TOOL_RESULT", "USER",
    "AnyPattern", "AnySubstring", "Re2Gated", "Ending", "Evidence", "Finding", "Message", "Need", "Option", "Rule", "RuleContext",
    "Session", "SessionInfo", "Severity", "ToolCall", "ToolResult", "Turn", "WordGates", "failure_signature",
    "any_token", "bounded", "closings", "frustration", "canonical", "cue_tables", "holds_cue", "excerpt", "first_sentence", "hookimpl", "human_bytes", "language", "letter_first", "literal_first",
    "lexicon", "normalise", "parse_timestamp", "prose", "quote_from", "CLAIMED", "Declined", "Refusal", "declined", "acting_claim", "acts", "cued", "refusals", "replies", "sentences",
    "statements",
]


# a step of an agent that acts in text (mini-swe-agent, SWE-agent): "THOUGHT: …" then the command
# in a fenced block, which the harness runs; its words are the agent's reasoning, not said to the user
_TEXT_STEP = re.compile(r"\s*(?:thought|discussion)\s*:", re.IGNORECASE)


def acts(message: Message) -> bool:
    """The message acts: it calls a tool, or it is a text-protocol agent's step (it opens with
    "THOUGHT:" and holds a fenced command block; a step the harness rejected for its format, two
    blocks where one was asked, is still a step)."""
    if message.tool_calls:
        return True
    text = message.text
    return bool(text) and "```" in text and _TEXT_STEP.match(text) is not None


def replies(session: Session) -> Iterator[Message]:
    """The assistant messages that answer in text without acting (`acts`): where an agent says
    what it can or cannot do (a message that goes on to call a tool acted, whatever it said)."""
    for message in session.messages:
        if message.role == "assistant" and message.has_text and not acts(message):
            yield message


_CAPABILITY = frozenset({"capability_access", "capability_act", "capability_verb"})
CLAIMED = ("capability_claim",)
_OTHER_GROUNDS = ("policy_", "business_", "knowledge_")


def _other_ground(reading) -> bool:
    """Whether the sentences around a reply's declines name a policy, an operator's rule or
    missing knowledge (then the model's kind stands, whatever a claim says)."""
    return any(g.startswith("g|") and g[2:].startswith(_OTHER_GROUNDS) for g in reading.grounds)


def _names_a_capability(sentence: str) -> bool:
    """A claim sentence the model's reading does not overrule: it names a capability, and neither
    another ground, nor a chat model's "As an AI, I don't have …" disclaimer (which the model,
    trained on thousands of them, reads right: most go on to answer), nor access to knowledge
    ("I don't have access to information about them": what one would look up, not a system)."""
    tables = cue_tables(sentence)
    return (bool(_CAPABILITY.intersection(tables)) and not any(t.startswith(_OTHER_GROUNDS) for t in tables)
            and not ("ai_self" in tables and _DISCLAIMER.match(normalise(sentence).lower()))
            and not about_knowledge(sentence))


# a chat model's opening disclaimer ("As an AI language model, I don't have …", "I'm sorry, as an AI …")
_DISCLAIMER = re.compile(r"(?:(?:i'm sorry|i am sorry|sorry|unfortunately|however|but|well)[,!.]?\s+)?"
                         r"(?:as an?|i'm an?|i am an?|being an?)\s+(?:\w+\s+){0,2}?"
                         r"(?:ai|language model|chatbot|assistant|artificial intelligence)\b")


def refusals(session: Session) -> list[tuple[Message, Refusal]]:
    """Every reply (`replies`: it calls no tool) that declines, in order, with its refusal decision
    (one per message, so that the refusal rules never give one message two kinds). Decided once
    per session, whichever rule asks first: text.refusal's model, and where it passed over a reply
    that holds a decline's cue words, or read it as declining for no reason, the capability-claim
    reading (text.claims: an agent saying in passing that it lacks the means, "Since I can't run
    the build, I'll assume it passes") makes it cant-run."""
    cached = session.__dict__.get("_refusals")
    if cached is None:
        cued, cached = set(), []
        for message in replies(session):
            text = bounded(message.text)
            reading = read_reply(text)
            if reading is not None:
                cued.add(id(message))
            found = decide_reading(reading)
            if found is not None and found.kind == "no-web-tool" and claims.asks_meaning(found.sentence):
                found = None  # "I don't know what you mean": it asks the user to clarify
            if found is not None and found.kind == "cant-run" and (
                    not FIRST_PERSON.intersection(found.cues) or claims.not_a_claim(text, found.sentence)):
                found = None  # about a third party, waiting for the user's files, about code, …: read on
            # the model reads a reply's opening and closing; a claim may sit anywhere in its first
            # and last thousands of characters (`bounded`)
            if (found is None or (found.kind != "cant-run" and not _other_ground(reading))) and (
                    reading is not None or claims.may_claim(text) or holds_cue(text, whole=True)):
                # only a claim that names a capability and no other ground ("I can't run commands
                # from here"; not "I can't help with that", nor "I can't look that up online")
                claim = claims.first_claim(text, accept=_names_a_capability) if claims.worth_reading(text) else None
                if claim is not None:
                    found = Refusal("cant-run", False, claim, CLAIMED, 0.0)
            if found is not None:
                cached.append((message, found))
        session.__dict__["_refusals"], session.__dict__["_cued"] = cached, cued
    return cached


@dataclass(frozen=True)
class Declined:
    """What a refusal rule's finding says of its messages (`declined(hits)`)."""

    quoted: list[tuple[Message, str]]  # each message and its deciding sentence as written
    partial: bool  # every one of them declines only in part
    count: str  # "2 messages, in part"
    messages: list[dict]  # data.messages: id, kind, partial, why

    @property
    def first(self) -> str:
        return self.quoted[0][1]


def declined(hits: list[tuple[Message, Refusal]]) -> Declined:
    """The shared parts of a refusal finding, from its (message, Refusal) pairs."""
    partial = all(found.partial for _, found in hits)
    return Declined(
        quoted=[(message, quote_from(message.text, found.sentence)) for message, found in hits],
        partial=partial,
        count=f"{len(hits)} message{'s' if len(hits) > 1 else ''}{', in part' if partial else ''}",
        messages=[{"message_id": m.id, "kind": f.kind, "partial": f.partial, "why": f.why()} for m, f in hits],
    )


def cued(session: Session, message: Message) -> bool:
    """Whether a reply holds a cue word of a decline (text.refusal's gate): what `refusals` read
    past its gate. A reply without one is no refusal, whatever a rule's own reading says."""
    refusals(session)
    return id(message) in session.__dict__["_cued"]


def first_sentence(text: str, claim: Callable[[str], bool]) -> str | None:
    """The first sentence of `text`'s prose (see `sentences`) for which `claim` holds."""
    return next((s for s in sentences(text) if claim(s)), None)




def quote_from(text: str, sentence: str) -> str:
    """`sentence` as the author wrote it in `text` (inline code kept, white space folded), from
    where it starts to the end of the text; the normalised sentence when it cannot be found.

    `sentence` is read from prose (`sentences`: inline code, markdown markers out, quotes
    straightened), so its first words are looked for among the words of `text` outside inline
    code: "Since `sudo` requires a password" is found from "Since requires a password"."""
    flat = " ".join(text.split())
    head = [unicodedata.normalize("NFKC", w).lower() for w in _WORD.findall(sentence)][:3]
    if not head:
        return sentence
    blanked = _CODE_SPAN.sub(lambda m: " " * len(m.group()), flat)  # same length: positions hold
    words = [(m.start(), unicodedata.normalize("NFKC", m.group()).lower()) for m in _WORD.finditer(blanked)]
    for index in range(len(words) - len(head) + 1):
        if all(words[index + k][1] == head[k] for k in range(len(head))):
            return flat[_opening(flat, words[index][0]):]
    return sentence


_WORD = re.compile(r"\w+")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _opening(flat: str, start: int) -> int:
    """`start` moved back over the quote marks, brackets or inline code that open its sentence
    ("`make` fails" is found at "fails")."""
    while start and flat[start - 1] in "\"'“‘«(*_":
        start -= 1
    before = flat[:start].rstrip()
    if before.endswith("`"):
        code = before.rfind("`", 0, len(before) - 1)
        if code >= 0 and (code == 0 or flat[:code].rstrip()[-1:] in (".", "!", "?", ":", ";", "")):
            return code
    return start
