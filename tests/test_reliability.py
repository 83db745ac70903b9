"""Issue 7 guarantees, each against a real server: read-only, timeouts, standby conflicts,
connection loss, Ctrl-C, credentials, injection, hostile data, degraded schemas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import psycopg
import psycopg.errors
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nomos_forensics import devdb, plugins
from nomos_forensics.config import Config
from nomos_forensics.db import ConnectionSettings, Database, retry_on_standby_conflict
from nomos_forensics.engine import build_ruleset, review
from nomos_forensics.errors import QueryFailed
from nomos_forensics.model import Session, SessionInfo, message_from_mapping
from nomos_forensics.testing import insert_case, review_case

from .helpers import SCRIPT, ctrl_c_default, invoke, probe_plugin

DEMO = "c0a1e5a1"


def _plugin(tmp_path, name: str, body: str) -> str:
    return probe_plugin(tmp_path, name, body)


# ------------------------------------------------------------------ read-only
def test_a_write_through_the_tools_connection_is_refused(sample_dsn):
    db = Database(ConnectionSettings.resolve(sample_dsn))
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
            with pytest.raises(sa.exc.DBAPIError) as info:
                conn.exec_driver_sql("DELETE FROM messages")
            assert isinstance(info.value.orig, psycopg.errors.ReadOnlySqlTransaction)
    finally:
        db.dispose()


WRITES = {
    "insert": 'ctx.query("INSERT INTO sessions (id, created_at) VALUES (gen_random_uuid(), now())")',
    "update": 'ctx.query("UPDATE sessions SET title = \'pwned\'")',
    "ddl": 'ctx.query("CREATE TABLE pwned (a int)")',
    "set_config": 'ctx.query("SELECT set_config(\'transaction_read_only\', \'off\', false)")',
    "set_default": 'ctx.query("SET default_transaction_read_only = off")',
    "set_default_then_write": 'ctx.query("SET default_transaction_read_only = off")\n'
                              'ctx.query("INSERT INTO sessions (id, created_at) VALUES (gen_random_uuid(), now())")',
    "set_transaction": 'ctx.query("SET transaction_read_only = off")',
}


@pytest.mark.parametrize("kind", list(WRITES))
def test_a_plugin_that_writes_is_refused_and_reported(capsys, sample_dsn, tmp_path, kind):
    body = WRITES[kind] + "\nreturn []"
    path = _plugin(tmp_path, f"writer_{kind}", body)
    before = _table_state(sample_dsn)
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json")
    card = json.loads(r.out)
    assert r.code == 1
    assert [e["rule"] for e in card["errors"]] == [f"writer-{kind}".replace("_", "-")]
    assert "cant-run" in {f["rule"] for f in card["findings"]}  # the rest of the review completed
    assert _table_state(sample_dsn) == before
    # and the next transaction of a fresh review is still read-only
    r2 = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json")
    assert json.loads(r2.out)["errors"][0]["rule"] == f"writer-{kind}".replace("_", "-")


def _table_state(dsn: str):
    with psycopg.connect(dsn) as conn:
        return (
            conn.execute("SELECT count(*), count(title) FILTER (WHERE title = 'pwned') FROM sessions").fetchone(),
            conn.execute("SELECT to_regclass('pwned')").fetchone(),
        )


def test_a_plugin_may_read(capsys, sample_dsn, tmp_path):
    body = '''
    rows = ctx.query("SELECT count(*) AS n FROM messages WHERE session_id = CAST(:sid AS uuid)", {"sid": session.id})
    if rows[0]["n"] == len(session.messages):
        yield self.finding(f"{rows[0]['n']} messages", session.messages[:1])
    '''
    path = _plugin(tmp_path, "reader", body)
    card = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json",
                             "--select", "reader").out)
    assert [f["rule"] for f in card["findings"]] == ["reader"]


# ------------------------------------------------------------------ timeouts and locks
@pytest.fixture
def locked_messages(make_db):
    """A sample database whose messages table is ACCESS EXCLUSIVE-locked by another session."""
    dsn = make_db(sample=True)
    holder = psycopg.connect(dsn)
    holder.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
    yield dsn
    holder.rollback()
    holder.close()


def test_lock_timeout_names_the_query(capsys, locked_messages):
    start = time.monotonic()
    r = invoke(capsys, "review", DEMO, "--dsn", locked_messages, "--lock-timeout", "0.3")
    assert r.code == 2
    assert r.err.strip() == (
        "nomos-forensics: error: lock wait timed out while reading the session's messages (lock_timeout 0.3s)"
        " (another transaction holds a conflicting lock)"
    )
    assert time.monotonic() - start < 10


def test_statement_timeout_is_honoured(capsys, locked_messages):
    r = invoke(capsys, "review", DEMO, "--dsn", locked_messages, "--lock-timeout", "30", "--statement-timeout", "0.4")
    assert r.code == 2
    assert "statement timed out while reading the session's messages (statement_timeout 0.4s)" in r.err


def test_rule_statement_timeout_is_a_rule_error(capsys, sample_dsn, tmp_path):
    path = _plugin(tmp_path, "sleeper", 'ctx.query("SELECT pg_sleep(5)")\nreturn []')
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--statement-timeout", "0.3", "--format", "json")
    card = json.loads(r.out)
    assert r.code == 1
    assert card["errors"][0]["type"] == "QueryCanceled"
    assert "statement timeout" in card["errors"][0]["message"]
    assert card["findings"]


# ------------------------------------------------------------------ hot standby conflicts
def test_standby_conflicts_are_retried_then_reported():
    calls = []

    def conflicting():
        calls.append(1)
        raise psycopg.errors.SerializationFailure("canceling statement due to conflict with recovery")

    with pytest.raises(QueryFailed, match="recovery conflicts on the standby 4 times"):
        retry_on_standby_conflict(conflicting, attempts=3, base_delay_s=0.001)
    assert len(calls) == 4

    flaky = iter([psycopg.errors.SerializationFailure("conflict with recovery"), None])

    def once_then_ok():
        error = next(flaky)
        if error:
            raise error
        return "rows"

    assert retry_on_standby_conflict(once_then_ok, base_delay_s=0.001) == "rows"


# ------------------------------------------------------------------ connection loss, Ctrl-C
SLOW_RULE = "import time\ntime.sleep(0.25)\nreturn []"


def _start_scan(dsn: str, plugin: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(SCRIPT), "scan", "--dsn", dsn, "--format", "jsonl", "-p", plugin],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default,
    )


def _read_lines(proc: subprocess.Popen, n: int) -> str:
    """Output up to at least `n` whole lines, read from the pipe itself: communicate() reads the
    file descriptor, so nothing may be left in a Python-side buffer."""
    data = b""
    while data.count(b"\n") < n:
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        data += chunk
    return data.decode()


@pytest.fixture(scope="module")
def bulk_dsn(make_db) -> str:
    """1,500 small sessions: more than the scan reads ahead, so a scan is still fetching."""
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, model, created_at)"
            " SELECT gen_random_uuid(), 'bulk ' || i, 'completed', 'm', now() - i * interval '1 minute'"
            " FROM generate_series(1, 1500) i"
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at)"
            " SELECT s.id, r.role, jsonb_build_object('text', 'hello ' || r.role), s.created_at"
            " FROM sessions s CROSS JOIN (VALUES ('user'), ('assistant')) r(role)"
        )
    return dsn


def test_connection_lost_mid_scan(bulk_dsn, tmp_path):
    plugin = _plugin(tmp_path, "slow", "import time\ntime.sleep(0.02)\nreturn []")
    proc = _start_scan(bulk_dsn, plugin)
    first = _read_lines(proc, 3)
    with psycopg.connect(bulk_dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'nomos-forensics' AND datname = current_database()"
        )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    lines = (first + out).splitlines(keepends=True)
    for line in lines:
        json.loads(line)  # no partial JSON line
        assert line.endswith("\n")
    assert "lost the connection" in err and f"{len(lines)} of 1500 sessions were done" in err
    assert "Traceback" not in err


def test_ctrl_c_exits_130_with_output_intact(sample_dsn, tmp_path):
    plugin = _plugin(tmp_path, "slow", SLOW_RULE)
    proc = _start_scan(sample_dsn, plugin)
    first = _read_lines(proc, 2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err
    for line in (first + out).splitlines(keepends=True):
        json.loads(line)


# ------------------------------------------------------------------ credentials
SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize("dsn", [
    f"postgresql://nomos:{SECRET}@127.0.0.1:1/nomos",
    f"postgres://nomos:{SECRET}@127.0.0.1:1/nomos?sslmode=disable",
    f"host=127.0.0.1 port=1 user=nomos password={SECRET} dbname=nomos",
    f"host=127.0.0.1 port=1 user=nomos password='{SECRET}' dbname=nomos",
    f"postgresql://127.0.0.1:1/nomos?password={SECRET}",
    f"host=127.0.0.1 port=1 password={SECRET} broken",
])
@pytest.mark.parametrize("command", [["doctor"], ["sessions"], ["review", "c0a1e5a1"], ["scan"], ["sizes"]])
def test_no_password_in_any_output(capsys, monkeypatch, dsn, command):
    r = invoke(capsys, *command, "--dsn", dsn)
    assert r.code == 2
    assert SECRET not in r.out + r.err
    assert r.err.count("\n") == 1 and r.err.startswith("nomos-forensics: error: ")
    monkeypatch.setenv("NOMOS_FORENSICS_DSN", dsn)
    r = invoke(capsys, *command)
    assert r.code == 2 and SECRET not in r.out + r.err


def test_password_masked_when_the_server_is_reachable(capsys, sample_dsn):
    params = psycopg.conninfo.conninfo_to_dict(sample_dsn)
    dsn = psycopg.conninfo.make_conninfo(sample_dsn, password=SECRET)
    r = invoke(capsys, "doctor", "--dsn", dsn)
    assert SECRET not in r.out + r.err
    assert r.code == 0, r.err
    assert str(params["dbname"]) in r.out


def test_database_without_nomos_tables(capsys, make_db):
    empty = make_db(schema=False)
    r = invoke(capsys, "review", DEMO, "--dsn", empty)
    assert r.code == 2 and "not a usable Nomos database: table sessions is missing" in r.err
    assert invoke(capsys, "doctor", "--dsn", empty).code == 2
    assert invoke(capsys, "scan", "--dsn", empty).code == 2


# ------------------------------------------------------------------ hostile data
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**15, max_value=10**15)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.sampled_from(["text", "tool_calls", "name", "arguments", "output", "is_error", "error",
                                        "tool_results", "function", "content", "finish_reason", "x"])
                      | st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8),
                      children, max_size=6),
    max_leaves=25,
)
ROLES = st.sampled_from(["user", "assistant", "tool", "system", "weird"])
_REGISTRY = plugins.load()
_RULESET = build_ruleset(_REGISTRY, Config())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(ROLES, json_values), min_size=1, max_size=12))
def test_normaliser_and_every_rule_never_raise(rows):
    messages = [
        message_from_mapping({"id": i, "role": role, "created_at": None, "content": content, "content_shipped": True},
                             keep_content=True)
        for i, (role, content) in enumerate(rows)
    ]
    card = review(Session(SessionInfo(id="00000000-0000-4000-8000-000000000000"), messages), _RULESET)
    assert card.errors == [], card.errors
    json.dumps(card.to_json(), default=str)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(ROLES, json_values), min_size=1, max_size=6))
def test_random_rows_in_postgres_give_a_card(nomos_dsn, rows):
    case = {"name": "hypothesis", "messages": [{"raw": {"role": r, "content": c}} for r, c in rows]}
    sid = insert_case(nomos_dsn, case)
    card = review_case(nomos_dsn, sid)
    assert card.errors == [], card.errors
    assert card.stats.messages == len(rows)


def test_ten_megabyte_message(capsys, nomos_dsn):
    blob = "".join(f"{i:08d} kernel: audit pid={i * 7 % 65536} comm=nginx\n" for i in range(250_000))
    sid = insert_case(nomos_dsn, {"name": "10MB", "messages": [
        {"user": "dump the journal"}, {"tool": {"name": "run", "output": blob}}, {"assistant": "done"}]})
    card = json.loads(invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--format", "json").out)
    (finding,) = [f for f in card["findings"] if f["rule"] == "oversized-message"]
    assert finding["data"]["messages"][0]["logical_bytes"] > 10_000_000


# ------------------------------------------------------------------ degraded schemas
def test_json_content_and_extra_columns(capsys, admin_dsn, make_db):
    dsn = make_db(schema=False)
    devdb.apply_migrations(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages ALTER COLUMN content TYPE json USING content::json")
        conn.execute("ALTER TABLE messages ADD COLUMN tokens int, ADD COLUMN shard text")
        conn.execute("ALTER TABLE sessions ADD COLUMN tenant text")
    devdb.load_sample(dsn)
    doctor = invoke(capsys, "doctor", "--dsn", dsn)
    assert doctor.code == 0
    assert "messages.content: json" in doctor.out
    r = invoke(capsys, "review", DEMO, "--dsn", dsn, "--format", "json")
    assert r.code == 0, r.err
    assert "cant-run" in {f["rule"] for f in json.loads(r.out)["findings"]}
    assert invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl").code == 0


def test_concurrent_reviews_do_not_interfere(sample_dsn):
    results = []

    def work():
        results.append(review_case(sample_dsn, _demo_id(sample_dsn)).outcome)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["failed"] * 4


def _demo_id(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT id::text FROM sessions WHERE id::text LIKE 'c0a1e5a1%'").fetchone()[0]
