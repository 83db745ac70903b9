"""The toolkit for rule authors: everything a rule needs, from one documented module.

The built-in rules import nothing else from nomos-forensics, so a plugin can do all that they
do. What is here is a stable API; the modules behind it are not.

- Rules: `Rule`, `Option`, `Severity`, `Need`, `Finding`, `Evidence`, `RuleContext`, `hookimpl`.
- The session model: `Session`, `SessionInfo`, `Message`, `ToolCall`, `ToolResult`, `Turn`, and
  `Session.ending` (an `Ending`: how the conversation stops, with the kinds below).
- Text: `prose` (code, reasoning and quoted lines removed), `sentences`, `canonical`
  (contractions spelled one way), `normalise`, `excerpt`, `quote_from`, `human_bytes`,
  `parse_timestamp`.
- Reading replies: `replies` (assistant messages that answer in text), `first_sentence`, and
  `statements` (a reply's sentences that state something, ready for phrase patterns).
- Fast matching: `AnyPattern`, `AnySubstring`, `WordGates`, `letter_first`, `any_token` (exact word prefilters),
  `literal_first` (the same pattern, rewritten so the regex engine skips to where a match can start).
- Data and language: `lexicon` (word lists and patterns kept in TOML files), `language`
  (offline language identification: `language.detect`, `language.profile`,
  `language.LANGUAGE_NAMES`, …).
- Testing: `nomos_forensics.testing` (`session_from_case` in memory, `insert_case` and
  `review_case` against a real database).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .ending import (
    ANSWERED,
    BLANK,
    COMPLETED,
    EMPTY,
    ERROR,
    HANDED_OFF,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Ending,
)
from .hookspecs import hookimpl
from .model import Message, Session, SessionInfo, ToolCall, ToolResult, Turn, excerpt, parse_timestamp
from .render import human_bytes
from .rule import Evidence, Finding, Need, Option, Rule, RuleContext, Severity
from .text import language, lexicon
from .text.prefilter import AnyPattern, AnySubstring, WordGates, any_token, letter_first, literal_first
from .text.prose import canonical, normalise, sentences
from .text.prose import without_code as prose

__all__ = [
    "ANSWERED", "BLANK", "COMPLETED", "EMPTY", "ERROR", "HANDED_OFF", "TOOL_CALL", "TOOL_RESULT", "USER",
    "AnyPattern", "AnySubstring", "Ending", "Evidence", "Finding", "Message", "Need", "Option", "Rule", "RuleContext",
    "Session", "SessionInfo", "Severity", "ToolCall", "ToolResult", "Turn", "WordGates",
    "any_token", "canonical", "excerpt", "first_sentence", "hookimpl", "human_bytes", "language", "letter_first", "literal_first",
    "lexicon", "normalise", "parse_timestamp", "prose", "quote_from", "replies", "sentences", "statements",
]


def replies(session: Session) -> Iterator[Message]:
    """The assistant messages that answer in text without calling a tool: where an agent says
    what it can or cannot do (a message that goes on to call a tool acted, whatever it said)."""
    for message in session.messages:
        if message.role == "assistant" and message.has_text and not message.tool_calls:
            yield message


def first_sentence(text: str, claim: Callable[[str], bool]) -> str | None:
    """The first sentence of `text`'s prose (see `sentences`) for which `claim` holds."""
    return next((s for s in sentences(text) if claim(s)), None)


_QUOTED = re.compile(r'"[^"]{0,200}"|“[^”]{0,200}”|«[^»]{0,200}»')


def statements(text: str) -> Iterator[tuple[str, str]]:
    """(sentence, plain) for each prose sentence of `text` that is not a question: `plain` is
    the sentence with quoted strings removed (what the agent quotes, it does not claim) and
    contractions spelled one way (`canonical`), which is what claim patterns are written against."""
    for sentence in sentences(text):
        if sentence.rstrip().endswith(("?", "？")):
            continue
        quoted = '"' in sentence or "“" in sentence or "«" in sentence
        yield sentence, canonical(_QUOTED.sub(" ", sentence) if quoted else sentence)


def quote_from(text: str, sentence: str) -> str:
    """`sentence` as the author wrote it in `text` (inline code kept, white space folded), from
    where it starts to the end of the text; the normalised sentence when it cannot be found."""
    flat = " ".join(text.split())
    head = " ".join(sentence.split()[:3])
    start = flat.lower().find(head.lower()) if head else -1
    return flat[start:] if start >= 0 else sentence
