"""SpecStory exports of Cursor / VS Code Copilot chats (`.specstory/history/*.md`), one session a file.

Turn headers are lines `_**User**_` / `_**Assistant**_` (SpecStory 0.x) or `_**User (2026-01-03
12:46Z)**_` / `_**Agent (model claude-4-sonnet, mode Agent)**_` (Markdown v2); sections are separated
by `---` lines. Tool use inside an assistant section is
- v2: `<tool-use data-tool-type="shell" data-tool-name="run_terminal_cmd"><details><summary>Tool use:
  **run_terminal_cmd** • Run command: …</summary> … </details></tool-use>`; the body holds the
  command and what it printed;
- 0.x: `<details><summary>Searched codebase "…" • **N** results</summary> … </details>`.
Each becomes an assistant `tool_calls` entry (name from `data-tool-name` or the summary, arguments
`{"summary": …}` plus `command` when the body starts with a fenced block) and a `tool` row with the
rest of the body. SpecStory marks no tool errors, so `is_error` is false. A `<think>` block or a
"Thought Process" summary is the reply's `reasoning`. Times: the user header's stamp when it has
one, else the file name's (`2025-06-01_10-00-00Z-…`), then 5 s per message, kept monotonic.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath

HEADER = re.compile(r"^_\*\*(User|Assistant|Agent|Cursor)(?:\s*\(([^)\n]*)\))?\*\*_[ \t]*$", re.M)
BLOCK = re.compile(r"<tool-use\b(?P<attrs>[^>]*)>(?P<tool>.*?)</tool-use>"
                   r"|<think>(?P<think>.*?)</think>"
                   r"|<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>", re.S)
INNER = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
TOOL_NAME = re.compile(r"Tool use:\s*\*\*([^*]+)\*\*")
FENCE = re.compile(r"^\s*```[\w-]*\n(.*?)\n```", re.S)
STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ _T](\d\d)[:-](\d\d)(?:[:-](\d\d))?Z?")
TITLE = re.compile(r"^# (.+?)(?: \([^)]*\))?\s*$", re.M)
MODEL = re.compile(r"model ([^,)]+)")


def _stamp(text):
    m = STAMP.search(text or "")
    if not m:
        return None
    y, mo, d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)
    except ValueError:
        return None


def _clean(text):
    return re.sub(r"(?:\n\s*---\s*)+$", "", text.strip()).strip()


def _assistant(rows, body, counter):
    pos = 0
    for m in BLOCK.finditer(body):
        said = _clean(body[pos:m.start()])
        pos = m.end()
        if said:
            rows.append({"role": "assistant", "content": {"text": said, "tool_calls": [], "finish_reason": "stop"}})
        thought = m.group("think")
        summary, inner = m.group("summary"), m.group("body")
        if m.group("tool") is not None:
            found = INNER.search(m.group("tool"))
            summary, inner = (found.group(1), found.group(2)) if found else ("", m.group("tool"))
            name = (re.search(r'data-tool-name="([^"]*)"', m.group("attrs") or "") or [None, None])[1]
        else:
            name = None
        if thought is not None or (summary or "").strip().startswith("Thought Process"):
            reasoning = _clean(re.sub(r"</?details>|<summary>.*?</summary>", "", thought if thought is not None else inner or "", flags=re.S))
            if rows and rows[-1]["role"] == "assistant" and not rows[-1]["content"]["tool_calls"]:
                rows[-1]["content"]["reasoning"] = "\n\n".join(x for x in (rows[-1]["content"].get("reasoning"), reasoning) if x)
            else:
                rows.append({"role": "assistant", "content": {"text": "", "tool_calls": [], "finish_reason": "stop",
                                                              "reasoning": reasoning}})
            continue
        found = TOOL_NAME.search(summary or "")
        name = name or (found.group(1).strip() if found else None) or (re.sub(r"<[^>]+>", "", summary or "").strip().split(" ")[0] or "tool")
        arguments = {"summary": re.sub(r"<[^>]+>", "", summary or "").strip()}
        fence = FENCE.match(inner or "")
        output = inner or ""
        if fence:
            arguments["command"] = fence.group(1)
            output = (inner or "")[fence.end():]
        counter[0] += 1
        call = {"id": f"call_{counter[0]}", "name": name, "arguments": arguments}
        if rows and rows[-1]["role"] == "assistant":
            rows[-1]["content"]["tool_calls"].append(call)
            rows[-1]["content"]["finish_reason"] = "tool_calls"
        else:
            rows.append({"role": "assistant", "content": {"text": "", "tool_calls": [call], "finish_reason": "tool_calls"}})
        rows.append({"role": "tool", "content": {"tool_call_id": call["id"], "name": name,
                                                 "output": _clean(output), "is_error": False}})
    said = _clean(body[pos:])
    if said:
        rows.append({"role": "assistant", "content": {"text": said, "tool_calls": [], "finish_reason": "stop"}})


def _sections(text):
    """(role, header extra, body) of each turn; header-like lines inside a tool block (a tool that
    printed a SpecStory file) are not turns."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"<tool-use\b.*?</tool-use>", text, re.S)]
    heads = [m for m in HEADER.finditer(text) if not any(a <= m.start() < b for a, b in spans)]
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        yield m.group(1), m.group(2), text[m.end():end]


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        text = text.replace("\r\n", "\n")
        name = PurePosixPath(path).name
        start = _stamp(name) or _stamp(text) or datetime(2025, 1, 1, tzinfo=timezone.utc)
        rows, counter, model = [], [0], None
        for who, extra, body in _sections(text):
            if who == "User":
                rows.append({"role": "user", "content": {"text": _clean(body)}, "created_at": _stamp(extra or "")})
            else:
                found = MODEL.search(extra or "")
                model = model or (found.group(1).strip() if found else None)
                _assistant(rows, body, counter)
        if not any(r["role"] == "user" for r in rows):
            continue
        previous = start
        for r in rows:
            t = r.get("created_at")
            r["created_at"] = previous = t if t and t >= previous else previous + timedelta(seconds=5)
        title = TITLE.search(text)
        yield {
            "key": PurePosixPath(path).stem[:120],
            "path": path,
            "session": {"title": title.group(1)[:80] if title else None, "status": None, "goal": None,
                        "model": model, "created_at": start},
            "messages": rows,
        }
