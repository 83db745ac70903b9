"""Renderers: cards and tables to text, markdown and JSON. They format; they never decide."""

from __future__ import annotations

import contextvars
import enum
import json
import os
import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from .card import Card, Outcome
from .fixes import nomos_names


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


def _title(card: dict[str, Any]) -> str:
    title = " ".join((card["session"].get("title") or "").split())
    return title[:60] + ("…" if len(title) > 60 else "") if title else "(untitled)"


# ------------------------------------------------------------------ widths
WIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("nomos_forensics_wide", default=False)
DEFAULT_WIDTH = 100  # output that is not a terminal (a file, a pipe) is laid out for 100 columns
CARD_WIDTH = 100  # a card is never wider, whatever the terminal: lines past that read badly
MIN_WIDTH = 40


def output_width() -> int | None:
    """The columns text output is laid out for: `$COLUMNS`, else the terminal's, else 100; None
    with `--wide` (nothing wrapped or cut)."""
    if WIDE.get():
        return None
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    try:
        if sys.stdout.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or char in "\u200b\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Columns `text` takes on a terminal (wide East Asian characters and emoji take two)."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def _cut_to(text: str, width: int) -> tuple[str, str]:
    """The longest head of `text` that fits `width` columns (at least one character), and the rest."""
    used = 0
    for index, char in enumerate(text):
        used += _char_width(char)
        if used > width and index:
            return text[:index], text[index:]
    return text, ""


def wrap(text: str, width: int | None, first: str = "", rest: str = "") -> list[str]:
    """`text` (one line) word-wrapped to `width` columns, the first line after `first`, the others
    after `rest`; a word longer than a line is cut where the line ends. None: one line."""
    text = " ".join(text.split())
    if width is None:
        return [first + text]
    lines: list[str] = []
    line, used = first, display_width(first)
    fresh = True  # nothing on this line after its prefix yet
    for word in text.split(" "):
        size = display_width(word)
        if not fresh and used + 1 + size > width:
            lines.append(line)
            line, used, fresh = rest, display_width(rest), True
        if not fresh:
            line, used = line + " ", used + 1
        while used + size > width and width - used >= 1:  # a word longer than the line: cut it
            head, word = _cut_to(word, width - used)
            lines.append(line + head)
            line, used = rest, display_width(rest)
            size = display_width(word)
        line, used, fresh = line + word, used + size, False
    lines.append(line)
    return lines


# ------------------------------------------------------------------ the card
def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def fix_items(card: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per distinct fix, most severe first: the rules it comes from, its text, and the
    Nomos-only names it relies on (none for an operator's own fix text)."""
    items: dict[str, dict[str, Any]] = {}
    for finding in card["findings"]:  # the card's order: most severe first
        fix = (finding.get("fix") or "").strip()
        if not fix:
            continue
        item = items.setdefault(fix, {"rules": [], "fix": fix.rstrip(". "), "nomos": [],
                                      "source": finding.get("fix_source", "rule")})
        if finding["rule"] not in item["rules"]:
            item["rules"].append(finding["rule"])
        names = finding.get("fix_nomos")
        if names is None and item["source"] == "rule":  # a card written before the field was
            names = nomos_names(fix)
        item["nomos"] = list(dict.fromkeys([*item["nomos"], *(names or [])]))
    return list(items.values())


def fix_line(item: dict[str, Any]) -> str:
    marker = f" [Nomos: {', '.join(item['nomos'])}]" if item["nomos"] else ""
    return f"{', '.join(item['rules'])}{marker}: {item['fix']}"


NOMOS_FIX_HINT = "[Nomos: …]: the fix names Nomos tools or files; set your own per rule under [fixes] in the config"


def card_fields(card: dict[str, Any]) -> list[tuple[str, str | list[str]]]:
    """The runbook's section-5 fields, in order, from a card's JSON (`Card.to_json()`), so that
    text, markdown and HTML show the same words: every count labelled, and one turn count (a turn
    is a user message and what follows it up to the next one, card.py)."""
    s = card["stats"]
    turns = s["turns"]
    other = s["messages"] - s["user_messages"] - s["assistant_messages"] - s["tool_messages"]
    roles = f"{s['user_messages']} user, {s['assistant_messages']} assistant, {s['tool_messages']} tool"
    roles += f", {other} other" if other > 0 else ""
    calls = s["tool_calls"]
    with_calls = s.get("turns_with_tool_calls", 0)
    outcome = f"{Outcome.SYMBOL.get(card['outcome'], '')} {card['outcome']}".strip()
    if card.get("outcome_reason"):
        outcome += f" — {card['outcome_reason']}"
    severity = card["severity"] + (f" — {card['outcome_note']}" if card.get("outcome_note") else "")
    return [
        ("Messages", f"{s['messages']} ({roles}) in {_plural(turns, 'turn')}"),
        ("Tool calls", f"{calls}, in {with_calls} of {_plural(turns, 'turn')}" if calls else "none"),
        ("Top tools", ", ".join(f"{t['name']} ×{t['count']}" for t in s["top_tools"]) or "none"),
        ("Objective", card["objective"]),
        ("Outcome", outcome),
        ("Blockers", list(card["blockers"]) or "none"),
        ("Fixes needed", [fix_line(item) for item in fix_items(card)] or "none"),
        ("Severity", severity),
    ]


def _evidence_line(e: dict[str, Any]) -> str:
    where = []
    if e.get("message_id") is not None:
        where.append(f"msg {e['message_id']}")
    if e.get("turn") is not None:
        where.append(f"turn {e['turn']}")
    return f"{', '.join(where) or 'session'}: {e['excerpt']}" if e.get("excerpt") else ", ".join(where)


def card_text(card: Card | dict[str, Any], width: int | None = -1) -> str:
    """The card for a terminal: fields, fixes as a bulleted list, findings with their evidence,
    word-wrapped to `width` columns (default: the output's, at most CARD_WIDTH; None: unwrapped)."""
    data = card.to_json() if isinstance(card, Card) else card
    if width == -1:
        width = output_width()
        width = None if width is None else min(width, CARD_WIDTH)
    lines = wrap(f'Session: {_short(data["session"]["id"])} — "{_title(data)}"', width, rest="  ")
    for name, value in card_fields(data):
        if isinstance(value, str):
            lines += wrap(f"{name}: {value}", width, rest="  ")
        elif len(value) == 1 and name != "Fixes needed":
            lines += wrap(f"{name}: {value[0]}", width, rest="  ")
        else:
            lines.append(f"{name}:")
            for item in value:
                lines += wrap(item, width, first="  - ", rest="    ")
            if name == "Fixes needed" and any(item["nomos"] for item in fix_items(data)):
                lines += wrap(f"({NOMOS_FIX_HINT})", width, first="  ", rest="   ")
    if data["findings"]:
        lines.append("")
        lines.append("Findings:")
        for f in data["findings"]:
            lines += wrap(f"[{f['severity']}] {f['code']} {f['rule']}: {f['message']}", width, first="  ", rest="      ")
            for e in f["evidence"][:5]:
                lines += wrap(_evidence_line(e), width, first="      ", rest="        ")
            more = len(f["evidence"]) - len(f["evidence"][:5]) + f.get("evidence_omitted", 0)
            if more:
                lines.append(f"      … and {more} more")
    for skipped in data.get("skipped_rules", []):
        lines += wrap(f"Skipped: {skipped['rule']} ({skipped['reason']})", width, rest="  ")
    for note in data.get("notes", []):
        lines += wrap(f"Note: {note}", width, rest="  ")
    for error in data["errors"]:
        lines += wrap(f"Rule error: {error['rule']}: {error['type']}: {error['message']}", width, rest="  ")
    return neutralise("\n".join(lines))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def card_markdown(card: Card | dict[str, Any]) -> str:
    data = card.to_json() if isinstance(card, Card) else card
    lines = [f"### Session `{_short(data['session']['id'])}` — \"{_md_escape(_title(data))}\"", ""]
    for name, value in card_fields(data):
        if isinstance(value, str):
            lines.append(f"- **{name}:** {_md_escape(value)}")
        else:
            lines.append(f"- **{name}:**")
            lines += [f"  - {_md_escape(item)}" for item in value]
    if any(item["nomos"] for item in fix_items(data)):
        lines.append(f"\n_({_md_escape(NOMOS_FIX_HINT)})_")
    if data["findings"]:
        lines += ["", "| severity | rule | finding | evidence |", "|---|---|---|---|"]
        for f in data["findings"]:
            ev = "<br>".join(_md_escape(_evidence_line(e)) for e in f["evidence"][:5])
            more = len(f["evidence"]) - len(f["evidence"][:5]) + f.get("evidence_omitted", 0)
            ev += f"<br>… and {more} more" if more else ""
            lines.append(f"| {f['severity']} | `{f['code']}` {f['rule']} | {_md_escape(f['message'])} | {ev} |")
    for skipped in data.get("skipped_rules", []):
        lines.append(f"\n_Skipped {skipped['rule']}: {_md_escape(skipped['reason'])}_")
    for note in data.get("notes", []):
        lines.append(f"\n_Note: {_md_escape(note)}_")
    for error in data["errors"]:
        lines.append(f"\n**Rule error** `{error['rule']}`: {error['type']}: {_md_escape(error['message'])}")
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


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], fmt: Format = Format.TABLE,
          width: int | None = -1) -> str:
    """A table for people: plain text or GitHub markdown. A text table wider than `width`
    columns (default: the output's, `output_width`; None: no limit) has its widest text columns
    word-wrapped until it fits; numbers are never wrapped. Markdown is left to its renderer."""
    style = "github" if fmt == Format.MARKDOWN else "simple"
    cell = _md_cell if fmt == Format.MARKDOWN else _text_cell
    rows = [[cell(value) for value in row] for row in rows]
    if fmt != Format.MARKDOWN:
        if width == -1:
            width = output_width()
        if width is not None and rows:
            fitted, fitted_headers = _fit(rows, list(headers), width)
            text = tabulate(fitted, headers=fitted_headers, tablefmt=style, disable_numparse=True)
            if max(map(display_width, text.splitlines())) <= width:
                return text
            if len(rows) == 1:  # one row of many figures (an overview): a line per figure
                return tabulate([[h, v] for h, v in zip(headers, rows[0])], tablefmt=style, disable_numparse=True)
            return _records(rows, list(headers), width)  # too many columns to wrap: a block per row
    return tabulate(rows, headers=headers, tablefmt=style, disable_numparse=True)


GAP = 2  # columns between two columns of a "simple" table
PAD = 2  # tabulate makes a column at least its header's width plus this
NARROWEST = 8  # a wrapped text column keeps at least this many columns
LONGEST_WORD = 20  # words up to this wide are not broken when a column is wrapped
IDENTIFIER = 32  # a column of single words up to this wide (rule names, ids, tools) is never wrapped


def _fit(rows: list[list[Any]], headers: list[str], width: int) -> tuple[list[list[Any]], list[str]]:
    """Rows and headers with cells wrapped so that the table fits `width` columns, when it can."""
    texts = [["" if v is None else str(v) for v in row] for row in rows]
    count = len(headers)
    cells = [max([0, *(display_width(r[i]) for r in texts if i < len(r))]) for i in range(count)]
    natural = [max(display_width(headers[i]) + PAD, cells[i]) for i in range(count)]
    total = sum(natural) + GAP * (count - 1)
    if total <= width:
        return rows, headers
    word = [max([0, *(display_width(w) for w in headers[i].split())]) + PAD for i in range(count)]
    numeric = [all(_NUMBER.match(r[i]) for r in texts if i < len(r) and r[i]) for i in range(count)]
    # numbers and identifiers (rule names, ids: no space in any cell) are never broken
    whole = [numeric[i] or (cells[i] <= IDENTIFIER and not any(" " in r[i] for r in texts if i < len(r)))
             for i in range(count)]
    longest = [min(LONGEST_WORD, max([0, *(display_width(w) for r in texts if i < len(r) for w in r[i].split())]))
               for i in range(count)]
    floor = [max(word[i], cells[i]) if whole[i] else min(natural[i], max(word[i], longest[i], NARROWEST))
             for i in range(count)]
    widths = list(natural)
    while total > width:
        shrinkable = [i for i in range(count) if widths[i] > floor[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
        total -= 1
    wrapped_rows = [[_wrap_cell(value, widths[i]) if widths[i] < cells[i] and isinstance(value, str) else value
                     for i, value in enumerate(row)] for row in rows]
    wrapped_headers = [_wrap_cell(h, widths[i] - PAD) for i, h in enumerate(headers)]
    return wrapped_rows, wrapped_headers


def _records(rows: list[list[Any]], headers: list[str], width: int) -> str:
    """Each row as its first cell, then `header value` pairs, wrapped: what a table too wide for
    the terminal becomes."""
    lines: list[str] = []
    for row in rows:
        cells = ["" if v is None else str(v) for v in row]
        lines += wrap(cells[0], width)
        pairs = "; ".join(f"{h} {v}" for h, v in zip(headers[1:], cells[1:]) if v)
        lines += wrap(pairs, width, first="  ", rest="  ")
    return "\n".join(lines)


_NUMBER = re.compile(r"^[-+]?[\d,.]+\s*(%|[kMGT]?B|kB|pts)?$")


def _wrap_cell(value: str, width: int) -> str:
    return "\n".join(wrap(value, width)) if display_width(value) > width else value


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
