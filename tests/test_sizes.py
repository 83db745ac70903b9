"""`nomos-forensics sizes` against real databases with known content: catalog figures, exact and
sampled message figures, degraded figures under lock and statement timeouts, older schemas."""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from nomos_forensics import sizes as sizes_mod
from nomos_forensics.cli import run
from nomos_forensics.sizes.catalog import CatalogFigures
from nomos_forensics.testing import insert_case

from .helpers import script

LIMIT = 50 * 1024
SOURCES = {"catalog", "estimate", "sample", "exact"}
WORDS = ("lxc container nginx restart status ok error failed disk memory cpu load uptime kernel "
         "systemd journal unit active running host backup rsync apt upgrade").split()
BASE = datetime(2026, 11, 1, tzinfo=timezone.utc)


# ------------------------------------------------------------------ data
def _corpus(seed: int = 5, size: int = 400_000) -> str:
    rng = random.Random(seed)
    words = [rng.choice(WORDS) + (str(rng.randint(0, 99_999)) if rng.random() < 0.4 else "")
             for _ in range(size // 7)]
    return " ".join(words)


CORPUS = _corpus()


def _text(rng: random.Random, size: int) -> str:
    """Log-like text that compresses about 2-3x (a slice of a random-word corpus)."""
    size = min(size, len(CORPUS))
    start = rng.randrange(0, len(CORPUS) - size + 1)
    return CORPUS[start:start + size]


def populate(dsn: str, *, sessions: int = 200, per_session: int = 30, seed: int = 11) -> None:
    """Sessions whose messages interleave like concurrent chats; about 4% of tool outputs over 50 KB."""
    rng = random.Random(seed)
    sids = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(sessions)]
    slots = [(sid, j) for sid in sids for j in range(per_session)]
    rng.shuffle(slots)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy("COPY sessions (id, title, status, created_at) FROM STDIN") as copy:
            for i, sid in enumerate(sids):
                copy.write_row((sid, f"session {i} | piped", "completed", BASE + timedelta(minutes=i)))
        with cur.copy("COPY messages (session_id, role, content, created_at) FROM STDIN") as copy:
            for k, (sid, j) in enumerate(slots):
                role, content = _message(rng, k, j)
                copy.write_row((sid, role, json.dumps(content), BASE + timedelta(seconds=k)))
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def _message(rng: random.Random, k: int, j: int):
    r = rng.random()
    if j == 0:
        return "user", {"text": _text(rng, rng.randint(20, 300))}
    if r < 0.35:
        return "assistant", {"text": _text(rng, rng.randint(0, 400)), "finish_reason": "tool_calls",
                             "tool_calls": [{"id": f"call_{k}", "name": rng.choice(["run", "list_lxcs"]),
                                             "arguments": {"command": _text(rng, 40)}}]}
    if r < 0.80:
        size = (int(rng.uniform(52, 160) * 1024) if rng.random() < 0.09
                else int(rng.uniform(17, 40) * 1024) if rng.random() < 0.05
                else int(rng.lognormvariate(6, 1.3)))
        name = rng.choice(["run", "run", "list_lxcs", "http_get"])
        return "tool", {"tool_call_id": f"call_{k}", "name": name, "output": _text(rng, size),
                        "is_error": False}
    return "assistant", {"text": _text(rng, rng.randint(0, 1500)), "finish_reason": "stop"}


ODD_CASE = {
    "name": "odd shapes",
    "messages": [
        {"user": "show me the logs"},
        {"raw": {"role": "assistant", "content": json.dumps({"text": "double " + "encoded " * 9000})}},
        {"raw": {"role": "assistant", "content": {
            "text": "legacy", "tool_calls": [{"id": "c1", "name": "run", "arguments": "{}"}],
            "tool_results": [{"tool_call_id": "c1", "name": "run", "output": "y" * 90_000,
                              "is_error": False}]}}},
        {"raw": {"role": "assistant", "content": {"text": "legacy, several", "tool_results": [
            {"name": "list_lxcs", "output": {"lxcs": [101, 102], "note": "tab\there"}, "tool_call_id": "x"},
            {"name": "http_get", "output": "q\"uoted " * 3000}, "a bare string result", {"name": "run"}]}}},
        {"raw": {"role": "assistant", "content": None}},
        {"raw": {"role": "assistant", "content": ["an", "array"]}},
        {"raw": {"role": "tool", "content": {"name": "run", "output": {"rows": ["z" * 70_000]}}}},
        {"raw": {"role": "tool", "content": {"output": "unnamed tool " * 10}}},
        {"raw": {"role": "assistant", "content": {"text": "big call", "tool_calls": [
            {"id": "c2", "name": "upsert_knowledge", "arguments": {"doc": "k" * 60_000}}]}}},
    ],
}


@pytest.fixture(scope="module")
def sized_dsn(make_db) -> str:
    dsn = make_db()
    populate(dsn)
    insert_case(dsn, ODD_CASE)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return dsn


@pytest.fixture()
def sizes_json(capsys, tmp_path, monkeypatch):
    """Run `sizes --format json` (hermetic: no config file in the working directory)."""
    monkeypatch.chdir(tmp_path)

    def invoke(dsn: str, *args: str, expect: int = 0) -> dict:
        capsys.readouterr()
        code = run(["sizes", "--dsn", dsn, "--format", "json", *args])
        captured = capsys.readouterr()
        assert code == expect, captured.err
        return json.loads(captured.out)

    return invoke


def direct(dsn: str, sql: str, params=None):
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, params).fetchall()


# ------------------------------------------------------------------ catalog figures
def test_table_sizes_equal_the_catalog_functions(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn)
    rows = {t["table"]: t for t in report["tables"]["rows"]}
    assert {"sessions", "messages", "audit_log", "nomos_plans"} <= set(rows)
    for name, t in rows.items():
        heap, toast, table_, index, total = direct(sized_dsn, """
            SELECT pg_relation_size(c.oid, 'main'),
                   CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END,
                   pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid)
            FROM pg_class c WHERE c.oid = %s::regclass""", (name,))[0]
        assert (t["heap_bytes"], t["toast_bytes"], t["table_bytes"], t["index_bytes"], t["total_bytes"]) == (
            heap, toast, table_, index, total), name
        assert t["source"] == "catalog" and t["row_estimate_source"] == "estimate"
    messages = rows["messages"]
    assert messages["toast_exceeds_heap"] is True
    assert messages["row_estimate"] == direct(sized_dsn, "SELECT count(*) FROM messages")[0][0]
    db_bytes = direct(sized_dsn, "SELECT pg_database_size(current_database())")[0][0]
    assert report["database"]["bytes"] == db_bytes and report["database"]["source"] == "catalog"


def test_maintenance_and_node(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn)
    assert report["node"]["role"] == "primary"
    assert report["node"]["address"] == "127.0.0.1:5432" or report["node"]["address"]
    maintenance = {r["table"]: r for r in report["maintenance"]["rows"]}
    assert maintenance["messages"]["last_vacuum"] is not None
    assert maintenance["messages"]["dead_rows"] >= 0
    assert report["indexes"]["node"].startswith("primary ")


# ------------------------------------------------------------------ exact figures
def test_exact_figures_equal_direct_queries(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn, "--exact", "--top", "5")
    m = report["messages"]
    assert m["source"] == "exact" and m["scan"]["percent"] == 100

    count, total, logical, disk = direct(sized_dsn, """
        SELECT count(*) FILTER (WHERE octet_length(content::text) > %s), count(*),
               sum(octet_length(content::text)), sum(pg_column_size(content)) FROM messages""", (LIMIT,))[0]
    assert m["over_limit"]["count"] == m["over_limit"]["in_scan"] == count
    assert m["over_limit"]["count_source"] == "exact"
    assert (m["messages"], m["logical_bytes"], m["disk_bytes"]) == (total, logical, disk)

    top = direct(sized_dsn, """
        SELECT id, session_id::text, role, octet_length(content::text), pg_column_size(content) FROM messages
        WHERE octet_length(content::text) > %s ORDER BY 4 DESC, id LIMIT 5""", (LIMIT,))
    got = [(t["id"], t["session_id"], t["role"], t["logical_bytes"], t["disk_bytes"])
           for t in m["top"]["rows"]]
    assert got == [tuple(row) for row in top]
    assert m["top"]["source"] == "exact"

    p50, p95, p99, mx = direct(sized_dsn, """
        SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY pg_column_size(content)),
               percentile_disc(0.95) WITHIN GROUP (ORDER BY pg_column_size(content)),
               percentile_disc(0.99) WITHIN GROUP (ORDER BY pg_column_size(content)),
               max(pg_column_size(content)) FROM messages""")[0]
    assert m["disk_percentiles"] == {"p50": p50, "p95": p95, "p99": p99, "max": mx, "source": "exact"}

    by_role = dict(direct(sized_dsn, "SELECT role, sum(octet_length(content::text))"
                                     " FROM messages GROUP BY role"))
    assert {r["role"]: r["logical_bytes"] for r in m["by_role"]["rows"]} == by_role


def test_exact_truncation_savings_equal_a_direct_query(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn, "--exact", "--truncate-at", "16")
    cut = 16 * 1024
    saved, outputs = direct(sized_dsn, """
        WITH outputs AS (
            SELECT octet_length((content->'output')::text) AS n FROM messages
            WHERE role = 'tool' AND jsonb_typeof(content) = 'object' AND content ? 'output'
            UNION ALL
            SELECT octet_length((e->'output')::text) FROM messages,
                   jsonb_array_elements(CASE WHEN jsonb_typeof(content->'tool_results') = 'array'
                                             THEN content->'tool_results' END) e)
        SELECT sum(n - %s) FILTER (WHERE n > %s), count(*) FILTER (WHERE n > %s) FROM outputs""",
        (cut, cut, cut))[0]
    t = report["messages"]["truncation"]
    assert (t["logical_bytes_saved"], t["outputs_truncated"]) == (saved, outputs)
    assert t["logical_source"] == "exact" and t["disk_source"] == "estimate"
    assert 0 < t["disk_bytes_saved"] < t["logical_bytes_saved"]
    tools = {r["tool"]: r for r in report["messages"]["by_tool"]["rows"]}
    assert {"run", "list_lxcs", "http_get", "(unnamed)"} <= set(tools)
    assert sum(r["logical_bytes_saved"] for r in tools.values()) == saved
    # by tool: tool-role messages whole, legacy tool_results element by element
    by_tool = dict(direct(sized_dsn, """
        WITH results AS (
            SELECT coalesce(content->>'name', '(unnamed)') AS tool, octet_length(content::text) AS n
            FROM messages WHERE role = 'tool'
            UNION ALL
            SELECT coalesce(e->>'name', '(unnamed)'), octet_length(e::text) FROM messages,
                   jsonb_array_elements(CASE WHEN jsonb_typeof(content->'tool_results') = 'array'
                                             THEN content->'tool_results' END) e)
        SELECT tool, sum(n) FROM results GROUP BY tool"""))
    assert {name: r["logical_bytes"] for name, r in tools.items()} == by_tool


def test_odd_shapes_are_measured_not_fatal(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn, "--exact", "--top", "5000")
    top = {t["id"]: t for t in report["messages"]["top"]["rows"]}
    keys = {t["largest_key"] for t in top.values()}
    assert "whole value (string)" in keys  # double-encoded content
    assert "tool output (legacy tool_results)" in keys
    assert "tool_calls" in keys
    assert "tool output" in keys
    legacy = next(t for t in top.values() if t["largest_key"] == "tool output (legacy tool_results)")
    assert legacy["tool"] == "run"
    calls = next(t for t in top.values() if t["largest_key"] == "tool_calls")
    assert calls["tool"] == "upsert_knowledge"
    assert all(t["out_of_line"] for t in top.values() if t["disk_bytes"] > 2100)


# ------------------------------------------------------------------ sampled figures
def test_sampled_estimates_are_within_tolerance_of_exact(sized_dsn, sizes_json):
    exact = sizes_json(sized_dsn, "--exact")["messages"]
    sample = sizes_json(sized_dsn, "--sample-percent", "30", "--seed", "7")["messages"]
    assert sample["source"] == "sample"
    scan = sample["scan"]
    assert scan["percent"] == 30 and scan["seed"] == 7
    # the sample read well under half the heap, and a like share of the TOAST
    assert scan["heap_blocks_with_rows"] <= 0.45 * scan["heap_blocks"]
    assert scan["rows_read"] < 0.45 * exact["messages"]
    # tolerances: the share of oversized messages within 2 percentage points (about 2.5 times the
    # binomial standard error at ~1,800 sampled rows), their estimated count within 35% (3 standard
    # errors: ~75 oversized rows in the sample); a sampled
    # percentile lies between the exact ones 2 points of rank either side (p99: p98..p99.9); the
    # messages estimate (ANALYZE-based) within 5%
    over_e, over_s = exact["over_limit"], sample["over_limit"]
    assert abs(over_s["share"] - over_e["share"]) <= 0.02
    assert abs(over_s["share"] - over_e["share"]) <= 2 * over_s["share_margin_95"]
    assert abs(over_s["count"] - over_e["count"]) <= 0.35 * over_e["count"]
    for key, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)):
        low, high = direct(sized_dsn, """
            SELECT percentile_disc(%s) WITHIN GROUP (ORDER BY pg_column_size(content)),
                   percentile_disc(%s) WITHIN GROUP (ORDER BY pg_column_size(content)) FROM messages""",
            (q - 0.02 if q < 0.99 else 0.98, min(q + 0.02, 0.999)))[0]
        assert low <= sample["disk_percentiles"][key] <= high, key
    assert abs(sample["messages"] - exact["messages"]) <= 0.05 * exact["messages"]
    # byte totals: out-of-line bytes are anchored on the TOAST table's chunk count, so the few
    # 100 KB messages do not swing them: totals and savings within 10% (seeds 1-40 stay within
    # 5%), bytes of oversized messages within 15%
    assert scan["estimator"] == "toast-anchored"
    for key in ("logical_bytes", "disk_bytes"):
        assert abs(sample[key] - exact[key]) <= 0.10 * exact[key], key
    for key in ("logical_bytes_saved", "disk_bytes_saved"):
        want = exact["truncation"][key]
        assert abs(sample["truncation"][key] - want) <= 0.10 * want, key
    assert abs(over_s["logical_bytes"] - over_e["logical_bytes"]) <= 0.15 * over_e["logical_bytes"]
    inline_max = sizes_mod.DEFAULT_TOAST_TUPLE_TARGET - sizes_mod.OTHER_COLUMNS_BYTES
    out_of_line = direct(sized_dsn, "SELECT sum(pg_column_size(content)) FROM messages"
                                    " WHERE pg_column_size(content) > %s", (inline_max,))[0][0]
    assert abs(scan["out_of_line_disk_bytes"] - out_of_line) <= 0.05 * out_of_line
    # sources: sampled shares and percentiles are "sample", scaled counts and bytes "estimate"
    assert (over_s["share_source"], over_s["count_source"]) == ("sample", "estimate")
    assert sample["disk_percentiles"]["source"] == "sample"
    assert sample["truncation"]["logical_source"] == "estimate"


def test_sample_is_repeatable(sized_dsn, sizes_json):
    first = sizes_json(sized_dsn, "--sample-percent", "20", "--seed", "3")["messages"]
    second = sizes_json(sized_dsn, "--sample-percent", "20", "--seed", "3")["messages"]
    assert first == second


def test_sampled_sessions_have_exact_bytes(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn, "--sample-percent", "30", "--top", "3")
    sessions = report["sessions"]
    assert sessions["source"] == "sample" and len(sessions["rows"]) == 3
    for row in sessions["rows"]:
        stored, count = direct(sized_dsn, "SELECT sum(pg_column_size(content)), count(*) FROM messages"
                                          " WHERE session_id = %s", (row["session_id"],))[0]
        assert (row["disk_bytes"], row["messages"], row["disk_source"]) == (stored, count, "exact")
    exact = sizes_json(sized_dsn, "--exact", "--top", "3")["sessions"]
    expected = direct(sized_dsn, """SELECT session_id::text, sum(pg_column_size(content)) FROM messages
                                    GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3""")
    assert [(r["session_id"], r["disk_bytes"]) for r in exact["rows"]] == [tuple(e) for e in expected]


def test_choose_sample_percent():
    # 1M messages in 40k blocks: ~20k rows, 2%
    assert sizes_mod.choose_sample_percent(1_000_000, 40_000, 40_000) == pytest.approx(2.0)
    # the table grew since ANALYZE: density times current blocks
    assert sizes_mod.choose_sample_percent(1_000_000, 40_000, 80_000) == pytest.approx(1.0)
    # small tables are read whole; a floor of blocks keeps wide-row tables meaningful
    assert sizes_mod.choose_sample_percent(5_000, 200, 200) == 100.0
    assert sizes_mod.choose_sample_percent(100_000_000, 10_000_000, 10_000_000) == pytest.approx(0.02)
    assert sizes_mod.choose_sample_percent(30_000, 30_000, 30_000) == pytest.approx(
        100 * sizes_mod.TARGET_SAMPLE_ROWS / 30_000)
    assert sizes_mod.choose_sample_percent(10_000_000, 1_000_000, 1_000_000) == pytest.approx(0.2)
    # never analyzed: guessed density; size unknown: a small fixed sample, never the whole table
    assert sizes_mod.choose_sample_percent(-1, 0, 1_000_000) < 100
    assert sizes_mod.choose_sample_percent(-1, 0, None) == sizes_mod.FALLBACK_SAMPLE_PERCENT
    assert sizes_mod.choose_sample_percent(0, 0, 0) == 100.0


def test_toast_chunk_size():
    assert sizes_mod.toast_chunk_size(8192) == 1996  # TOAST_MAX_CHUNK_SIZE
    assert sizes_mod.toast_chunk_size(32768) == 8140


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert [sizes_mod.percentile(values, q) for q in (0.5, 0.95, 0.99)] == [50, 95, 99]
    assert sizes_mod.percentile([], 0.5) is None


# ------------------------------------------------------------------ degraded figures
class HeldLock:
    """ACCESS EXCLUSIVE on a table in another connection, held until the block ends."""

    def __init__(self, dsn: str, table: str) -> None:
        self.conn = psycopg.connect(dsn)
        self.table = table

    def __enter__(self):
        self.conn.execute(f"LOCK TABLE {self.table} IN ACCESS EXCLUSIVE MODE")
        return self

    def __exit__(self, *exc):
        self.conn.rollback()
        self.conn.close()


def test_lock_timeout_degrades_only_the_locked_figures(sized_dsn, sizes_json):
    with HeldLock(sized_dsn, "messages"):
        report = sizes_json(sized_dsn, "--lock-timeout", "0.2")
    tables = {t["table"]: t for t in report["tables"]["rows"]}
    assert tables["messages"]["available"] is False
    assert "lock wait timed out" in tables["messages"]["reason"]
    assert tables["sessions"]["available"] is True
    assert report["messages"]["available"] is False and "lock" in report["messages"]["reason"]
    assert report["sessions"]["available"] is False
    assert report["database"]["available"] is True
    assert report["maintenance"]["available"] is True
    assert report["indexes"]["unused"]["available"] is True


def test_statement_timeout_degrades_only_the_blocked_figures(sized_dsn, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with HeldLock(sized_dsn, "messages"):
        code = run(["sizes", "--dsn", sized_dsn, "--lock-timeout", "30", "--statement-timeout", "0.3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "not available (statement timed out while measuring table messages" in out
    assert "message content figures: not available (statement timed out" in out
    assert "Dead rows and vacuum" in out and "sessions " in out  # the rest printed


def test_missing_tables_are_skipped_with_a_note(make_db, sizes_json):
    dsn = make_db(upto=1)
    insert_case(dsn, {"messages": [{"user": "hi"}, {"tool": {"name": "run", "output": "x" * 60_000}}]})
    report = sizes_json(dsn)
    names = {t["table"] for t in report["tables"]["rows"]}
    assert names == {"messages", "sessions", "schema_migrations"}
    assert any("audit_log is missing" in n and "migration 001" in n for n in report["notes"])
    assert report["messages"]["available"] and report["messages"]["over_limit"]["count"] == 1


def test_empty_database_without_nomos_tables(make_db, sizes_json):
    dsn = make_db(schema=False)
    report = sizes_json(dsn)
    assert report["database"]["available"] is True
    assert report["tables"]["rows"] == []
    assert report["messages"]["available"] is False and "messages is missing" in report["messages"]["reason"]


def test_json_content_column_is_tolerated(make_db, sizes_json):
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages ALTER COLUMN content TYPE json USING content::json")
    insert_case(dsn, {"messages": [{"user": "hi"}, {"tool": {"name": "run", "output": "x" * 60_000}}]})
    report = sizes_json(dsn, "--exact")
    assert report["messages"]["over_limit"]["count"] == 1
    assert report["messages"]["top"]["rows"][0]["largest_key"] == "tool output"


def test_duplicate_and_unused_indexes(make_db, sizes_json):
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE INDEX messages_session_copy_idx ON messages (session_id, id)")
        conn.execute("CREATE INDEX messages_role_idx ON messages (role)")
        conn.execute("CREATE UNIQUE INDEX sessions_id_copy_idx ON sessions (id)")
    indexes = sizes_json(dsn)["indexes"]
    duplicates = {(d["table"], d["index"], d["duplicate_of"]) for d in indexes["duplicate"]["rows"]}
    assert ("messages", "messages_session_copy_idx", "messages_session_id_id_idx") in duplicates
    assert ("sessions", "sessions_id_copy_idx", "sessions_pkey") in duplicates
    assert len(duplicates) == 2
    unused = {u["index"] for u in indexes["unused"]["rows"]}
    assert "messages_role_idx" in unused
    assert not unused & {"sessions_pkey", "messages_pkey", "sessions_id_copy_idx"}
    assert indexes["node"].startswith("primary")


def test_standby_marks_vacuum_figures_not_applicable(sized_dsn, sizes_json, monkeypatch):
    original = CatalogFigures.node

    def as_standby(self):
        node = original(self)
        node.update(role="standby", standby=True)
        return node

    monkeypatch.setattr(CatalogFigures, "node", as_standby)
    report = sizes_json(sized_dsn)
    assert report["maintenance"] == {"available": False, "reason": "n/a on a standby",
                                     "node": report["indexes"]["node"]}
    assert report["indexes"]["node"].startswith("standby ")
    assert any("this standby's own" in note for note in report["notes"])


# ------------------------------------------------------------------ settings and output
def test_limit_is_the_oversized_message_setting(sized_dsn, sizes_json, tmp_path):
    assert sizes_json(sized_dsn)["settings"]["limit_kb"] == 50
    config = tmp_path / "nomos-forensics.toml"
    config.write_text("[rules.oversized-message]\nmax_kb = 100\n")
    report = sizes_json(sized_dsn, "--exact", "--config", str(config))
    assert report["settings"]["limit_bytes"] == 100 * 1024
    assert report["settings"]["limit_origin"] == f"config {config}"
    count = direct(sized_dsn, "SELECT count(*) FROM messages WHERE octet_length(content::text) > %s",
                   (100 * 1024,))[0][0]
    assert report["messages"]["over_limit"]["count"] == count
    assert sizes_json(sized_dsn, "--limit-kb", "64", "--config", str(config))["settings"]["limit_kb"] == 64


def test_invalid_limit_in_config_is_a_usage_error(sized_dsn, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nomos-forensics.toml").write_text('[rules.oversized-message]\nmax_kb = "big"\n')
    assert run(["sizes", "--dsn", sized_dsn]) == 2
    assert "rules.oversized-message.max_kb" in capsys.readouterr().err


def _sources(value, path="$"):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "source" or key.endswith("_source"):
                yield path + "." + key, item
            yield from _sources(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _sources(item, f"{path}[{i}]")


def test_json_has_schema_version_and_a_source_for_every_figure(sized_dsn, sizes_json):
    report = sizes_json(sized_dsn)
    assert report["schema_version"] == 1
    found = dict(_sources(report))
    assert found and set(found.values()) <= SOURCES | {"inferred from size"}
    for section in ("database", "tables", "messages", "sessions", "maintenance"):
        assert report[section].get("source") in SOURCES, section
    m = report["messages"]
    for figure in ("disk_percentiles", "logical_percentiles", "top", "by_role", "by_tool"):
        assert m[figure]["source"] in SOURCES, figure
    for key in ("share_source", "count_source", "bytes_source"):
        assert m["over_limit"][key] in SOURCES


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_formats(sized_dsn, capsys, tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    assert run(["sizes", "--dsn", sized_dsn, "--format", fmt, "--sample-percent", "30"]) == 0
    out = capsys.readouterr().out
    for text in ("Tables [catalog", "messages.content [sample: 30% of blocks", "over 50 KB",
                 "Largest messages over 50 KB", "Bytes by role [estimate]", "Bytes by tool",
                 "Sessions with the most stored bytes", "Dead rows and vacuum",
                 "Indexes (counters from primary"):
        assert text in out, text
    if fmt == "markdown":
        assert "### Tables" in out and "|---" in out
        assert "session 1" not in out or "\\|" in out  # pipes in titles are escaped


def test_installed_script(sized_dsn, tmp_path):
    done = script("sizes", "--dsn", sized_dsn, "--format", "json", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema_version"] == 1
