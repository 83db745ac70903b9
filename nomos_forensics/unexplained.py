"""Unexplained failures: the sessions that went wrong and that no rule explains, grouped by what
they share, in bounded memory and mergeable exactly across `--jobs` and shards.

A session is *unexplained* when its Outcome is failed, partial or unknown and no finding of
severity friction or above explains it. Its *signature* is computed from the database alone:
how the conversation ended (the step of the Outcome decision that applied), the shape of the
agent's last reply, and, when the last turn's last tool result is an error (or the ending is an
error card), the tool and the error's first words with numbers, ids, paths and quotes masked.
Sessions with one signature form a group; each group keeps exact counts and a bottom-k sample
of its sessions (the k smallest hashes of their ids), so that any partition of the sessions,
merged in any order, gives the same groups and the same examples (scan/groups.py keeps them).
Docs: docs/unexplained.md.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from typing import Any

from .ending import ADMITS, SUCCESS_CLAIM
from .model import Message, Session, excerpt
from .rounds import failed_row
from .rule import Severity

FAILURE_OUTCOMES = ("failed", "partial", "unknown")
EXPLAINED_AT = Severity.FRICTION  # a finding at or above this severity explains a failure
LEFT_OUT = {"still-running": "still running (status active, last message recent)",
            "unreadable": "its rows could not be read (the card's errors say why)"}
SAMPLE = 8  # sessions kept per group (bottom-k by hash): the examples and the topic words
EXAMPLES = 3
MIN_GROUP = 3  # a group of fewer sessions is shown as "ungrouped"
QUOTE = 160

# How the conversation ended: Verdict.kind -> words for the description.
ENDINGS = {
    "no-user-message": "no user message: nothing was asked (a sub-agent run stored without its prompt?)",
    "status-failed": "the session's status is failed",
    "no-reply": "the request never got a reply",
    "record-blocker": "an action was blocked or denied in the last turn and nothing followed",
    "ends-error": "ends on an error card",
    "ends-blank": "ends on a blank reply",
    "ends-user": "ends on a user message nobody answered",
    "ends-cut-off": "the user cut the last reply off",
    "ends-tool-result": "stops after a tool result, with no reply",
    "ends-tool-call": "stops on a tool call that never got a result",
    "user-stopped": "the user stopped the agent mid-turn (the client logged it)",
    "cancelled": "cancelled before the task was completed",
    "change-not-applied": "the client reports the last change was not applied",
    "change-undone": "the user undid the last turn's change",
    "says-unable": "the final words say the agent could not do it",
    "says-unable-after-work": "the agent did work, then its final words say it could not do part of it",
    "submitted-saying-unable": "the run submitted its work, though its final words say it could not do part of it",
    "waiting-for-user": "ends waiting for the user to supply something, nothing done",
    "caveat": "the final words admit the result is incomplete or unverified",
    "doubts": "the last turn admits more than once the result is not verified",
    "record-finding": "finished, with a record finding",
    "asks-question": "ends with the agent asking the user a question",
    "asks-leave": "ends with the agent asking leave to do what it was asked",
    "asks-for": "ends with the agent asking the user for what it needs to go on",
    "announces-next-step": "the last reply announces a next step the agent never took",
    "came-up-empty": "the last turn's lookups found nothing and the reply hands a question back",
    "claim-contradicted": "claims success right after a failed tool call",
    "reports-failure": "the last call failed and the final answer says so",
    "still-failing": "the user's last requests say it still does not work, and no reply says it was fixed",
}

# The shape of the agent's last reply in the last turn: a question (its end), a promise, a
# problem (an error, an inability or an apology for one), a claim of success, or a statement.
_PROBLEM = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|unfortunately|regret|error|failed|fails|failing|could(?:n['’]t| not)|"
    r"can(?:not|['’]t| not)|unable|not able to|not possible|do(?:n['’]t| not) have (?:the ability|access|permission)|"
    r"does(?:n['’]t| not) work|did(?:n['’]t| not) work|issue persists)\b|lo siento|lamentablemente|désolée?|"
    r"malheureusement|leider|entschuldig|извин|к сожалению|ошибк|не удалось|не могу|抱歉|对不起|很遗憾|错误|失败|"
    r"無法|无法|申し訳|すみません|できません", re.I)
_PROMISE = re.compile(r"\b(?:i(?:'ll| will)|let me|i(?:'m| am) going to|give me a (?:moment|minute|second)|"
                      r"one moment)\b|\bwill (?:get back|follow up|check|look into)\b", re.I)
SHAPES = {
    "none": "the agent wrote no reply in the last turn",
    "question": "the agent's last reply asks a question",
    "presence-check": "the agent's last reply asks whether the user is still there",
    "greeting": "the agent's last reply greets the user and asks how it can help, as if the chat had just begun",
    "promise": "the agent's last reply promises to do something next",
    "problem": "the agent's last reply reports a problem",
    "claim": "the agent's last reply says the task is done",
    "statement": "",
}

_MASKS = (
    (re.compile(r"\b\w+://\S+"), "<url>"),
    (re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"), "<email>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.~@-]+){2,}[\\/]?"), "<path>"),
    (re.compile(r"\b(?=[0-9a-f-]*\d)[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.I), "<id>"),
    (re.compile(r"\d+(?:[.,:_/-]\d+)*"), "<n>"),
    (re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|`[^`\n]{1,80}`|«[^»\n]{1,80}»"), "<q>"),
)
_ERROR_WORDS = 5
QUOTED = re.compile(r'"([^"]+)"')  # what an Outcome reason quotes
_WORD = re.compile(r"[^\W\d_]{4,}")
_STOP = frozenset(
    "that this with have from your what when where which there their would could should about please into "
    "them they then than will just like want need help also some more make sure know does here were been "
    "only other over very after before because while these those each much many such able using used".split())


@dataclass(frozen=True)
class Signature:
    """What an unexplained failure is grouped by."""

    ending: str  # Verdict.kind: which step of the Outcome decision applied
    shape: str  # SHAPES: the agent's last reply
    tool: str | None = None  # the tool whose result, the last of the last turn, is an error
    error: str | None = None  # that error's (or the error card's) first words, masked
    chat: bool = False  # asks-question in a session with no tool call at all: a conversation, not a tool agent

    @property
    def key(self) -> str:
        return "|".join((self.ending, self.shape, "chat" if self.chat else "agent", self.tool or "",
                         self.error or ""))

    @property
    def id(self) -> str:
        """Eight hex digits naming the group in the config file (`[unexplained] mute`)."""
        return hashlib.sha1(self.key.encode("utf-8")).hexdigest()[:8]

    def describe(self) -> str:
        parts = [ENDINGS.get(self.ending, self.ending)]
        if SHAPES.get(self.shape) and (self.ending, self.shape) not in _SAID_BY_ENDING:
            parts.append(SHAPES[self.shape])
        if self.chat:
            parts.append("a conversation without tool calls")
        if self.error is not None:
            parts.append(f"last tool `{self.tool}` errored with `{self.error} …`" if self.tool
                         else f"the error says `{self.error} …`")
        return "; ".join(parts)

    @classmethod
    def from_key(cls, key: str) -> "Signature":
        ending, shape, kind, tool, error = (key.split("|", 4) + ["", "", "", "", ""])[:5]
        return cls(ending, shape, tool or None, error or None, kind == "chat")


BY_STATUS = ("status-failed", "cancelled")
_SAID_BY_ENDING = {("asks-question", "question"), ("announces-next-step", "promise")}  # no need to say it twice
# the question that ends a support chat, in its last sentence: is the user still there; how can I
# help (a greeting: the chat started over). Languages of the support corpus.
_PRESENCE = re.compile(
    r"(?:are|r)\s+you\s+still\s+(?:there|here|with\s+me|online)|still\s+there\s*\?|est(?:á|a|as|ás)\s+(?:aí|ai|ahí|ahi)|"
    r"ainda\s+(?:está|esta|estás)\s+(?:aí|ai|por\s+aí|connosco|comigo|conectad)|estamos\s+conectad|"
    r"sigues?\s+(?:ahí|ahi|ah[ií]|conectad)|(?:sind|bist)\s+(?:sie|du)\s+noch\s+(?:da|dran|online)|"
    r"êtes-vous\s+toujours\s+là|es-tu\s+toujours\s+là|вы\s+(?:ещё|еще)\s+здесь|ты\s+(?:ещё|еще)\s+здесь", re.I)
_GREETING = re.compile(
    r"how\s+(?:can|may)\s+i\s+(?:help|assist)(?:\s+you)?(?:\s+today)?\s*\?$|como\s+(?:posso|puedo)\s+(?:ajudar|ayudar)(?:[\w\s-]{0,20})?\?$|"
    r"wie\s+kann\s+ich\s+(?:ihnen|dir)\s+helfen\s*\?$|comment\s+puis-je\s+vous\s+aider\s*\?$|чем\s+(?:могу|я\s+могу)\s+помочь\s*\?$",
    re.I)


def verdict_without_status(session: Session) -> str:
    """The kind of the Outcome decision for the session's messages, its status set aside."""
    from .card import verdict  # card imports the model this module reads

    return verdict(Session(replace(session.info, status=None), session.messages, elision=session.elision), []).kind


def mask(text: str) -> str:
    """An error's first line with what varies from one occurrence to the next masked."""
    line = next((part for part in text[:2000].splitlines() if part.strip()), "")
    for pattern, replacement in _MASKS:
        line = pattern.sub(replacement, line)
    return " ".join(line.lower().split())


def error_words(text: str) -> str:
    """The masked error's first words: what a group's error shape is."""
    return " ".join(mask(text).split()[:_ERROR_WORDS])[:60].rstrip(" :;,.-")


def reply_shape(message: Message | None) -> str:
    """SHAPES: what the agent's last reply does, read in its head and its tail."""
    if message is None:
        return "none"
    text = (message.text or "").strip()
    head, tail = text[:600], text[-400:]
    if tail.endswith(("?", "？")):
        last = tail[-120:]
        return "presence-check" if _PRESENCE.search(last) else "greeting" if _GREETING.search(last) else "question"
    if _PROBLEM.search(head) or _PROBLEM.search(tail):
        return "problem"
    if _PROMISE.search(head) or _PROMISE.search(tail):
        return "promise"
    if SUCCESS_CLAIM.search(tail) and not ADMITS.search(tail):
        return "claim"
    return "statement"


@dataclass
class Reading:
    """One unexplained session: its signature and what an example shows of it."""

    signature: Signature
    example: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The card's `unexplained` object: the group's id and what it is grouped by."""
        s = self.signature
        return {"group": s.id, "ending": s.ending, "reply": s.shape, "chat": s.chat, "tool": s.tool, "error": s.error}


def read(card) -> Reading | str | None:
    """The Reading of an unexplained failure; the reason it is left out (a LEFT_OUT key); or
    None when the session is no failure or a finding explains it."""
    if card.outcome not in FAILURE_OUTCOMES:
        return None
    if any(f.severity >= EXPLAINED_AT for f in card.findings):
        return None
    kind = card.outcome_kind or "other"
    if kind in LEFT_OUT:
        return kind
    session = card.session
    if kind in BY_STATUS:  # the status decided: what the conversation itself shows, when it shows
        beneath = verdict_without_status(session)  # a failure, says more (and groups with the same
        if beneath in ENDINGS and beneath not in BY_STATUS:  # failure under another status)
            kind = beneath
    turn = session.turns[-1].messages if session.turns else session.messages  # no user message: all of it
    final = next((m for m in reversed(turn) if m.role == "assistant" and m.has_text), None)
    tool, error, error_message = None, None, None
    result = next((m for m in reversed(turn) if m.role == "tool" or m.tool_results), None)
    if result is not None:
        failed = failed_row(result) if result.role == "tool" else any(r.is_error for r in result.tool_results)
        if failed:
            error_message = result
            tool = ((result.tool_name if result.role == "tool" else
                     next((r.name for r in result.tool_results if r.is_error), None)) or "(unnamed)").replace("|", "/")
            error = error_words(result.output or "") or "(no text)"
    if error is None and kind == "ends-error":
        card_message = session.messages[-1] if session.messages else None
        card_message = next((m for m in reversed(turn) if m.error), card_message)
        if card_message is not None and card_message.error:
            error_message, error = card_message, error_words(card_message.error) or "(no text)"
    shape = "promise" if kind == "announces-next-step" else reply_shape(final)  # the ending read it already
    # a question left open means one thing in a support chat (the customer left) and another in a
    # tool agent (it asked for what it could look up): told apart for that ending only
    chat = kind == "asks-question" and not any(m.tool_calls or m.role == "tool" for m in session.messages)
    signature = Signature(kind, shape, tool, error, chat)
    info = session.info
    example: dict[str, Any] = {
        "id": info.id, "outcome": card.outcome, "reason": excerpt(card.outcome_reason, QUOTE),
        "message": card.outcome_message, "model": info.model,
        "final": None if final is None else {"message": final.id, "quote": excerpt(final.text, QUOTE)},
        "error": None if error_message is None else {
            "message": error_message.id,
            "quote": excerpt(error_message.output if error_message.role == "tool" else error_message.error, QUOTE)},
        "topic": topic_words(session),
    }
    return Reading(signature, example)


def topic_words(session: Session, count: int = 4) -> list[str]:
    """The first user message's first content words (lowercase, four letters or more)."""
    first = next((m for m in session.messages if m.role == "user" and m.has_text), None)
    words: list[str] = []
    for word in _WORD.findall((first.text or "")[:2000].lower() if first else ""):
        if word not in _STOP and word not in words:
            words.append(word)
            if len(words) == count:
                break
    return words


def rule_skeleton(signature: Signature, name: str | None = None) -> str:
    """A local rule file that flags the group's sessions: save it, fill in its docs, run it
    with `-p file.py`. It tests the same features the group was made of."""
    slug = re.sub(r"[^a-z0-9]+", "-", (name or f"unexplained {signature.id}").lower()).strip("-") or "unexplained"
    cls = "".join(part.capitalize() for part in slug.split("-") if part)
    cls = cls if cls[:1].isalpha() else f"Rule{cls}"
    error = f"re.compile({_pattern(signature.error)!r})" if signature.error else "None"
    return f'''"""{slug}: {signature.describe()}."""

import re

from nomos_forensics.rulekit import Evidence, Rule, Severity, failure_signature, hookimpl

ENDING = {signature.ending!r}  # how the conversation ends (docs/outcome.md)
REPLY = {signature.shape!r}  # the shape of the agent's last reply
CHAT = {signature.chat!r}  # a conversation with no tool call at all
TOOL = {signature.tool!r}  # the tool whose result, the last of the last turn, is an error
ERROR = {error}  # the error's first words, masked


class {cls}(Rule):
    """{signature.describe()}.

    Detects: a session that ends this way (unexplained-failure group {signature.id}).
    Not flagged: (say what this rule deliberately leaves alone).
    Root cause: (what the example sessions show went wrong).
    Fix: (what the operator should change).
    """

    code = "X{signature.id[:4].upper()}"
    name = {slug!r}
    severity = Severity.FRICTION

    def check(self, session, ctx):
        found = failure_signature(session)
        got = found.signature
        if (got.ending, got.shape, got.chat, got.tool) != (ENDING, REPLY, CHAT, TOOL):
            return
        if ERROR is not None and not ERROR.search(got.error or ""):
            return
        yield self.finding({signature.describe()!r}, [Evidence(found.message.id, found.message.turn,
                                                         found.quote)] if found.message else [])


@hookimpl
def nomos_forensics_rules():
    return [{cls}]
'''


def _pattern(words: str) -> str:
    """A regex matching the masked error words (masks as they are)."""
    return "^" + re.escape(words)


@dataclass
class Found:
    """failure_signature's answer: the signature and the message it rests on."""

    signature: Signature
    message: Message | None
    quote: str


def failure_signature(session: Session) -> Found:
    """The signature an unexplained failure of this session would be grouped by (rulekit's:
    the rule skeletons of `scan`'s unexplained groups test it). Outcome read without findings."""
    from .card import Card, Stats, verdict  # the card imports this module's neighbours

    outcome, reason, cited, kind = verdict(session, [])
    card = Card(session=session, stats=Stats.of(session), objective="", outcome="failed", outcome_reason=reason,
                outcome_message=cited, outcome_kind=kind)
    reading = read(card)
    if not isinstance(reading, Reading):
        return Found(Signature(kind, "none"), None, "")
    by_id = {m.id: m for m in session.messages}
    shown = reading.example["error"] or reading.example["final"]
    message = by_id.get(shown["message"]) if shown else by_id.get(cited) if cited is not None else None
    return Found(reading.signature, message, shown["quote"] if shown else excerpt(reason, QUOTE))
