"""Renderers: cards and tables to text, markdown and JSON. They format; they never decide."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from .card import Card, Outcome


class Format(str, enum.Enum):
    TEXT = "text"
    TABLE = "table"
    MARKDOWN = "markdown"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    HTML = "html"


# Text from the database reaches a terminal: every control character (C0 but newline, DEL, C1)
# and the bidirectional overrides become visible stand-ins, so no title or message can set the
# window title, write the clipboard, draw hyperlinks or reorder a line (OSC, CSI, Trojan Source).
_NEUTRAL = {c: chr(0x2400 + c) for c in range(0x20)}  # control pictures: ␛ ␇ ␈ ...
_NEUTRAL.update({0x09: "\t", 0x0A: "\n", 0x7F: "\u2421"})
_NEUTRAL.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_NEUTRAL.update({c: f"<U+{c:04X}>" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
# a lone surrogate cannot be encoded at all: U+FFFD (the read boundary replaces those it reads;
# this catches what a plugin made up)
_NEUTRAL.update({c: "\ufffd" for c in range(0xD800, 0xE000)})
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def neutralise(text: str) -> str:
    """`text` with every control character but newline and tab made visible."""
    return text.translate(_NEUTRAL) if _UNSAFE.search(text) else text


def _json_safe(text: str) -> str:
    # json.dumps escapes C0 itself; DEL, C1 and bidi overrides it leaves raw (valid JSON either way)
    if text.isascii() and "\x7f" not in text:  # an ASCII line (O(1) to tell) can only hold DEL of them
        return text
    return _JSON_UNSAFE.sub(_json_escape, text) if _JSON_UNSAFE.search(text) else text


def _json_escape(match: re.Match) -> str:
    code = ord(match.group())
    return "\ufffd" if 0xD800 <= code < 0xE000 else f"\\u{code:04x}"


def _short(session_id: str) -> str:
    return session_id[:8]


def _title(card: Card) -> str:
    title = " ".join((card.session.info.title or "").split())
    return title[:60] + ("…" if len(title) > 60 else "") if title else "(untitled)"


def _top_tools(card: Card) -> str:
    return ", ".join(f"{n}:{c}" for n, c in card.stats.top_tools) or "none"


def _outcome(card: Card) -> str:
    shown = f"{Outcome.SYMBOL.get(card.outcome, '')} {card.outcome}".strip()
    return f"{shown} — {card.outcome_reason}" if card.outcome_reason else shown


def card_fields(card: Card) -> list[tuple[str, str]]:
    """The runbook's section-5 fields, in order."""
    s = card.stats
    return [
        ("Messages", f"{s.messages} ({s.user_messages}/{s.assistant_messages})"),
        ("Tool calls", f"{s.tool_calls} across {s.turns_with_tool_calls} turns"),
        ("Top tools", _top_tools(card)),
        ("Objective", card.objective),
        ("Outcome", _outcome(card)),
        ("Blockers", "; ".join(card.blockers) or "none"),
        ("Fixes needed", "; ".join(f.rstrip(". ") for f in card.fixes) or "none"),
        ("Severity", card.severity.label),
    ]


def _evidence_line(e) -> str:
    where = []
    if e.message_id is not None:
        where.append(f"msg {e.message_id}")
    if e.turn is not None:
        where.append(f"turn {e.turn}")
    return f"{', '.join(where) or 'session'}: {e.excerpt}" if e.excerpt else ", ".join(where)


def card_text(card: Card) -> str:
    lines = [f'Session: {_short(card.session.id)} — "{_title(card)}"']
    lines += [f"{name}: {value}" for name, value in card_fields(card)]
    if card.findings:
        lines.append("")
        lines.append("Findings:")
        for f in card.findings:
            lines.append(f"  [{f.severity.label}] {f.code} {f.rule}: {f.message}")
            for e in f.evidence[:5]:
                lines.append(f"      {_evidence_line(e)}")
            more = len(f.evidence) - len(f.evidence[:5]) + f.evidence_omitted
            if more:
                lines.append(f"      … and {more} more")
    for skipped in card.skipped:
        lines.append(f"Skipped: {skipped['rule']} ({skipped['reason']})")
    for note in card.notes:
        lines.append(f"Note: {note}")
    for error in card.errors:
        lines.append(f"Rule error: {error.rule}: {error.type}: {error.message}")
    return neutralise("\n".join(lines))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def card_markdown(card: Card) -> str:
    lines = [f"### Session `{_short(card.session.id)}` — \"{_md_escape(_title(card))}\"", ""]
    lines += [f"- **{name}:** {_md_escape(value)}" for name, value in card_fields(card)]
    if card.findings:
        lines += ["", "| severity | rule | finding | evidence |", "|---|---|---|---|"]
        for f in card.findings:
            ev = "<br>".join(_md_escape(_evidence_line(e)) for e in f.evidence[:5])
            more = len(f.evidence) - len(f.evidence[:5]) + f.evidence_omitted
            ev += f"<br>… and {more} more" if more else ""
            lines.append(f"| {f.severity.label} | `{f.code}` {f.rule} | {_md_escape(f.message)} | {ev} |")
    for skipped in card.skipped:
        lines.append(f"\n_Skipped {skipped['rule']}: {_md_escape(skipped['reason'])}_")
    for note in card.notes:
        lines.append(f"\n_Note: {_md_escape(note)}_")
    for error in card.errors:
        lines.append(f"\n**Rule error** `{error.rule}`: {error.type}: {_md_escape(error.message)}")
    return neutralise("\n".join(lines))


def card_json(card: Card, *, indent: int | None = 2) -> str:
    return _json_safe(json.dumps(card.to_json(), ensure_ascii=False, indent=indent, default=str))


def render_card(card: Card, fmt: Format) -> str:
    if fmt == Format.JSON:
        return card_json(card)
    if fmt == Format.JSONL:
        return card_json(card, indent=None)
    if fmt == Format.MARKDOWN:
        return card_markdown(card)
    return card_text(card)


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], fmt: Format = Format.TABLE) -> str:
    """A table for people: plain text or GitHub markdown."""
    style = "github" if fmt == Format.MARKDOWN else "simple"
    cell = _md_cell if fmt == Format.MARKDOWN else _text_cell
    rows = [[cell(value) for value in row] for row in rows]
    return tabulate(rows, headers=headers, tablefmt=style, disable_numparse=True)


def _text_cell(value: Any) -> Any:
    # one line per row, as in markdown: a newline from the database would split the row
    return neutralise(value).replace("\n", " ") if isinstance(value, str) else value


def _md_cell(value: Any) -> Any:
    return neutralise(_md_escape(value)) if isinstance(value, str) else value


def to_json(value: Any, *, indent: int | None = 2) -> str:
    return _json_safe(json.dumps(value, ensure_ascii=False, indent=indent, default=str))


def human_bytes(n: int | float | None) -> str:
    if n is None:
        return "n/a"
    units = ["B", "kB", "MB", "GB", "TB"]
    value = float(n)
    for unit in units:
        if abs(value) < 1024 or unit == units[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
