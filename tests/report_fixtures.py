"""A database for the report's tests: the sample sessions plus one hostile session whose title,
model, messages and a 4 MB tool output try to run script, load images and break the page."""

from __future__ import annotations

import json
import uuid

import psycopg

HOSTILE_ID = str(uuid.UUID("ffffffff-0000-4000-8000-00000000beef"))
HOSTILE_TITLE = "</script><script>window.pwned=1</script> restart \u202egnp.exe"
HOSTILE_MODEL = "</script><img src=x onerror=window.pwned=2>"
HOSTILE_USER = "<script>window.pwned=3</script> please restart <img src=x onerror=window.pwned=4> \u202eevil"
BIG_OUTPUT_CHARS = 4 * 1024 * 1024


def add_hostile_session(dsn: str) -> None:
    """One failed session (an empty-response error card ends it) full of hostile text."""
    big = ("first line <script>window.pwned=5</script>\n" + ("x" * 1000 + "\n") * (BIG_OUTPUT_CHARS // 1001)
           + "</script><img src=x onerror=window.pwned=6> last line")
    messages = [
        ("user", {"text": HOSTILE_USER}),
        ("assistant", {"text": "Checking.", "tool_calls": [
            {"id": "c1", "name": "run", "arguments": {"command": "</script><script>window.pwned=7</script>"}}],
            "finish_reason": "tool_calls"}),
        ("tool", {"tool_call_id": "c1", "name": "run", "output": big, "is_error": False}),
        ("assistant", {"text": "", "error": "The model returned an empty response 3 times. <b>x</b>",
                       "finish_reason": "error"}),
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, model, created_at, updated_at)"
            " VALUES (%s, %s, 'failed', %s, '2026-11-20 10:00+00', '2026-11-20 10:05+00')",
            (HOSTILE_ID, HOSTILE_TITLE, HOSTILE_MODEL))
        for minute, (role, content) in enumerate(messages):
            conn.execute(
                "INSERT INTO messages (session_id, role, content, created_at)"
                " VALUES (%s, %s, %s::jsonb, '2026-11-20 10:00+00'::timestamptz + %s * interval '1 minute')",
                (HOSTILE_ID, role, json.dumps(content), minute))


LONG_ID = str(uuid.UUID("eeeeeeee-0000-4000-8000-00000000010e"))


def add_long_session(dsn: str, turns: int = 150, blank_every: int = 5) -> None:
    """A session of 2 * `turns` messages with a blank assistant reply every `blank_every` turns:
    more evidence than a report's transcript keeps messages for."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, model, created_at, updated_at)"
            " VALUES (%s, 'a long session with many blank replies', 'completed', 'gemini-2.5-pro',"
            " '2026-11-21 09:00+00', '2026-11-21 12:00+00')", (LONG_ID,))
        rows = []
        for turn in range(1, turns + 1):
            rows.append(("user", {"text": f"step {turn}, please"}))
            blank = turn % blank_every == 0
            rows.append(("assistant", {"text": "" if blank else f"done with step {turn}", "finish_reason": "stop"}))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO messages (session_id, role, content, created_at)"
                " VALUES (%s, %s, %s::jsonb, '2026-11-21 09:00+00'::timestamptz + %s * interval '10 seconds')",
                [(LONG_ID, role, json.dumps(content), i) for i, (role, content) in enumerate(rows)])
