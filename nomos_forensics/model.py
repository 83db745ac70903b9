"""The normalised session: one shape for every way Nomos (and older Nomos) stored a message.

Rows come either slim (fields extracted in SQL, see sql/queries/session_messages.sql) or with
their full `content`; both paths produce the same `Message`. Nothing here raises on odd data:
whatever the row holds, the result is a Message with possibly empty fields and a `shape` tag.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from .calls import NAME_CHARS, NO_CALLS, ToolCall, ToolResult, slim_calls, with_digests
from .decode import call_digests, decode_content, json_loads, lenient_json_loads, output_head
from .ending import Ending, ending_of

ROLES = ("user", "assistant", "tool", "system")


@dataclass(slots=True)
class Message:
    id: int
    role: str
    created_at: datetime | None
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()  # legacy: results carried inside the assistant message
    tool_name: str | None = None  # role='tool': which tool produced this result
    is_error: bool = False
    error: str | None = None  # assistant: the persisted error card
    finish_reason: str | None = None
    disk_bytes: int | None = None  # pg_column_size(content): on-disk, possibly compressed
    logical_bytes: int | None = None  # octet_length(content::text): the JSON as text
    shape: str = "object"  # object, double-encoded, string, array, null, scalar, unreadable
    content: Any = None  # full normalised content, only when a rule asked for it
    turn: int = 0  # 1-based turn number; 0 for messages before the first user message
    reasoning: bool = False  # assistant: carries a reasoning trace (reasoning / reasoning_content / thinking)
    output: str | None = None  # role='tool': the first OUTPUT_HEAD characters of its output
    failed_output: bool | None = None  # role='tool': whether `output` opens as an error (rounds.failed_row; None: not read yet)

    @property
    def has_text(self) -> bool:
        return bool(self.text and self.text.strip())

    @property
    def is_tool_result(self) -> bool:
        return self.role == "tool" or bool(self.tool_results)


@dataclass(slots=True)
class Turn:
    number: int
    messages: list[Message] = field(default_factory=list)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for m in self.messages for call in m.tool_calls]

    @property
    def user_message(self) -> Message | None:
        first = self.messages[0] if self.messages else None
        return first if first is not None and first.role == "user" else None


@dataclass
class SessionInfo:
    id: str
    title: str | None = None
    status: str | None = None
    goal: str | None = None
    model: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass
class Elision:
    """A session too long to hold whole (over HELD_MESSAGES): the rules see its first and last
    HELD_MESSAGES // 2 messages; the ones between were counted (every total here covers the
    whole session) and dropped. Turns are numbered in the order the messages were read."""

    left_out: int  # messages between the two held windows
    at: int  # where they were: the index in Session.messages of the first message after them
    messages: int = 0
    roles: Counter = field(default_factory=Counter)
    tool_calls: int = 0
    tool_counts: Counter = field(default_factory=Counter)
    turns: int = 0  # user messages
    turns_with_tool_calls: int = 0
    _last_call_turn: int = -1

    def count(self, message: "Message") -> None:
        """Count one message (in read order) and give it its turn number."""
        self.messages += 1
        self.roles[message.role] += 1
        if message.role == "user":
            self.turns += 1
        message.turn = self.turns
        if message.tool_calls:
            self.tool_calls += len(message.tool_calls)
            self.tool_counts.update(call.display_name for call in message.tool_calls)
            if self.turns and self.turns != self._last_call_turn:  # turn 0 is no turn
                self.turns_with_tool_calls += 1
                self._last_call_turn = self.turns


HELD_MESSAGES = 100_000  # beyond this many messages a session is held as two windows (Elision)


def build_session(info: SessionInfo, messages: Iterable[Message], *, ordered: bool = True,
                  held: int | None = None) -> "Session":
    """A Session from its messages as they are read: all of them in (created_at, id) order
    (`ordered`: they come so; else they are sorted), or, past `held`, the first and last
    `held // 2` in read order with the rest counted (Elision): memory stays bounded whatever
    the session's length."""
    held = HELD_MESSAGES if held is None else held
    window: list[Message] = []
    source = iter(messages)
    for message in source:
        window.append(message)
        if len(window) > held:
            break
    else:
        return Session(info, window if ordered else sort_messages(window))
    head_size = held // 2
    elision = Elision(left_out=0, at=head_size)
    for message in window:
        elision.count(message)
    tail: deque[Message] = deque(window[head_size:], maxlen=held - head_size)
    head = window[:head_size]
    del window
    for message in source:
        elision.count(message)
        tail.append(message)
    elision.left_out = elision.messages - len(head) - len(tail)
    return Session(info, [*head, *tail], elision=elision)


@dataclass
class Session:
    """A session row, its messages in (created_at, id) order, and lazily loaded lifecycle data.
    A session too long to hold keeps two windows of its messages (`elision`, build_session)."""

    info: SessionInfo
    messages: list[Message]
    extras: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    elision: Elision | None = None

    def __post_init__(self) -> None:
        if self.elision is not None:  # numbered as they were read
            return
        turn = 0
        for message in self.messages:
            if message.role == "user":
                turn += 1
            message.turn = turn

    @property
    def id(self) -> str:
        return self.info.id

    @cached_property
    def turns(self) -> list[Turn]:
        turns: list[Turn] = []
        for message in self.messages:
            if message.turn == 0:
                continue
            if not turns or turns[-1].number != message.turn:
                turns.append(Turn(message.turn))
            turns[-1].messages.append(message)
        return turns

    def by_role(self, role: str) -> list[Message]:
        return [m for m in self.messages if m.role == role]

    @cached_property
    def tool_calls(self) -> list[ToolCall]:
        return [call for m in self.messages for call in m.tool_calls]

    @cached_property
    def tool_counts(self) -> Counter[str]:
        """Calls per tool name, over the whole session (an elided one's too)."""
        if self.elision is not None:
            return self.elision.tool_counts
        return Counter(call.display_name for call in self.tool_calls)

    def called(self, *names: str) -> bool:
        wanted = set(names)
        return any(call.name in wanted for call in self.tool_calls)

    @cached_property
    def _timeline(self) -> tuple[list[datetime], list[int]]:
        stamped = [m for m in self.messages if m.created_at is not None]
        return [m.created_at for m in stamped], [m.turn for m in stamped]

    def turn_at(self, moment: datetime | str | None) -> int | None:
        """The turn in progress at `moment` (a datetime or an ISO string, as lifecycle rows carry
        them): that of the last message created at or before it."""
        if isinstance(moment, str):
            moment = parse_timestamp(moment)
        if moment is None:
            return None
        stamps, turns = self._timeline
        try:
            index = bisect.bisect_right(stamps, moment)
        except TypeError:  # naive vs aware timestamps
            return None
        return turns[index - 1] if index else None

    @cached_property
    def ending(self) -> Ending:
        """How the conversation ends (see nomos_forensics.ending), computed once."""
        return ending_of(self)

    @property
    def turns_with_tool_calls(self) -> int:
        if self.elision is not None:
            return self.elision.turns_with_tool_calls
        return len({m.turn for m in self.messages if m.tool_calls and m.turn})  # turn 0 is no turn


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (as to_jsonb renders timestamptz) or None."""
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (AttributeError, TypeError, ValueError):
        return None


# ------------------------------------------------------------------ normalisation
def _as_text(value: Any) -> str | None:
    """What `->>` would give in SQL: strings as-is, other JSON as its text, null as None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return str(value)


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, (int, float)):
        return value != 0
    return False


def _as_name(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()[:NAME_CHARS]
    return None


def _decode_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json_loads(arguments)
        except (ValueError, RecursionError):
            return arguments
    return arguments


def _tool_call(item: Any) -> ToolCall:
    if not isinstance(item, dict):
        return ToolCall(name=_as_name(item) if isinstance(item, str) else None)
    function = item.get("function") if isinstance(item.get("function"), dict) else {}
    name = _as_name(item.get("name")) or _as_name(function.get("name"))
    arguments = item.get("arguments", function.get("arguments", item.get("input")))
    call_id = item.get("id")
    return ToolCall(name=name, arguments=_decode_arguments(arguments), id=_as_text(call_id))


def _as_list(value: Any) -> list[Any]:
    value, _ = decode_content(value) if isinstance(value, str) else (value, "")
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    return []


@dataclass(slots=True)
class Fields:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    tool_name: str | None = None
    is_error: bool = False
    error: str | None = None
    finish_reason: str | None = None
    reasoning: bool = False


_REASONING_KEYS = ("reasoning", "reasoning_content", "thinking")


def fields_from_object(obj: Mapping[str, Any]) -> Fields:
    text = obj.get("text")
    if text is None and isinstance(obj.get("content"), str):
        text = obj.get("content")
    results = tuple(
        ToolResult(
            name=_as_name(r.get("name")),
            is_error=_as_bool(r.get("is_error")),
            tool_call_id=_as_text(r.get("tool_call_id")),
        )
        for r in _as_list(obj.get("tool_results"))
        if isinstance(r, dict)
    )
    return Fields(
        text=_as_text(text),
        tool_calls=tuple(_tool_call(c) for c in _as_list(obj.get("tool_calls"))),
        tool_results=results,
        tool_name=_as_name(obj.get("name")),
        is_error=_as_bool(obj.get("is_error")),
        error=_as_text(obj.get("error")) or None,
        finish_reason=_as_text(obj.get("finish_reason")),
        reasoning=any((_as_text(obj.get(key)) or "").strip() for key in _REASONING_KEYS),
    )


def fields_from_content(raw: Any) -> tuple[Fields, str, Any]:
    """Fields, shape and normalised content (a dict whenever one can be made) for any JSON value."""
    value, shape = decode_content(raw)
    if shape == "unreadable":
        return Fields(), shape, {}
    if isinstance(value, dict):
        return fields_from_object(value), shape, value
    if isinstance(value, str):
        return Fields(text=value), shape, {"text": value}
    if isinstance(value, list):
        texts, calls, results = [], [], []
        reasoning = False
        for part in value:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                if part.get("type") in ("tool_use", "function_call", "tool_call"):
                    calls.append(_tool_call(part))
                    continue
                inner = fields_from_object(part)
                reasoning = reasoning or inner.reasoning or part.get("type") in ("thinking", "reasoning")
                if inner.text:
                    texts.append(inner.text)
                calls.extend(inner.tool_calls)
                results.extend(inner.tool_results)
        text = "\n".join(texts) if texts else None
        fields = Fields(text=text, tool_calls=tuple(calls), tool_results=tuple(results), reasoning=reasoning)
        return fields, shape, {"text": text, "parts": value}
    if value is None:
        return Fields(), shape, {}
    return Fields(text=_as_text(value)), shape, {"text": _as_text(value)}


_TRUE_TEXT = frozenset({"true", "1", "yes"})
# The columns of the {message_columns} SQL fragment, in its order: message_from_row reads rows
# by position (a million-row scan fetches plain tuples). Streams check the names once.
MESSAGE_COLUMNS = (
    "id", "role", "created_at", "content_shipped", "content", "text", "call_names", "call_count",
    "result_names", "result_count", "tool_name", "is_error", "error", "finish_reason", "disk_bytes",
    "logical_bytes", "reasoning", "result_errors", "output_head", "call_digests",
)


def message_from_row(row: Sequence[Any], *, keep_content: bool = False) -> Message:
    """Build a Message from a row of session_messages.sql (MESSAGE_COLUMNS, in that order).

    This runs once per message on a million-row scan, so the slim path is kept tight.
    """
    (id_, role, created_at, content_shipped, content, text, call_names, call_count, result_names, result_count,
     tool_name, is_error, error, finish_reason, disk_bytes, logical_bytes) = row[:16]
    reasoning = len(row) > 16 and bool(row[16])
    errors = row[17] if len(row) > 17 else None  # JSON text: each legacy result's error flag, when one failed
    output = row[18] if len(row) > 18 else None
    digests = row[19] if len(row) > 19 else None  # per call: shape and value digests, comma-separated
    role = role.strip().lower() if isinstance(role, str) else "unknown"
    if content_shipped:
        fields, shape, normalised = fields_from_content(content)
        if output is None and role == "tool":
            output = output_head(normalised)
        calls = fields.tool_calls
        if calls:
            calls = with_digests(calls, digests if len(row) > 19 else call_digests(normalised))
        return Message(
            int(id_), role, created_at, fields.text, calls, fields.tool_results,
            fields.tool_name, fields.is_error, fields.error, fields.finish_reason, disk_bytes,
            logical_bytes, shape, normalised if keep_content else None, reasoning=fields.reasoning or reasoning,
            output=output,
        )
    calls = with_digests(slim_calls(call_names, call_count), digests) if call_count else NO_CALLS
    if result_count or result_names:
        result_names = (lenient_json_loads(result_names) if isinstance(result_names, str) else result_names) or ()
        failed = (lenient_json_loads(errors) if isinstance(errors, str) else errors) or () if errors else ()
        failed = failed if isinstance(failed, list) else ()
        results = tuple(
            ToolResult(name=_as_name(result_names[i]) if i < len(result_names) else None,
                       is_error=i < len(failed) and failed[i] is True)
            for i in range(max(result_count, len(result_names)))
        )
    else:
        results = ()
    return Message(
        int(id_), role, created_at, text, calls, results,
        tool_name.strip()[:NAME_CHARS] or None if tool_name else None,
        is_error is not None and is_error.strip().lower() in _TRUE_TEXT,
        error or None, finish_reason, disk_bytes, logical_bytes, "object", None, reasoning=reasoning,
        output=output,
    )


def message_from_mapping(row: Mapping[str, Any], *, keep_content: bool = False) -> Message:
    """message_from_row for a mapping of MESSAGE_COLUMNS (missing ones are NULL)."""
    return message_from_row(tuple(row.get(name) for name in MESSAGE_COLUMNS), keep_content=keep_content)


def sort_messages(messages: Iterable[Message]) -> list[Message]:
    """Order a session's messages by (created_at, id); rows with no timestamp keep id order."""
    return sorted(messages, key=lambda m: (m.created_at is None, m.created_at or 0, m.id))


def excerpt(text: str | None, limit: int = 200) -> str:
    """A one-line excerpt of at most `limit` characters."""
    if not text:
        return ""
    flat = " ".join(text[: limit * 8].split())  # a megabyte message: only its head can be shown
    if len(flat) < limit and len(text) > limit * 8:  # mostly whitespace up there
        flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
