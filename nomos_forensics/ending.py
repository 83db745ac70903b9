"""How a session's conversation ends: one model, computed once per session (`Session.ending`),
read by the card's Outcome and by every rule that asks how a session finished."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from .rounds import (
    ends_after_completion,
    ends_after_handoff,
    failed_action,
    is_finishing,
    last_successful_completion,
    results_of,
)
from .text import lexicon
from .text.closings import (
    END,
    GOODBYE_CHARS,
    LEAVING_CHARS,
    THANKS,
    gives_up,
    is_closing,
    is_leaving,
    says_only_goodbye,
)
from .text.prefilter import literal_first
from .text.prose import canonical, normalise, sentences
from .text.re2gate import Re2Gated

if TYPE_CHECKING:
    from .model import Message, Session

CONVERSATION_ROLES = ("user", "assistant", "tool")
IN_FLIGHT_STATUSES = ("active",)
DEFAULT_GRACE = timedelta(minutes=10)

# kinds of ending; the first three are finished, the rest leave the user without an answer
ANSWERED = "answered"  # a final assistant text (or a closing thank-you after it)
COMPLETED = "completed"  # the last tool round called complete_task (or submitted) and only its results follow
HANDED_OFF = "handed-off"  # the last tool round handed the conversation to a person, and that succeeded
TOOL_RESULT = "tool-result"  # a stored tool result with no assistant reply after it
TOOL_CALL = "tool-call"  # tool calls whose results were never stored
USER = "user"  # a user message nobody answered
ERROR = "error"  # an assistant error card
BLANK = "blank"  # an assistant reply with no text, no tool call and no result
CUT = "cut-off"  # the final reply, or a model call after it, cut off by the user's interrupt (the client logged it)
EMPTY = "empty"  # no user, assistant or tool message at all
FINISHED = (ANSWERED, COMPLETED, HANDED_OFF)

DESCRIPTION = {
    ANSWERED: "a final answer",
    COMPLETED: "a complete_task or submit call",
    HANDED_OFF: "a successful hand-off to a person",
    TOOL_RESULT: "a tool result with no assistant reply after it",
    TOOL_CALL: "an assistant tool call whose result was never stored",
    USER: "a user message with no assistant reply",
    ERROR: "an assistant error card",
    BLANK: "a blank assistant reply",
    CUT: "a reply the user cut off (the client logged its interrupt)",
    EMPTY: "no conversation",
}

_WORDS = lexicon.load("nomos_forensics.text", "endings")
_MACROS = _WORDS.get("macros", {})
SUBMIT_TEXT = re.compile(lexicon.pattern(_WORDS['patterns'], 'submit_text'), re.IGNORECASE)
(UNABLE, NOT_UNABLE, NOTHING_LEFT, CAVEAT, WAITING, HANDOFF, SUCCESS_CLAIM, ADMITS, CLIENT_FAILED, CLIENT_APPLIED,
 CLIENT_INTERRUPTED, CLIENT_CUT_CALL, CLIENT_UNDONE, CLIENT_STOPPED) = (
    literal_first(lexicon.pattern(_WORDS["patterns"], key, _MACROS), re.MULTILINE)
    for key in ("unable", "not_unable", "nothing_left", "caveat", "waiting", "handoff", "success_claim", "admits",
                "client_failed", "client_applied", "client_interrupted", "client_cut_call", "client_undone",
                "client_stopped"))
CAVEAT = Re2Gated(CAVEAT)  # read in every final reply, whole: RE2 rules most out (117 -> 15 us on a real reply)
UNDONE_MARK = "emoved"  # a literal of every CLIENT_UNDONE match, in "Removed:" and "removed from git" alike
INTERRUPT_MARK = "^C"  # a literal of every CLIENT_INTERRUPTED / CLIENT_CUT_CALL match: client text without it is not searched
UNABLE_WORDS = tuple(_WORDS["words"]["unable"])
# a pattern's gate: every match of it holds one of these words (lexicon [words]), a cheap first test
GATES = {UNABLE: UNABLE_WORDS, **{pattern: tuple(lexicon.words(_WORDS["words"][key])) for pattern, key in (
    (NOTHING_LEFT, "nothing_left"), (CAVEAT, "caveat"), (WAITING, "waiting"), (HANDOFF, "handoff"),
    (SUCCESS_CLAIM, "success_claim"))}}
_GATE_OF = {id(pattern): words for pattern, words in GATES.items()}  # a Pattern hashes its whole program
_CONDITIONAL = re.compile(r"\W*(?:if|unless|assuming|suppose|supposing)\b")  # a sentence that states a condition
FINAL_MESSAGES = 3  # how many of the last turn's text replies count as the agent's final words


class _once:
    """functools.cached_property without its lock (Python < 3.12 takes one on every first read):
    the value is worked out on first read and kept in the instance's __dict__, which then shadows it."""

    def __init__(self, fn) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.fn(instance)
        return value


@dataclass(frozen=True)
class Ending:
    """The end of the conversation (system messages ignored) and what it says about the session.

    `kind` is one of the kinds above; `last` the last user, assistant or tool message;
    `closing` the user's closing thank-you when the session ends on one after a finished
    answer (or before the agent's goodbyes, left out); `status` the session's status,
    lower-cased; `client` the system (client) messages after the last message; `cut_off` the
    client message that logged the user's interrupt when the final reply (or a model call after
    it) was cut off (kind CUT), else None. The
    rest (`completion`, `final`, `work`, `doubts`, `earlier`, ...) is worked out on first use,
    from the end of the conversation backwards, so a reader that only asks how the session
    stopped pays for nothing more.
    """

    kind: str
    last: "Message | None"
    closing: "Message | None"
    status: str
    client: "tuple[Message, ...]" = ()  # system (client) messages after the last message
    cut_off: "Message | None" = None  # the client's interrupt notice that cut the final reply off (kind CUT)
    messages: "Sequence[Message]" = field(default=(), repr=False, compare=False)  # the session's messages
    conversation: "Sequence[Message]" = field(default=(), repr=False, compare=False)  # its user/assistant/tool ones

    @_once
    def completion(self) -> "Message | None":
        """The last `complete_task` call whose stored result (if any) is not an error."""
        return last_successful_completion(self.messages) if self.last is not None else None

    @_once
    def turn(self) -> int:
        """The last turn: that of the final answer (before a closing thank-you), else of `last`."""
        if self.last is None:
            return 0
        return self.conversation[-2].turn if self.closing is not None else self.last.turn

    @_once
    def _replies(self) -> "list[Message]":
        """The last turn's assistant replies with text, in order."""
        return [m for m in turn_block(self.conversation, self.turn) if m.role == "assistant" and m.has_text]

    @_once
    def final(self) -> "tuple[Message, ...]":
        """The last turn's last text replies (up to FINAL_MESSAGES)."""
        return tuple(self._replies[-FINAL_MESSAGES:]) if self.last is not None else ()

    @_once
    def final_plain(self) -> "tuple[str, ...]":
        """The texts of `final` as statements are matched (see _plain)."""
        return tuple(map(self.plain, self.final))

    @_once
    def work(self) -> "tuple[Message, ...]":
        """The last turn's messages that did work: a tool call other than the finishing one, or
        a client report of an applied change."""
        if self.last is None:
            return ()
        return tuple(m for m in turn_block(self.messages, self.turn) if (
            any(not is_finishing(c) for c in m.tool_calls)
            or (m.role == "system" and CLIENT_APPLIED.search((m.text or "").lower()) is not None)))

    @property
    def worked(self) -> bool:
        """The last turn did work: a tool call other than the finishing one, or an applied change."""
        return bool(self.work)

    @_once
    def doubts(self) -> "tuple[tuple[Message, str], ...]":
        """The last turn's statements admitting an unverified or unfixed result."""
        return _doubts(self._replies, self.plain) if self.last is not None else ()

    @_once
    def earlier(self) -> bool:
        """An earlier turn ended on an answer that is not an inability."""
        return self.last is not None and _answered_before(self.conversation, self.turn, self.plain, self.messages)

    @_once
    def _plains(self) -> "dict[int, str]":
        return {}

    def plain(self, message: "Message") -> str:
        """A message's text as the ending's phrase tables read it (`_plain`), worked out once per
        message: the Outcome's readings in final_words ask for the same replies."""
        plains = self._plains
        key = id(message)
        if key not in plains:
            plains[key] = _plain(message)
        return plains[key]

    @property
    def finished(self) -> bool:
        return self.kind in FINISHED

    @property
    def completed(self) -> bool:
        """The task was marked done: a successful complete_task call, or status `completed`."""
        return self.completion is not None or self.status == "completed"

    @property
    def answer(self) -> "Message | None":
        """The final assistant answer, when the conversation ends on one (or on a closing after it)."""
        return self.last if self.kind == ANSWERED and self.closing is None else None

    def in_flight(self, grace: timedelta = DEFAULT_GRACE, now: datetime | None = None) -> bool:
        """Still running: status `active` and the last message is younger than `grace`."""
        if self.status not in IN_FLIGHT_STATUSES or self.last is None or self.last.created_at is None:
            return False
        stamp = self.last.created_at
        moment = now or (datetime.now(timezone.utc) if stamp.tzinfo else datetime.now())
        try:
            return abs(moment - stamp) < grace
        except (TypeError, OverflowError):  # naive against aware, or a year past 9999
            return False

    def describe(self) -> str:
        return DESCRIPTION[self.kind]

    def says(self, what: "re.Pattern[str]", unless: "re.Pattern[str] | None" = None) -> "tuple[Message, str] | None":
        """The first final statement matching `what` (and not `unless`), with its message
        (latest message first)."""
        plains = self.final_plain
        gate = _GATE_OF.get(id(what))
        for message, plain_text in zip(reversed(self.final), reversed(plains)):
            if (gate is not None and not any(map(plain_text.__contains__, gate))) or not what.search(plain_text):
                continue  # the whole text has no match, so no sentence of it has one
            for sentence in sentences(message.text or ""):
                if sentence.rstrip().endswith(("?", "\uff1f")):
                    continue  # a question claims nothing
                plain = canonical(sentence)
                if _CONDITIONAL.match(plain):
                    continue  # nor does a condition ("If I cannot modify tests, I cannot add one")
                if what.search(plain) and not (unless is not None and unless.search(plain)):
                    return message, sentence
        return None

    @_once
    def handoff_said(self) -> "tuple[Message, str] | None":
        """A final statement handing the conversation to a person or another agent ("I'm
        transferring you to a human agent", "a specialist will contact you")."""
        return self.says(HANDOFF) if self.last is not None else None

    @_once
    def failed_result(self) -> "Message | None":
        """The failed tool result right before the final answer (a closing after it aside): read
        by the contradicted-claim and the reports-failure readings alike, worked out once."""
        answer = self.answer if self.closing is None else self.conversation[-2]
        if answer is None or answer.role != "assistant" or self.kind != ANSWERED:
            return None
        return failed_before(self.conversation, answer)

    @_once
    def quit(self) -> "Message | None":
        """The last turn's request when the whole of it gives the task up ("forget it", "never
        mind, I'll do it myself", "算了"), else None."""
        request = self.request
        return request if request is not None and gives_up(request.text) else None

    def says_unable(self) -> "tuple[Message, str] | None":
        """A final statement that the agent could not do (part of) the task."""
        return self.says(UNABLE, NOT_UNABLE)

    def worked_after(self, message: "Message") -> bool:
        """Work at or after `message` in the last turn: its own tool calls, a later tool call
        other than the finishing one, or a client report of an applied change after it."""
        return any(m.id == message.id for m in self.work) or any(
            m.created_at is not None and message.created_at is not None and m.created_at > message.created_at
            for m in self.work)

    @property
    def request(self) -> "Message | None":
        """The user message that opened the last turn (None when that turn has none)."""
        if self.last is None:
            return None
        return next((m for m in turn_block(self.conversation, self.turn) if m.role == "user"), None)

    @property
    def client_undone(self) -> "Message | None":
        """A client message after the last reply reporting that the user's undo removed a commit
        ("Removed: 57d34c8 feat: … Now at: …", aider's /undo)."""
        for message in self.client:
            text = message.text
            if text and UNDONE_MARK in text and CLIENT_UNDONE.search(text.lower()):
                return message
        return None

    @property
    def stopped(self) -> "Message | None":
        """A client message after the last one: the user stopped the agent or left ("[Request interrupted by user]")."""
        return _client_says(self.client, CLIENT_STOPPED)

    @property
    def client_failed(self) -> "Message | None":
        """A client message after the last reply reporting that its change was not applied."""
        return _client_says(self.client, CLIENT_FAILED)


def failed_before(conversation: "Sequence[Message]", answer: "Message") -> "Message | None":
    """The last tool result before `answer` in its turn, when it is a failed action
    (rounds.failed_action: not a coding shell's probe, not the user declining a question)."""
    block = turn_block(conversation, answer.turn)
    before = next((block[:n] for n, m in enumerate(block) if m is answer), [])
    result = next((m for m in reversed(before) if m.role == "tool" or m.tool_results), None)
    if result is None or not any(failed and failed_action(name) for name, failed in results_of(result)):
        return None
    return result


def _client_says(client: "tuple[Message, ...]", what: "re.Pattern[str]") -> "Message | None":
    """The first client message whose lower-cased text `what` matches."""
    return next((m for m in client if what.search((m.text or "").lower())), None)


def ending_of(session: "Session") -> Ending:
    messages = session.messages
    conversation = [m for m in messages if m.role in CONVERSATION_ROLES]
    status = (session.info.status or "").strip().lower() if isinstance(session.info.status, str) else ""
    kind, closing = _kind(conversation)
    if status == "completed" and (kind == TOOL_CALL or (kind == TOOL_RESULT and _announces_submit(conversation))):
        kind = COMPLETED  # the platform closed the session on that call (and its result): the run's submit step
    last = conversation[-1] if conversation else None
    if last is None:
        return Ending(kind, None, None, status)
    client: tuple = ()
    cut_off = None
    if closing is None:
        tail = []
        for message in reversed(messages):
            if message is last:
                break
            tail.append(message)
        client = tuple(m for m in reversed(tail) if m.role == "system")
        if kind == ANSWERED and last.role == "assistant":
            cut_off = _cut_off(messages, last, len(tail), client)
    if kind == ANSWERED and cut_off is None and (closing is None and last.role == "assistant" or closing is last):
        # the agent only said goodbye after the user's closing (and the user, maybe, goodbye again)
        at = _closed_before_farewell(conversation if closing is None else conversation[:-1])
        if at is not None:  # the user closed after a finished answer, and the agent only said goodbye
            ended = conversation[at]
            return Ending(ANSWERED, ended, ended, status, messages=messages, conversation=conversation[:at + 1])
    if cut_off is not None:
        before, closed = _kind(conversation[:-1]) if conversation[-1] is last and len(conversation) > 1 else (USER, None)
        if before == ANSWERED and closed is not None and closed is conversation[-2]:
            # the reply cut off answered a closing ("exit") after a finished answer: the session ended on the closing
            return Ending(ANSWERED, closed, closed, status, messages=messages, conversation=conversation[:-1])
        kind = CUT
    return Ending(kind, last, closing, status, client=client, cut_off=cut_off, messages=messages,
                  conversation=conversation)


def _closed_before_farewell(conversation: "list[Message]") -> "int | None":
    """Where the user's closing that ended the conversation is, when the agent's replies after it
    only say goodbye ("Obrigado por entrar em contato, foi um prazer ajudá-lo hoje."), however many
    times the two say goodbye to each other; None when the last reply says more."""
    closed, end = None, len(conversation)
    while end >= 3:
        at = end  # back over the agent's replies, however many in a row, to the user's message
        while at > 1 and conversation[at - 1].role == "assistant" and not conversation[at - 1].tool_calls:
            at -= 1
        user = conversation[at - 1] if at < end else None
        if (user is None or user.role != "user" or (len(user.text or "") > LEAVING_CHARS and not is_closing(user.text))
                or any(len(m.text or "") > GOODBYE_CHARS for m in conversation[at:end])):
            break  # lengths first: a request, or a reply that says more, rules most sessions out
        kind, closing = _kind(conversation[:at])  # a closing after a finished answer?
        if kind != ANSWERED or closing is None or not all(says_only_goodbye(m.text) for m in conversation[at:end]):
            break
        closed = end = at - 1  # that answer may itself be a goodbye after an earlier closing
    return closed


def _announces_submit(conversation: "list[Message]") -> bool:
    """The last assistant message that called a tool says it submits ("I am ready to submit.",
    mini-swe-agent's `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` in its text)."""
    caller = next((m for m in reversed(conversation) if m.role == "assistant" and m.tool_calls), None)
    return caller is not None and SUBMIT_TEXT.search(caller.text or "") is not None


def _cut_off(messages: "Sequence[Message]", last: "Message", after: int, client: "tuple[Message, ...]") -> "Message | None":
    """The client message that logged the user's interrupt of the final reply `last`: the system
    message right before it ends with the notice (aider: "^C again to exit", logged on the first
    ^C while the reply streams, before the partial reply is written), or a client message after it
    has the notice followed at once by a token report (a model call under way after the reply, a
    retry of a failed edit, cut off). A ^C at the prompt after a finished reply (its token report,
    then "^C again to exit") is no cut. Only client text holding "^C" is searched."""
    index = len(messages) - 1 - after  # `last`'s index: `after` messages follow it
    if index > 0 and messages[index] is last:
        before = messages[index - 1]
        text = before.text or ""
        if before.role == "system" and INTERRUPT_MARK in text and CLIENT_INTERRUPTED.search(text.lower()):
            return before
    for message in client:
        text = message.text
        if text and INTERRUPT_MARK in text and CLIENT_CUT_CALL.search(text.lower()):
            return message
    return None


def turn_block(messages: "Sequence[Message]", turn: int) -> "list[Message]":
    """The messages of `turn`, in order. Turn numbers never go down along a session's
    messages, so they are one run, found from the end."""
    block = []
    for message in reversed(messages):
        if message.turn == turn:
            block.append(message)
        elif message.turn < turn:
            break
    block.reverse()
    return block


def _plain(message: "Message") -> str:
    """The message's whole text as statements are matched (normalised, contractions spelled one
    way): a pattern that misses it misses every sentence of it, so one search rules it out."""
    return canonical(normalise(message.text or ""))


def _may_be_unable(plain: str) -> bool:
    """The text has a word every UNABLE pattern needs (lexicon [words] unable)."""
    return any(map(plain.__contains__, UNABLE_WORDS))


def _doubts(replies: "list[Message]", plain=_plain) -> "tuple[tuple[Message, str], ...]":
    """Every statement of `replies` that admits the result is unverified or not fixed (CAVEAT),
    questions excepted; a message is split into sentences only when its whole text matches (RE2
    reads the whole text in one pass: a word gate before it saved nothing)."""
    found = []
    for message in replies:
        if CAVEAT.search(plain(message)) is None:
            continue
        found.extend((message, sentence) for sentence in sentences(message.text or "")
                     if not sentence.rstrip().endswith(("?", "\uff1f")) and CAVEAT.search(plain_sentence := canonical(sentence))
                     and not _CONDITIONAL.match(plain_sentence))
    return tuple(found)


def _did_work(block: "Sequence[Message]") -> bool:
    """A turn's messages hold work: a tool call other than a finishing one, or a client report of an applied change."""
    return any(any(not is_finishing(c) for c in m.tool_calls)
               or (m.role == "system" and CLIENT_APPLIED.search((m.text or "").lower()) is not None) for m in block)


def _answered_before(conversation: "Sequence[Message]", turn: int, plain_of=_plain,
                     messages: "Sequence[Message]" = ()) -> bool:
    """Some turn before `turn` ended on a text answer that does not say it could not do it. A
    turn whose last assistant message is an error card was not answered: its text before the
    card ("Let me check the system first.") only announced the work the card cut off. Nor was a
    turn whose answer only waits for the user ("Please add these files to the chat", "Could you
    clarify …") and that did no work: aider's add-files step delivers nothing (heldout7)."""
    seen: set[int] = set()
    for message in reversed(conversation):  # the latest earlier answer first: usually the only one read
        if not 0 < message.turn < turn or message.turn in seen:
            continue
        if message.role == "assistant" and message.error:
            seen.add(message.turn)  # the turn died on the card
            continue
        if message.role == "assistant" and message.has_text and not message.error:
            seen.add(message.turn)
            plain = plain_of(message)
            if any(map(plain.__contains__, GATES[WAITING])) and WAITING.search(plain) and any(
                    WAITING.search(canonical(c)) for c in sentences(message.text or "") if not c.rstrip().endswith("?")
            ) and not _did_work(turn_block(messages, message.turn)):
                continue  # it only asked for files or a clarification, and did nothing: nothing was delivered
            if not _may_be_unable(plain) or not UNABLE.search(plain) or not any(
                    UNABLE.search(c) and not NOT_UNABLE.search(c) for c in map(canonical, sentences(message.text or ""))):
                return True
    return False


def _kind(conversation: "list[Message]") -> "tuple[str, Message | None]":
    if not conversation:
        return EMPTY, None
    last = conversation[-1]
    if last.role == "user":
        blank = not (last.text or "").strip() and not last.tool_calls  # an empty input asks nothing
        leaving = not blank and is_leaving(last.text)
        if (blank or leaving or is_closing(last.text)) and len(conversation) > 1:
            before, _ = _kind(conversation[:-1])
            asked = "?" in (conversation[-2].text or "")[-300:]
            if before in FINISHED and (blank or leaving or THANKS.search(last.text or "") or END.search(last.text or "")
                                       or not asked):
                return ANSWERED, last
        return USER, None
    if last.role == "assistant" and last.error:
        return ERROR, None
    if last.role == "assistant" and last.has_text and not last.tool_calls:
        return ANSWERED, None
    if last.role == "assistant" and not last.tool_calls and not last.tool_results:
        return BLANK, None
    if ends_after_completion(conversation):
        return COMPLETED, None
    if ends_after_handoff(conversation):
        return HANDED_OFF, None
    if last.role == "assistant" and last.tool_calls and not last.tool_results:
        return TOOL_CALL, None
    return TOOL_RESULT, None
