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
import unicodedata
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
