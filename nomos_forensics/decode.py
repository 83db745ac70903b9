"""The read boundary: JSON and text as the server sends them, made safe to hold and to write.

Nothing a row holds may stop a command: JSON nested deeper than Python parses reads as an empty
UnreadableJSON, bytes that are not UTF-8 (a SQL_ASCII database) and lone UTF-16 surrogates (a
double-encoded value may escape one) become U+FFFD, here, once, for every output format.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_MAX_DECODE_DEPTH = 3


class UnreadableJSON:
    """A JSON value the driver could not load (nested deeper than Python's parser goes): empty
    and falsy, so the message reads as empty, and the card says so in a note."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __iter__(self):
        return iter(())

    def __repr__(self) -> str:
        return f"UnreadableJSON({self.reason!r})"


def lenient_json_loads(data: str | bytes) -> Any:
    """json.loads for the driver: a value too deeply nested becomes an UnreadableJSON; bytes
    that are not UTF-8 (a SQL_ASCII database) and lone surrogates become U+FFFD."""
    try:
        # psycopg hands over bytes; decoding them here skips json's per-call encoding sniffing
        return json_loads(decode_utf8(data) if type(data) is bytes else data)
    except RecursionError:
        return UnreadableJSON("nested too deeply to read")


def decode_utf8(data: bytes) -> str:
    """Bytes from the server as text: UTF-8, with what is not UTF-8 (a SQL_ASCII database
    stores whatever bytes it was given) as U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


# a JSON escape of a UTF-16 surrogate: json.loads turns an unpaired one into a lone surrogate,
# which no output can encode (jsonb refuses them, but a double-encoded value is a plain string)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE = re.compile("[\ud800-\udfff]")


def json_loads(text: str) -> Any:
    """json.loads with every lone surrogate the text escapes replaced by U+FFFD: the read
    boundary of text, so that every output format can encode what was read."""
    value = json.loads(text)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return scrub_surrogates(value)
    return value


def scrub_surrogates(value: Any) -> Any:
    """`value` (JSON data) with lone surrogates in its strings and keys replaced by U+FFFD."""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    return value


def decode_content(raw: Any) -> tuple[Any, str]:
    """Undo double encoding. Returns (value, shape)."""
    if isinstance(raw, UnreadableJSON):
        return raw, "unreadable"
    value, shape = raw, None
    for _ in range(_MAX_DECODE_DEPTH):
        if not isinstance(value, str):
            break
        stripped = value.strip()
        if not stripped or stripped[0] not in '{["':
            break
        try:
            decoded = json_loads(stripped)
        except (ValueError, RecursionError):
            break
        if isinstance(decoded, str) and decoded == value:
            break
        value, shape = decoded, "double-encoded"
    if shape:
        return value, shape
    if isinstance(value, dict):
        return value, "object"
    if isinstance(value, str):
        return value, "string"
    if isinstance(value, list):
        return value, "array"
    if value is None:
        return value, "null"
    return value, "scalar"


OUTPUT_HEAD = 240  # characters of a tool row's output that a slim row carries (output_head)


def output_head(content: Any) -> str | None:
    """What the output_head column holds for a tool row's normalised content, computed here
    (a row built in memory, or one the database shipped whole)."""
    if not isinstance(content, dict):
        return None
    for key in ("output", "content", "text"):
        if isinstance(content.get(key), str):
            return content[key][:OUTPUT_HEAD]
    value = content.get("output")
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text[:OUTPUT_HEAD] if len(text) < 16384 else None


_MASK_ARGUMENTS = re.compile(r"[0-9a-f]{8,}|[0-9]+|\s+", re.I)


def call_digests(content: Any) -> str | None:
    """What the call_digests column holds for a message's normalised content, computed here (a
    row built in memory): per call, md5 of its arguments masked, then unmasked, 8 hex digits each."""
    calls = content.get("tool_calls") if isinstance(content, dict) else None
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list) or not calls:
        return None
    out = []
    for item in calls:
        value = None  # the first key present, as SQL's coalesce of `->` reads it (a JSON null too)
        if isinstance(item, dict):
            function = item.get("function")
            if "arguments" in item:
                value = item["arguments"]
            elif isinstance(function, dict) and "arguments" in function:
                value = function["arguments"]
            else:
                value = item.get("input")
        text = (value if isinstance(value, str) else jsonb_text(value))[:2048]
        out.append(_md5(_MASK_ARGUMENTS.sub("#", text))[:8] + _md5(text)[:8])
    return ",".join(out)


def jsonb_text(value: Any) -> str:
    """A JSON value as PostgreSQL prints a jsonb (keys by length, then bytes; ", " and ": ")."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode("utf-8")), k.encode("utf-8")))
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {jsonb_text(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
