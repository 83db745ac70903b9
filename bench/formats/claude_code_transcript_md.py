"""Claude Code terminal transcripts saved as text or markdown (the `/export` text file, or the terminal
copied into a .md/.txt), one session a file.

Shape (what the terminal prints): an optional welcome box (`╭`/`│`/`╰` lines, the client's), then
- `> text` — what the user typed (lines that follow up to the next marker continue it);
- `⏺ text` — the agent's words (continuation lines follow);
- `⏺ Name(args)` or, when copied from a markdown renderer, `⏺ **Name**(args)` — a tool call (Bash, Read,
  Update, Write, Search, Task, MCP tools such as `serena - find_symbol (MCP)`), with its output on the
  following lines after `⎿` (often abbreviated by the terminal: "… +N lines");
- `⏺ User approved Claude's plan:` and similar lines the client prints — `system` rows;
- `✻ Thinking…` blocks — the next reply's `reasoning`.
Consecutive words/tool calls of the agent with no user line between are one assistant message per `⏺`
text block; a tool call joins the assistant message before it (or opens one with empty text), and its
output is a `tool` row. Errors: an output starting with "Error" is marked `is_error`.

Times: the transcript has none: 2025-01-01T00:00Z plus 5 s per message. Keys: the file's path.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
TOOL = re.compile(r"^⏺\s+(?:\*\*(?P<a>[^*\n]{1,80})\*\*|(?P<b>[A-Z][\w.-]{1,40}(?: - [^()\n]{1,60}\(MCP\))?))\((?P<args>.*)\)\s*$")
CLIENT = ("User approved Claude's plan", "User rejected", "Interrupted by user", "Compacted", "API Error")


def _blocks(text: str):
    """(kind, first line, [following lines]) with kind one of user, agent, tool-output, thinking, box."""
    kind, head, body = None, "", []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.replace("\u00a0", " ")
        stripped = line.lstrip()
        new = None
        if line.startswith("> ") or line == ">":
            new = "user"
        elif line.startswith("⏺"):
            new = "agent"
        elif stripped.startswith("⎿"):
            new = "tool-output"
        elif line.startswith("✻"):
            new = "thinking"
        elif line[:1] in ("╭", "│", "╰"):
            new = "box"
        if new is not None and not (new == "box" and kind == "box" and line[:1] == "│"):
            if kind is not None:
                yield kind, head, body
            kind, head, body = new, line, []
            if new == "box" and line[:1] == "╰":
                yield kind, head, body
                kind, head, body = None, "", []
            continue
        if kind is None:
            continue
        body.append(line)
    if kind is not None:
        yield kind, head, body


def parse(text: str):
    rows = []  # (role, content)
    reasoning = None
    n = 0
    last_call = None
    for kind, head, body in _blocks(text):
        said = "\n".join([head] + body)
        if kind == "box":
            continue
        if kind == "thinking":
            reasoning = "\n".join(body).strip() or None
            continue
        if kind == "user":
            rows.append(("user", {"text": re.sub(r"^>\s?", "", said).strip()}))
            last_call = None
            continue
        if kind == "tool-output":
            out = re.sub(r"^\s*⎿\s*", "", said).strip()
            if last_call is not None:
                rows.append(("tool", {"tool_call_id": last_call["id"], "name": last_call["name"], "output": out,
                                      "is_error": out.startswith("Error")}))
                last_call = None
            elif rows and rows[-1][0] == "tool":
                rows[-1][1]["output"] += "\n" + out
            continue
        # agent
        first = head[1:].strip()
        if first.startswith(CLIENT):
            rows.append(("system", {"text": "\n".join([first] + body).strip()}))
            last_call = None
            continue
        m = TOOL.match(head)
        if m:
            n += 1
            call = {"id": f"call{n}", "name": (m.group("a") or m.group("b")).strip(), "arguments": {"input": m.group("args")}}
            if rows and rows[-1][0] == "assistant" and not rows[-1][1].get("error"):
                content = rows[-1][1]
            else:
                content = {"text": "", "tool_calls": [], "finish_reason": "stop"}
                rows.append(("assistant", content))
            content["tool_calls"].append(call)
            content["finish_reason"] = "tool_calls"
            last_call = call
            continue
        content = {"text": "\n".join([first] + body).strip(), "tool_calls": [], "finish_reason": "stop"}
        if reasoning:
            content["reasoning"], reasoning = reasoning, None
        rows.append(("assistant", content))
        last_call = None
    return rows


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        parsed = parse(text)
        if not any(r == "user" for r, _ in parsed):
            continue
        rows = []
        for i, (role, content) in enumerate(parsed):
            rows.append({"role": role, "content": content, "created_at": START + timedelta(seconds=5 * i)})
        first = next((c["text"] for r, c in parsed if r == "user"), "")
        yield {
            "key": path,
            "path": path,
            "session": {"title": first.split("\n")[0][:80] or None, "status": None, "goal": None, "model": None,
                        "created_at": START, "extra": {"client": "claude-code (terminal transcript)", "times": "synthetic"}},
            "messages": rows,
        }
