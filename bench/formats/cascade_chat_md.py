"""Windsurf Cascade / Google Antigravity "export conversation" markdown, one chat a file.

Shape: `# Chat Conversation` (Antigravity) or `# Cascade Chat Conversation` (Windsurf), a note that the export
holds the chat's words only, then turns opened by `### User Input` and `### Planner Response` lines. The
agent's steps are italic lines between or after its responses, without their output:
`*Edited relevant file*`, `*Viewed [name](path) *`, `*User accepted the command `cmd`*`, `*Checked command
status*`, `*Grep searched codebase*`, `*Listed directory [name](path) *`, `*Searched filesystem*`,
`*Read terminal output: name*`, `*Generated image*`, ... Each becomes a `tool_calls` entry of the assistant
message it follows (a step before any response of the turn opens an assistant message with empty text)
and a `tool` row whose output is empty (the export does not keep it; never an error). A command the user
did not accept is not distinguishable from one that never ran; the step is kept as the export states it.

Times: the export has none: 2025-01-01T00:00Z plus 5 s per message. Keys: the file's path.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

TURN = re.compile(r"^### (User Input|Planner Response)[ \t]*$", re.M)
STEP = re.compile(r"^\*(?P<body>(?:Edited|Viewed|User accepted|User rejected|Checked|Grep searched|Listed|Searched|Read|"
                  r"Generated|Analyzed|Ran|Opened|Created|Deleted|Updated|Semantic searched|Read URL|Read page|"
                  r"Read resource|Browsed|Clicked|Captured|Running|MCP Tool)[^\n]*?)\s*\*[ \t]*$", re.M)
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _call(body: str, n: int) -> dict:
    body = body.strip()
    cmd = re.match(r"User (accepted|rejected) the command `(.*)`$", body, re.S)
    if cmd:
        return {"id": f"step{n}", "name": "run_command", "arguments": {"command": cmd.group(2), "decision": cmd.group(1)}}
    link = re.search(r"\[([^\]]*)\]\(([^)]*)\)", body)
    verb = re.sub(r"\s*\[.*$", "", body).split(":")[0].strip().lower().replace(" ", "_")
    args = {"summary": body}
    if link:
        args["path"] = link.group(2)
    return {"id": f"step{n}", "name": verb or "step", "arguments": args}


def parse(text: str):
    """[(role, text, [calls])] of one export."""
    text = text.replace("\r\n", "\n")
    marks = list(TURN.finditer(text))
    out = []
    n = 0
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[m.end():end]
        if m.group(1) == "User Input":
            # steps logged after the user's words belong to the agent's first (silent) response
            first = STEP.search(body)
            said = body[:first.start()] if first else body
            out.append(("user", said.strip(), []))
            if first:
                calls = []
                for s in STEP.finditer(body, first.start()):
                    n += 1
                    calls.append(_call(s.group("body"), n))
                out.append(("assistant", STEP.sub("", body[first.start():]).strip(), calls))
            continue
        calls = []
        for s in STEP.finditer(body):
            n += 1
            calls.append(_call(s.group("body"), n))
        out.append(("assistant", STEP.sub("", body).strip(), calls))
    return out


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        turns = parse(text)
        if not turns:
            continue
        rows = []
        at = START
        for role, said, calls in turns:
            if role == "user":
                rows.append({"role": "user", "content": {"text": said}, "created_at": at})
                at += timedelta(seconds=5)
                continue
            rows.append({"role": "assistant", "content": {"text": said, "tool_calls": calls,
                                                          "finish_reason": "tool_calls" if calls else "stop"},
                         "created_at": at})
            at += timedelta(seconds=5)
            for c in calls:
                rows.append({"role": "tool", "content": {"tool_call_id": c["id"], "name": c["name"], "output": "",
                                                         "is_error": False}, "created_at": at})
                at += timedelta(seconds=5)
        first = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
        yield {
            "key": path,
            "path": path,
            "session": {"title": first.strip().split("\n")[0][:80] or None, "status": None, "goal": None, "model": None,
                        "created_at": START, "extra": {"client": "windsurf-cascade/antigravity", "times": "synthetic"}},
            "messages": rows,
        }
