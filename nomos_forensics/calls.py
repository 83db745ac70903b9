"""Tool calls and results as the rules see them, and the calls of a slim row (names, count and
call_digests as the scan query ships them), built once per distinct list of names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .decode import lenient_json_loads

NAME_CHARS = 200  # a tool name longer than this is cut (names are counted and shown on every card)


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str | None
    arguments: Any = None
    id: str | None = None
    # 16 hex digits (call_digests): the arguments' shape (ids, numbers, spaces masked), then the
    # arguments themselves; None when not read. Calls alike in shape but not in value loop over items.
    digest: str | None = None

    @property
    def display_name(self) -> str:
        return self.name or "(unnamed)"


@dataclass(frozen=True, slots=True)
class ToolResult:
    name: str | None
    is_error: bool = False
    tool_call_id: str | None = None


NO_CALLS: tuple[ToolCall, ...] = ()
_UNNAMED = ToolCall(name=None)


_CALLS_CACHE: dict[tuple, tuple[ToolCall, ...]] = {}
_CALLS_CACHE_MAX = 4096


def slim_calls(raw_names: Any, count: int) -> tuple[ToolCall, ...]:
    """The calls of a slim row: its names, then unnamed calls up to `count`. ToolCalls are
    immutable and a database has few distinct lists of names, so each list is built once. The
    SQL ships the names as JSON text: decoded once per distinct text, not once per row."""
    if isinstance(raw_names, str):
        key_text = (raw_names, count)
        calls = _CALLS_CACHE.get(key_text)
        if calls is None:
            calls = slim_calls(lenient_json_loads(raw_names), count)
            if len(_CALLS_CACHE) >= _CALLS_CACHE_MAX:
                _CALLS_CACHE.clear()
            _CALLS_CACHE[key_text] = calls
        return calls
    try:
        key: tuple | None = (tuple(raw_names or ()), count)
        calls = _CALLS_CACHE.get(key)
    except TypeError:  # a name that is a JSON object or array: built every time
        key, calls = None, None
    if calls is None:
        names = [n.strip()[:NAME_CHARS] for n in (raw_names or ()) if isinstance(n, str) and n.strip()]
        calls = tuple(ToolCall(name=n) for n in names) + (_UNNAMED,) * max(0, count - len(names))
        if key is not None:
            if len(_CALLS_CACHE) >= _CALLS_CACHE_MAX:
                _CALLS_CACHE.clear()
            _CALLS_CACHE[key] = calls
    return calls


def with_digests(calls: tuple[ToolCall, ...], digests: str | None) -> tuple[ToolCall, ...]:
    """The calls with their call_digests, when the column holds one per call and every call is
    named (a slim row lists the names it found first, so positions agree only then)."""
    if not digests or not isinstance(digests, str):
        return calls
    parts = digests.split(",")
    if len(parts) != len(calls) or any(call.name is None for call in calls):
        return calls
    return tuple(ToolCall(call.name, call.arguments, call.id, digest) for call, digest in zip(calls, parts))
