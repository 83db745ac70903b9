"""Cursor's own "Export chat" markdown (one chat a file, often committed as `cursor_<title>.md`; a title
in a non-Latin script leaves the name `cursor_.md`, `cursor_1.md`, ...).

Shape: `# <chat title>`, then `_Exported on <date> at <time> <zone> from Cursor (<version>)_`, then the
turns, each opened by a line `---`, a blank line and `**User**` or `**Cursor**`, then its text. The export
holds the words only: no tool calls, no tool output, no model name, no per-turn times (code the agent
wrote appears as fenced blocks inside its turn). Consecutive `**Cursor**` sections are kept as separate
assistant messages (Cursor writes one per model response between tool calls).

Times: the export stamp is read when its date is in a form we know: M/D/YYYY; D/M/YYYY when the first
number is over 12 or zero-padded or the zone is written the European/Brazilian way (UTC±N, CET, CEST, MEZ,
MESZ, BRT); YYYY/M/D (the Chinese locale puts the zone before the time); "YYYY. M. D." with Korean 시/분/초;
D.M.YYYY. It is taken as UTC with the zone's offset applied when it is GMT±N / UTC±N or one of a few
names (MEZ, MESZ, CET, CEST, BRT, EST, EDT, PST, PDT, MSK; others, e.g. the ambiguous CST, are read as
UTC). The chat starts at that stamp and each message is 5 s after the one before (the export has no turn
times). Without a readable stamp: 2025-01-01T00:00Z. An ambiguous M/D vs D/M date may still be read the
wrong way round: the stamp only orders a source's chats roughly.

Keys: the file's path within the source (files with the same messages are dropped by extract anyway).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

TITLE = re.compile(r"\A\s*# (.*)$", re.M)
HEADER = re.compile(r"^_Exported on (?P<stamp>.{4,80}?) from Cursor \((?P<version>[0-9.]+)\)_[ \t]*$", re.M)
TURN = re.compile(r"^---[ \t]*\n(?:[ \t]*\n)*\*\*(User|Cursor)\*\*[ \t]*$", re.M)
ZONE = re.compile(r"(?:GMT|UTC)([+-]\d{1,2})(?::?(\d\d))?")
NAMED = {"MEZ": 1, "CET": 1, "MESZ": 2, "CEST": 2, "BRT": -3, "EDT": -4, "EST": -5, "PDT": -7, "PST": -8, "MSK": 3}
FALLBACK = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _stamp(raw: str) -> datetime | None:
    raw = raw.strip()
    date = time = None
    m = re.match(r"(\d{4})\.\s*(\d{1,2})\.\s*(\d{1,2})\.?\s+at\s+(\d{1,2})시\s*(\d{1,2})분\s*(\d{1,2})초", raw)
    if m:
        y, mo, d, h, mi, s = map(int, m.groups())
        date, time = (y, mo, d), (h, mi, s)
    else:
        m = re.match(r"(\d{1,4})[/.](\d{1,2})[/.](\d{1,4})\.?\s+at\s+(?:GMT[+-]\d{1,2}(?::?\d\d)?\s+)?(\d{1,2}):(\d\d):(\d\d)(?:\s*([AP]M))?", raw)
        if not m:
            return None
        a, b, c, h, mi, s = map(int, m.groups()[:6])
        if m.group(7) == "PM" and h < 12:
            h += 12
        elif m.group(7) == "AM" and h == 12:
            h = 0
        if a > 31:  # YYYY/M/D
            date = (a, b, c)
        elif ("." in raw.split(" at ")[0] or a > 12 or raw[:1] == "0"
              or re.search(r"\b(UTC[+-]|CEST|CET|MESZ|MEZ|BRT)", raw)):  # D.M.YYYY, D/M/YYYY (non-US locales)
            date = (c, b, a)
        else:  # M/D/YYYY
            date = (c, a, b)
        time = (h, mi, s)
    try:
        when = datetime(*date, *time, tzinfo=timezone.utc)
    except ValueError:
        return None
    z = ZONE.search(raw)
    if z:
        sign = -1 if z.group(1).startswith("-") else 1
        when -= timedelta(hours=int(z.group(1)), minutes=sign * int(z.group(2) or 0))
    else:
        named = re.search(r"\b([A-Z]{3,4})\s*$", raw)
        if named and named.group(1) in NAMED:
            when -= timedelta(hours=NAMED[named.group(1)])
    return when


def parse(text: str):
    """(title, export stamp or None, Cursor version or None, [(role, text), ...]) of one export."""
    text = text.replace("\r\n", "\n")
    title = TITLE.search(text)
    header = HEADER.search(text[:4000])
    marks = list(TURN.finditer(text))
    turns = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = re.sub(r"\n---[ \t]*\s*\Z", "", text[m.end():end].strip()).strip()
        turns.append(("user" if m.group(1) == "User" else "assistant", body))
    return (title.group(1).strip() if title else None, _stamp(header.group("stamp")) if header else None,
            header.group("version") if header else None, turns)


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        title, stamp, version, turns = parse(text)
        if not turns:
            continue
        start = stamp or FALLBACK
        rows = []
        for n, (role, body) in enumerate(turns):
            at = start + timedelta(seconds=5 * n)
            if role == "user":
                rows.append({"role": "user", "content": {"text": body}, "created_at": at})
            else:
                rows.append({"role": "assistant", "content": {"text": body, "tool_calls": [], "finish_reason": "stop"},
                             "created_at": at})
        yield {
            "key": path,
            "path": path,
            "session": {"title": title, "status": None, "goal": None, "model": None, "created_at": start,
                        "extra": {"client": "cursor", "cursor_version": version, "export_stamp_read": stamp is not None}},
            "messages": rows,
        }
