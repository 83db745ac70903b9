"""A generated database with known signature rates before and after 2026-06-01 (440 sessions
over two months): compare's verdicts are known in advance, and the report has many days and
more sessions per signature than it lists with their card."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
from psycopg.types.json import Jsonb

SPLIT = datetime(2026, 6, 1, tzinfo=timezone.utc)
RATES = {  # rule -> (rate before, rate after): a real drop, a real rise, no change
    "empty-response": (0.30, 0.06),
    "retired-tool": (0.04, 0.24),
    "no-web-tool": (0.15, 0.15),
}


def _messages(rng: random.Random, fired: set[str]) -> list[tuple[str, dict]]:
    msgs: list[tuple[str, dict]] = [("user", {"text": "How full is the root disk on pve1?"})]
    if "retired-tool" in fired:
        msgs += [("assistant", {"text": "", "tool_calls": [{"id": "c1", "name": "request_execution",
                                                               "arguments": {"command": "df -h /"}}]}),
                 ("tool", {"tool_call_id": "c1", "name": "request_execution", "output": "42%", "is_error": False})]
    if "empty-response" in fired:
        msgs.append(("assistant", {"text": "", "tool_calls": [], "finish_reason": "stop"}))
    if "no-web-tool" in fired:
        msgs.append(("assistant", {"text": "No local knowledge on that. The release notes would tell.", "tool_calls": []}))
        msgs.append(("user", {"text": "Fine, what about the disk then?"}))
    msgs.append(("assistant", {"text": f"The root filesystem on pve1 is {rng.randint(20, 70)}% used.", "tool_calls": []}))
    return msgs


def build_known_rates(make_db) -> str:
    dsn = make_db()
    rng = random.Random(14)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        for period, start in ((0, SPLIT - timedelta(days=30)), (1, SPLIT)):
            for i in range(220):
                fired = {rule for rule, rates in RATES.items() if rng.random() < rates[period]}
                sid = str(uuid.UUID(int=rng.getrandbits(128)))
                at = start + timedelta(minutes=190 * i)
                model = "gemini-2.5-flash" if rng.random() < 0.7 else "gemini-2.5-pro"
                cur.execute("INSERT INTO sessions (id, title, status, model, created_at, updated_at)"
                            " VALUES (%s, 'disk', 'completed', %s, %s, %s)", (sid, model, at, at))
                cur.executemany("INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, %s, %s, %s)",
                                [(sid, role, Jsonb(content), at + timedelta(seconds=10 * n))
                                 for n, (role, content) in enumerate(_messages(rng, fired))])
        conn.commit()
    return dsn
