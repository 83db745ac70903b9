"""bench/generate.py at a tiny size: exact row counts, every signature and messy shape present."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import psycopg.conninfo
import pytest

from nomos_forensics import devdb

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "bench" / "generate.py"
_spec = importlib.util.spec_from_file_location("bench_textpools", ROOT / "bench" / "textpools.py")
textpools = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(textpools)
FOREIGN = {text for texts in textpools.FOREIGN_REPLIES.values() for text in texts}
SIGNATURES = ("cant-run", "no-web-tool", "empty-response", "non-english-refusal", "tool-fanout",
              "oversized-message")


@pytest.fixture(scope="module")
def bench_db(admin_dsn, tmp_path_factory):
    name = f"nomos_forensics_benchtest_{uuid.uuid4().hex[:8]}"
    meta_path = tmp_path_factory.mktemp("bench") / "meta.json"
    dsn = psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)
    try:
        proc = subprocess.run(
            [sys.executable, str(GENERATOR), "--dsn", admin_dsn, "--dbname", name,
             "--messages", "3000", "--sessions", "100", "--seed", "7", "--meta", str(meta_path), "--quiet"],
            capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        yield dsn, json.loads(meta_path.read_text())
    finally:
        devdb.drop_database(admin_dsn, dsn)


def test_counts_and_meta(bench_db):
    dsn, meta = bench_db
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 100
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 3000
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == 20
        # every message belongs to a session; ids continue after the loaded ones
        assert conn.execute("SELECT count(*) FROM messages m WHERE NOT EXISTS "
                            "(SELECT 1 FROM sessions s WHERE s.id = m.session_id)").fetchone()[0] == 0
        assert conn.execute("SELECT nextval(pg_get_serial_sequence('messages', 'id'))").fetchone()[0] == 3001
        long_id = meta["long_session"]["id"]
        n = conn.execute("SELECT count(*) FROM messages WHERE session_id = %s", (long_id,)).fetchone()[0]
        assert n == meta["long_session"]["messages"] == 300  # messages/10 on a tiny database
        for table in ("audit_log", "nomos_plans", "nomos_plan_steps", "nomos_plan_executions"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0, table
            assert meta["counts"][table] > 0
        assert conn.execute("SELECT count(*) FROM nomos_plan_steps WHERE status = 'replaced'").fetchone()[0] > 0
        assert conn.execute("SELECT count(*) FROM audit_log WHERE session_id IS NULL").fetchone()[0] > 0
        # the index the migrations define is back after the load
        assert conn.execute("SELECT to_regclass('messages_session_id_id_idx')").fetchone()[0] is not None
    assert meta["counts"]["messages"] == 3000
    assert meta["sizes"]["messages_total_bytes"] > 0


def test_every_signature_is_present(bench_db):
    dsn, meta = bench_db
    with psycopg.connect(dsn) as conn:
        per_label = dict(conn.execute(
            "SELECT label, count(DISTINCT session_id) FROM bench.labels GROUP BY 1").fetchall())
        for sig in SIGNATURES:
            assert per_label.get(sig, 0) >= 1, sig
            assert meta["signatures"][sig]["sessions"] == per_label[sig]

        def labelled(sig: str) -> list[tuple]:
            return conn.execute(
                "SELECT m.role, m.content, m.session_id FROM bench.labels l JOIN messages m ON m.id = l.message_id "
                "WHERE l.label = %s", (sig,)).fetchall()

        # cant-run / no-web-tool / non-english: canonical assistant text
        for role, content, _ in labelled("cant-run"):
            assert role == "assistant" and any(w in content["text"].lower() for w in ("can't", "can’t", "cannot", "unable", "not able"))
        for role, content, sid in labelled("no-web-tool"):
            assert role == "assistant" and "knowledge" in content["text"].lower()
            web = conn.execute(
                "SELECT count(*) FROM messages WHERE session_id = %s AND content::text LIKE '%%http_get%%'", (sid,)).fetchone()[0]
            assert web == 0
        for role, content, _ in labelled("non-english-refusal"):
            assert role == "assistant" and content["text"] in FOREIGN
        # empty-response: no text, no tool calls
        for role, content, _ in labelled("empty-response"):
            assert role == "assistant"
            assert not (content.get("text") or "").strip() and not content.get("tool_calls")
        # oversized: > 50 KiB of logical JSON
        big = conn.execute("SELECT count(*) FROM bench.labels l JOIN messages m ON m.id = l.message_id "
                           "WHERE l.label = 'oversized-message' AND octet_length(m.content::text) <= 51200").fetchone()[0]
        assert big == 0
        assert meta["oversized_check"]["over_not_labelled"] == 0
        assert meta["oversized_check"]["ambiguous_50000_51200"] == 0
        # tool-fanout: > 30 calls of one tool within the turn that starts at the labelled message
        for sid, in conn.execute("SELECT DISTINCT session_id FROM bench.labels WHERE label = 'tool-fanout'"):
            counts = conn.execute("""
                WITH m AS (SELECT id, role, content,
                                  count(*) FILTER (WHERE role = 'user') OVER (ORDER BY created_at, id) AS turn
                           FROM messages WHERE session_id = %s)
                SELECT max(n) FROM (
                    SELECT turn, coalesce(c ->> 'name', c -> 'function' ->> 'name') AS tool, count(*) AS n
                    FROM m, jsonb_array_elements(CASE jsonb_typeof(content -> 'tool_calls')
                                                 WHEN 'array' THEN content -> 'tool_calls' ELSE '[]' END) c
                    WHERE role = 'assistant' GROUP BY 1, 2) x""", (sid,)).fetchone()[0]
            assert counts > 30
        # near misses are labelled too
        for near in ("near:can-run-later", "near:no-web-with-fetch", "near:fanout-30", "near:foreign-user"):
            assert per_label.get(near, 0) >= 1, near


def test_messy_shapes_and_tools(bench_db):
    dsn, meta = bench_db
    with psycopg.connect(dsn) as conn:
        types = dict(conn.execute("SELECT jsonb_typeof(content), count(*) FROM messages GROUP BY 1").fetchall())
        assert types.get("string", 0) > 0 and types.get("array", 0) > 0 and types.get("null", 0) > 0
        names = {r[0] for r in conn.execute(
            "SELECT DISTINCT jsonb_path_query(content, 'lax $.tool_calls[*].name') #>> '{}' FROM messages "
            "WHERE jsonb_typeof(content) = 'object'")}
        assert {"run", "list_lxcs", "propose_plan", "complete_task", "upsert_knowledge", "http_get"} <= names
        legacy = conn.execute("SELECT count(*) FROM messages WHERE role = 'assistant' AND content ? 'tool_results'").fetchone()[0]
        assert legacy > 0
        assert conn.execute("SELECT count(*) FROM messages WHERE jsonb_typeof(content -> 'tool_calls') = 'array' "
                            "AND jsonb_path_exists(content, '$.tool_calls[*].arguments ? (@.type() == \"string\")')"
                            ).fetchone()[0] > 0
    shapes = meta["messy_shapes"]
    for key in ("double_encoded", "bare_string", "array", "null_content", "nameless_call", "arguments_string",
                "legacy_tool_results"):
        assert shapes[key] > 0, key
