"""Databases of the shapes a report's charts and tables must read well on: a sparse one (230
sessions over six months, most of them in the last three weeks, many weeks without any), a
dense one (a dozen sessions every day for two months, many signatures and long model names).
The empty selection is a report of either with a `--since` past its last session."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
from psycopg.types.json import Jsonb

SPARSE_START = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)
BURST_START = datetime(2026, 11, 9, 8, tzinfo=timezone.utc)  # the three busy weeks
DENSE_START = datetime(2026, 9, 1, 8, tzinfo=timezone.utc)
LONG_MODELS = ("gemini-2.5-flash", "gemini-2.5-pro", "anthropic/claude-sonnet-4-5-20250929-eu-west-deployment",
               "openrouter/qwen/qwen3-coder-480b-a35b-instruct-with-a-very-long-name")


def _messages(rng: random.Random, fired: set[str]) -> list[tuple[str, dict]]:
    """A short disk question whose transcript shows exactly the signatures in `fired`."""
    msgs: list[tuple[str, dict]] = [("user", {"text": "How full is the root disk on pve1?"})]
    if "retired-tool" in fired:
        msgs += [("assistant", {"text": "", "tool_calls": [{"id": "c1", "name": "request_execution",
                                                               "arguments": {"command": "df -h /"}}]}),
                 ("tool", {"tool_call_id": "c1", "name": "request_execution", "output": "42%", "is_error": False})]
    if "tool-fanout" in fired:
        calls = [{"id": f"f{i}", "name": "run", "arguments": {"command": f"df -h /mnt/{i}"}} for i in range(35)]
        msgs.append(("assistant", {"text": "", "tool_calls": calls}))
        msgs += [("tool", {"tool_call_id": f"f{i}", "name": "run", "output": "1%", "is_error": False}) for i in range(35)]
    if "empty-response" in fired:
        msgs.append(("assistant", {"text": "", "tool_calls": [], "finish_reason": "stop"}))
    if "cant-run" in fired:
        msgs.append(("assistant", {"text": "I can't run commands on pve1: there is no shell tool here.", "tool_calls": []}))
    if "user-frustration" in fired:
        msgs.append(("user", {"text": "No, I said the root disk. You have the run tool, use it."}))
    if "no-web-tool" in fired:
        msgs.append(("assistant", {"text": "No local knowledge on that. The release notes would tell.", "tool_calls": []}))
        msgs.append(("user", {"text": "Fine, what about the disk then?"}))
    msgs.append(("assistant", {"text": f"The root filesystem on pve1 is {rng.randint(20, 70)}% used.", "tool_calls": []}))
    if "unfinished-session" in fired:
        msgs.append(("user", {"text": "And the one on pve2?"}))
    return msgs


def _insert(conn, rng: random.Random, at: datetime, model: str, fired: set[str]) -> None:
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    with conn.cursor() as cur:
        cur.execute("INSERT INTO sessions (id, title, status, model, created_at, updated_at)"
                    " VALUES (%s, %s, 'completed', %s, %s, %s)",
                    (sid, f"disk on pve1 ({', '.join(sorted(fired)) or 'clean'})", model, at, at))
        cur.executemany("INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, %s, %s, %s)",
                        [(sid, role, Jsonb(content), at + timedelta(seconds=10 * n))
                         for n, (role, content) in enumerate(_messages(rng, fired))])


def build_sparse(make_db) -> str:
    """230 sessions: 20 over the five months from June (in a handful of weeks, most weeks
    empty), then 210 in the three weeks from 9 November; three signatures."""
    dsn = make_db()
    rng = random.Random(35)
    rates = {"empty-response": 0.2, "no-web-tool": 0.1, "retired-tool": 0.15}
    early_weeks = [0, 1, 5, 6, 11, 16, 17]  # weeks after 1 June with a session or a few
    with psycopg.connect(dsn) as conn:
        for n in range(20):
            at = SPARSE_START + timedelta(weeks=early_weeks[n % len(early_weeks)], hours=7 * n)
            _insert(conn, rng, at, "gemini-2.5-flash", {r for r, p in rates.items() if rng.random() < p})
        for n in range(210):
            at = BURST_START + timedelta(minutes=(21 * 24 * 60 - 60) * n / 210)
            _insert(conn, rng, at, rng.choice(LONG_MODELS[:2]), {r for r, p in rates.items() if rng.random() < p})
        conn.commit()
    return dsn


def build_dense(make_db) -> str:
    """720 sessions: twelve a day for sixty days, seven signatures, four models (two with long names)."""
    dsn = make_db()
    rng = random.Random(36)
    rates = {"empty-response": 0.12, "no-web-tool": 0.08, "retired-tool": 0.05, "cant-run": 0.1,
             "user-frustration": 0.07, "unfinished-session": 0.06, "tool-fanout": 0.03}
    with psycopg.connect(dsn) as conn:
        for day in range(60):
            for n in range(12):
                at = DENSE_START + timedelta(days=day, minutes=55 * n)
                _insert(conn, rng, at, LONG_MODELS[(day + n) % len(LONG_MODELS)],
                        {r for r, p in rates.items() if rng.random() < p})
        conn.commit()
    return dsn
