"""Issue 17 (hardening, round two): each test reproduces one defect found adversarially, against a
real server. Numbers in the section headings are the issue's items."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
import uuid

import psycopg
import pytest

from nomos_forensics import devdb
from nomos_forensics.db import ConnectionSettings, Database
from nomos_forensics.errors import ConnectionFailed
from nomos_forensics.testing import insert_case

from .helpers import SCRIPT, ctrl_c_default, invoke, probe_plugin, script

DEMO = "c0a1e5a1"


def _plugin(tmp_path, name: str, body: str, header: str = "") -> str:
    return probe_plugin(tmp_path, name, body, header=header, code_prefix="H")


def _demo_id(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT id::text FROM sessions WHERE id::text LIKE 'c0a1e5a1%'").fetchone()[0]


def _title(dsn: str, sid: str) -> str:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT title FROM sessions WHERE id = %s", (sid,)).fetchone()[0]


# ------------------------------------------------------------------ 1. a rule cannot commit a write
ESCAPES = {
    "commit_begin": "COMMIT; BEGIN READ WRITE; UPDATE sessions SET title = 'x' WHERE id = '{sid}'; COMMIT;"
                    " BEGIN READ ONLY; SELECT 1 AS x",
    "end_start": "END; START TRANSACTION READ WRITE; UPDATE sessions SET title = 'x' WHERE id = '{sid}'; END;"
                 " START TRANSACTION READ ONLY; SELECT 1 AS x",
}


@pytest.fixture(scope="module")
def writable_dsn(make_db) -> str:
    """A sample database reached as the superuser: a role that COULD write."""
    return make_db(sample=True)


def test_the_server_refuses_to_split_a_prepared_statement(writable_dsn):
    sid = _demo_id(writable_dsn)
    with psycopg.connect(writable_dsn) as conn:
        with pytest.raises(psycopg.errors.SyntaxError, match="multiple commands"):
            conn.execute(ESCAPES["commit_begin"].format(sid=sid), prepare=True)


@pytest.mark.parametrize("escape", list(ESCAPES))
@pytest.mark.parametrize("mode", [["review", DEMO, "--format", "json"], ["scan", "--format", "jsonl"], ["scan", "--format", "jsonl", "-j", "2"]])
def test_a_rule_cannot_commit_a_write(capsys, writable_dsn, tmp_path, escape, mode):
    sid = _demo_id(writable_dsn)
    before = _title(writable_dsn, sid)
    sql = ESCAPES[escape].format(sid=sid)
    path = _plugin(tmp_path, f"escaper_{escape}", f"ctx.query({sql!r}, {{}})\nreturn []")
    r = invoke(capsys, *mode, "--dsn", writable_dsn, "-p", path, "--fail-on", "blocker")
    assert _title(writable_dsn, sid) == before == "Restart nginx on lxc 105"
    assert r.code == 1
    cards = [json.loads(r.out)] if mode[0] == "review" else [json.loads(line) for line in r.out.splitlines()]
    assert len(cards) in (1, 36)
    errors = [e for card in cards for e in card["errors"]]
    assert errors and all(e["rule"] == f"escaper-{escape}".replace("_", "-") for e in errors)
    assert "one" in errors[0]["message"] and "statement" in errors[0]["message"]


@pytest.mark.parametrize("statement", ["COMMIT", "END", "ROLLBACK", "BEGIN READ WRITE", "START TRANSACTION READ WRITE",
                                       "SET TRANSACTION READ WRITE", "SAVEPOINT x", "RELEASE SAVEPOINT x"])
def test_transaction_control_is_refused(capsys, writable_dsn, tmp_path, statement):
    """One statement at a time cannot get out either: each is refused, and the UPDATE after it fails."""
    sid = _demo_id(writable_dsn)
    name = "tx_" + statement.lower().replace(" ", "_")
    body = f'''
    errors = []
    for sql in [{statement!r}, "UPDATE sessions SET title = 'x' WHERE id = '{sid}'"]:
        try:
            ctx.query(sql, {{}})
        except Exception as error:
            errors.append(type(error).__name__)
    assert len(errors) == 2, errors
    yield self.finding("refused: " + ", ".join(errors), session.messages[:1])
    '''
    path = _plugin(tmp_path, name, body)
    r = invoke(capsys, "review", DEMO, "--dsn", writable_dsn, "-p", path, "--format", "json")
    card = json.loads(r.out)
    assert card["errors"] == [], card["errors"]
    assert name.replace("_", "-") in {f["rule"] for f in card["findings"]}
    assert _title(writable_dsn, sid) == "Restart nginx on lxc 105"


def test_a_rule_query_still_reads_with_placeholders(capsys, writable_dsn, tmp_path):
    body = '''
    rows = ctx.query("SELECT count(*) AS n FROM messages WHERE session_id = CAST(:sid AS uuid) AND role LIKE '%%' ;",
                     {"sid": session.id})
    again = ctx.query("WITH t AS (SELECT 1 AS x) SELECT x FROM t -- a trailing comment", {})
    if rows[0]["n"] == len(session.messages) and again == [{"x": 1}]:
        yield self.finding(f"{rows[0]['n']} messages", session.messages[:1])
    '''
    path = _plugin(tmp_path, "placeholder_reader", body)
    card = json.loads(invoke(capsys, "review", DEMO, "--dsn", writable_dsn, "-p", path, "--format", "json",
                             "--select", "placeholder-reader").out)
    assert card["errors"] == []
    assert [f["rule"] for f in card["findings"]] == ["placeholder-reader"]


def test_doctor_warns_when_the_role_can_write(capsys, admin_dsn, writable_dsn):
    r = invoke(capsys, "doctor", "--dsn", writable_dsn, "--format", "json")
    report = json.loads(r.out)
    assert report["schema_version"] == 1
    assert report["can_write"]["superuser"] is True and report["can_write"]["possible"] is True
    assert "sessions" in report["can_write"]["tables"]
    text = invoke(capsys, "doctor", "--dsn", writable_dsn)
    assert "warning: the role can write" in text.err
    assert "can write:" in text.out
    # a SELECT-only role, as the README's Safety section creates it: no warning
    role = "nf_reader_" + uuid.uuid4().hex[:8]
    params = psycopg.conninfo.conninfo_to_dict(writable_dsn)
    with psycopg.connect(writable_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        conn.execute(f"GRANT CONNECT ON DATABASE {params['dbname']} TO {role}")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        reader = psycopg.conninfo.make_conninfo(writable_dsn, user=role, password="pw")
        r = invoke(capsys, "doctor", "--dsn", reader, "--format", "json")
        if r.code == 2 and "cannot connect" in r.err:
            pytest.skip("the server does not accept password logins for new roles here")
        report = json.loads(r.out)
        assert report["can_write"] == {"possible": False, "superuser": False, "standby": False, "tables": []}
        assert "can write" not in invoke(capsys, "doctor", "--dsn", reader).err
    finally:
        with psycopg.connect(writable_dsn, autocommit=True) as conn:
            conn.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
            conn.execute(f"REVOKE ALL ON SCHEMA public FROM {role}")
            conn.execute(f"REVOKE ALL ON DATABASE {params['dbname']} FROM {role}")
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {role}")


# ------------------------------------------------------------------ 2. deeply nested JSON
# Deeper than Python's json can read on 3.11-3.13 (3.13 reads 5,000 levels, its C stack guard
# stops it before 12,000), and within what PostgreSQL parses with its default max_stack_depth.
DEEP = 12_000


@pytest.fixture(scope="module")
def deep_dsn(make_db) -> tuple[str, str]:
    dsn = make_db(sample=True)
    sid = insert_case(dsn, {"name": "deep", "messages": [{"user": "hi"}, {"assistant": "hello"}]})
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, 'assistant', %s::jsonb, now())",
            (sid, "[" * DEEP + "]" * DEEP),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, 'tool', %s::jsonb, now())",
            (sid, '{"name": "run", "output": ' + "[" * DEEP + "]" * DEEP + "}"),
        )
    return dsn, sid


def test_deep_json_costs_the_row_a_note_not_the_run(capsys, deep_dsn):
    dsn, sid = deep_dsn
    r = invoke(capsys, "review", sid, "--dsn", dsn, "--format", "json")
    assert "Traceback" not in r.err and r.code in (0, 1), r.err
    card = json.loads(r.out)
    assert card["stats"]["messages"] == 4
    assert [n for n in card["notes"] if "nested too deeply" in n], card["notes"]
    assert "Note: message" in invoke(capsys, "review", sid, "--dsn", dsn).out
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl")
    assert r.code in (0, 1), r.err
    cards = [json.loads(line) for line in r.out.splitlines()]
    assert len(cards) == 37
    (deep,) = [c for c in cards if c["session"]["id"] == sid]
    assert deep["stats"]["messages"] == 4
    # the content-reading path (a rule needing content) too
    r = invoke(capsys, "review", sid, "--dsn", dsn, "--format", "json", "--select", "oversized-message,cant-run")
    assert r.code in (0, 1) and json.loads(r.out)["stats"]["messages"] == 4


# ------------------------------------------------------------------ 3. timestamps out of range
@pytest.fixture(scope="module")
def odd_times_dsn(make_db) -> tuple[str, list[str]]:
    dsn = make_db(sample=True)
    sids = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for stamp in ("infinity", "-infinity", "0044-03-15 BC", "12000-01-01"):
            sid = str(uuid.uuid4())
            sids.append(sid)
            conn.execute("INSERT INTO sessions (id, title, status, created_at, updated_at)"
                         " VALUES (%s, %s, 'completed', %s::timestamptz, %s::timestamptz)",
                         (sid, f"odd {stamp}", stamp, stamp))
            for role, text in (("user", "hi"), ("assistant", "hello")):
                conn.execute("INSERT INTO messages (session_id, role, content, created_at)"
                             " VALUES (%s, %s, jsonb_build_object('text', %s::text), %s::timestamptz)",
                             (sid, role, text, stamp))
    return dsn, sids


def test_out_of_range_timestamps_read_as_unknown(capsys, odd_times_dsn):
    dsn, sids = odd_times_dsn
    r = invoke(capsys, "sessions", "--dsn", dsn, "--limit", "100", "--format", "json")
    assert r.code == 0, r.err
    listed = {s["id"]: s for s in json.loads(r.out)["sessions"]}
    assert all(listed[sid]["created_at"] is None for sid in sids)
    assert invoke(capsys, "sessions", "--dsn", dsn, "--limit", "100").code == 0
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl")
    assert r.code in (0, 1), r.err
    assert len(r.out.splitlines()) == 40
    r = invoke(capsys, "review", sids[0], "--dsn", dsn, "--format", "json")
    assert r.code in (0, 1), r.err and json.loads(r.out)["stats"]["messages"] == 2


# ------------------------------------------------------------------ 4. doctor and the commands agree
@pytest.mark.parametrize("column", ["goal", "title", "status", "model", "updated_at"])
def test_doctor_fails_when_a_command_would(capsys, make_db, column):
    dsn = make_db(sample=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE sessions DROP COLUMN {column} CASCADE")
    doctor = invoke(capsys, "doctor", "--dsn", dsn)
    results = {cmd: invoke(capsys, *cmd, "--dsn", dsn) for cmd in (("review", DEMO), ("scan",), ("sessions",))}
    failing = {cmd for cmd, r in results.items() if r.code == 2}
    for r in results.values():
        assert "Traceback" not in r.err
    if failing:
        assert doctor.code == 2, doctor.out
        assert f"sessions.{column}" in doctor.out
        for cmd in failing:
            assert f"sessions.{column}" in results[cmd].err, results[cmd].err
    else:
        assert doctor.code == 0


# ------------------------------------------------------------------ 5. json content with \u0000, lone surrogates
def test_json_content_with_nul_and_lone_surrogate(capsys, make_db):
    dsn = make_db(schema=False)
    devdb.apply_migrations(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages ALTER COLUMN content TYPE json USING content::json")
    devdb.load_sample(dsn)
    sid = str(uuid.uuid4())
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO sessions (id, title, created_at) VALUES (%s, 'nul', now())", (sid,))
        for role, raw in (("user", r'{"text": "a\u0000b"}'), ("assistant", r'{"text": "lone \ud800 high, pair \ud83d\ude00"}'),
                          ("tool", r'{"name": "run", "output": "x\udc00y"}')):
            conn.execute("INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, %s, %s::json, now())",
                         (sid, role, raw))
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl")
    assert r.code in (0, 1), r.err
    assert len(r.out.splitlines()) == 37
    r = invoke(capsys, "sessions", "--dsn", dsn, "--format", "json", "--limit", "100")
    assert r.code == 0, r.err
    r = invoke(capsys, "review", sid, "--dsn", dsn, "--format", "json")
    assert r.code in (0, 1), r.err
    assert json.loads(r.out)["stats"]["messages"] == 3
    r = invoke(capsys, "sizes", "--dsn", dsn, "--format", "json", "--exact")
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert '"available": false' not in json.dumps(report["messages"]) and "Unicode" not in r.out, report["messages"]


# ------------------------------------------------------------------ 6. sys.exit and non-Findings in plugins
@pytest.mark.parametrize("where", ["import", "check"])
def test_sys_exit_in_a_plugin_is_a_rule_error(capsys, sample_dsn, tmp_path, where):
    if where == "import":
        path = _plugin(tmp_path, "exit_at_import", "return []", header="import sys; sys.exit(0)")
    else:
        path = _plugin(tmp_path, "exit_in_check", "import sys\nsys.exit(0)")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--fail-on", "blocker", "--format", "json")
    assert r.code == 1
    card = json.loads(r.out)
    assert any("SystemExit" in e["type"] or "SystemExit" in e["message"] for e in card["errors"]), card["errors"]
    assert card["findings"]  # the other rules ran
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "-p", path, "--fail-on", "blocker", "--format", "jsonl")
    assert r.code == 1 and len(r.out.splitlines()) == 36


def test_a_rule_yielding_a_non_finding_is_a_rule_error(capsys, sample_dsn, tmp_path):
    path = _plugin(tmp_path, "yields_junk", "yield 'not a finding'\nyield self.finding('real', session.messages[:1])")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json")
    assert r.code == 1 and "Traceback" not in r.err
    card = json.loads(r.out)
    assert [e["rule"] for e in card["errors"]] == ["yields-junk"]
    assert "Finding" in card["errors"][0]["message"]
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path)
    assert r.code == 1 and "Rule error: yields-junk" in r.out


def test_keyboard_interrupt_in_a_rule_is_not_swallowed(capsys, sample_dsn, tmp_path):
    path = _plugin(tmp_path, "interrupts", "raise KeyboardInterrupt")
    assert invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path).code == 130


# ------------------------------------------------------------------ 7. terminal escapes
HOSTILE = "evil\x1b]0;pwned\x07 \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\ \x9b31m \x7f\x08end"


def test_control_characters_from_the_database_are_neutralised(capsys, make_db):
    dsn = make_db()
    sid = insert_case(dsn, {"name": "osc", "session": {"title": HOSTILE, "goal": HOSTILE}, "messages": [
        {"user": "I can't run " + HOSTILE}, {"assistant": "I can't run commands there. " + HOSTILE}]})
    outputs = [
        invoke(capsys, "review", sid, "--dsn", dsn).out,
        invoke(capsys, "review", sid, "--dsn", dsn, "--format", "markdown").out,
        invoke(capsys, "sessions", "--dsn", dsn).out,
        invoke(capsys, "scan", "--dsn", dsn).out,
        invoke(capsys, "scan", "--dsn", dsn, "--format", "markdown").out,
    ]
    for out in outputs:
        assert "pwned" in out or "evil" in out
        bad = [c for c in out if (ord(c) < 32 and c not in "\n") or 0x7f <= ord(c) < 0xa0]
        assert bad == [], (out, bad)
    # JSON keeps the data exactly (escaped by the encoder)
    card = json.loads(invoke(capsys, "review", sid, "--dsn", dsn, "--format", "json").out)
    assert card["session"]["title"] == HOSTILE


# ------------------------------------------------------------------ 8. workers die with their parent
def _worker_backends(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nomos-forensics'"
            " AND datname = current_database()").fetchone()[0]


@pytest.fixture(scope="module")
def bulk_dsn(make_db) -> str:
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, model, created_at)"
            " SELECT gen_random_uuid(), 'bulk ' || i, 'completed', 'm', now() - i * interval '1 minute'"
            " FROM generate_series(1, 1500) i")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at)"
            " SELECT s.id, r.role, jsonb_build_object('text', 'hello ' || r.role), s.created_at"
            " FROM sessions s CROSS JOIN (VALUES ('user'), ('assistant')) r(role)")
    return dsn


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_die_with_their_parent(bulk_dsn, tmp_path, sig):
    plugin = _plugin(tmp_path, "slow_worker", "import time\ntime.sleep(0.05)\nreturn []")
    proc = subprocess.Popen([str(SCRIPT), "scan", "--dsn", bulk_dsn, "--format", "jsonl", "-j", "2", "-p", plugin],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.read(proc.stdout.fileno(), 100)  # the workers are scanning
    assert _worker_backends(bulk_dsn) >= 2
    proc.send_signal(sig)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while _worker_backends(bulk_dsn) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _worker_backends(bulk_dsn) == 0


# ------------------------------------------------------------------ 9. closed pipe
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_closed_pipe_stops_at_once(bulk_dsn, tmp_path, jobs):
    plugin = _plugin(tmp_path, "slowish", "import time\ntime.sleep(0.005)\nreturn []")
    start = time.monotonic()
    proc = subprocess.run(
        f"'{SCRIPT}' scan --dsn '{bulk_dsn}' --format jsonl -j {jobs} -p '{plugin}' | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert elapsed < 7.5  # 1,500 sessions at >= 5 ms each would take 7.5 s or more


# ------------------------------------------------------------------ 10. --jobs and ties
def test_biggest_messages_ties_are_the_same_for_any_jobs(capsys, make_db):
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, created_at)"
            " SELECT gen_random_uuid(), 'tie ' || i, 'completed', now() - i * interval '1 minute'"
            " FROM generate_series(1, 40) i")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at)"
            " SELECT s.id, r.role, jsonb_build_object('text', repeat('x', 60000)), s.created_at"
            " FROM sessions s CROSS JOIN (VALUES ('user'), ('assistant')) r(role)")
    outs = {j: invoke(capsys, "scan", "--dsn", dsn, "--format", "json", "-j", j).out for j in ("1", "2", "4")}
    assert outs["1"] == outs["2"] == outs["4"]
    biggest = json.loads(outs["1"])["summary"]["biggest_messages"]
    assert len(biggest) == 10


# ------------------------------------------------------------------ 11. bad numbers
@pytest.mark.parametrize("args", [
    ["sessions", "--since", "99999999d"],
    ["scan", "--since", "99999999d"],
    ["scan", "--until", "99999999999w"],
    ["sessions", "--statement-timeout", "nan"],
    ["sessions", "--statement-timeout", "inf"],
    ["sessions", "--lock-timeout", "nan"],
    ["sizes", "--limit-kb", "inf"],
    ["sizes", "--limit-kb", "nan"],
    ["sizes", "--truncate-at", "inf"],
    ["sizes", "--sample-percent", "nan"],
])
def test_bad_numbers_are_usage_errors(capsys, sample_dsn, args):
    r = invoke(capsys, *args, "--dsn", sample_dsn)
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("nomos-forensics: error: "), r.err


# ------------------------------------------------------------------ 12. smaller ones
def test_connect_timeout_from_the_dsn_is_used(monkeypatch):
    seen = {}

    def fake_connect(conninfo, **kwargs):
        seen.update(kwargs, conninfo=conninfo)
        raise psycopg.OperationalError("stop here")

    monkeypatch.setattr(psycopg, "connect", fake_connect)
    db = Database(ConnectionSettings.resolve("host=127.0.0.1 dbname=x connect_timeout=3"))
    with pytest.raises(ConnectionFailed):
        db.raw_connection()
    assert seen["connect_timeout"] == 3
    db = Database(ConnectionSettings.resolve("host=127.0.0.1 dbname=x"))
    with pytest.raises(ConnectionFailed):
        db.raw_connection()
    assert seen["connect_timeout"] == 10


def test_scan_markdown_escapes_pipes(capsys, make_db):
    dsn = make_db()
    insert_case(dsn, {"name": "pipes", "session": {"title": "a | b | c"}, "messages": [
        {"user": "go"}, {"assistant": "I can't run that | here"}]})
    out = invoke(capsys, "scan", "--dsn", dsn, "--format", "markdown").out
    # the title's rows (a session id may end in "a " itself: look for the title's own shape)
    rows = [line for line in out.splitlines() if line.startswith("|") and ("b | c" in line or "b \\| c" in line)]
    assert rows and all("a \\| b \\| c" in row for row in rows), out


def test_ctrl_c_during_json_scan_leaves_valid_json(bulk_dsn, tmp_path):
    plugin = _plugin(tmp_path, "slow_json", "import time\ntime.sleep(0.02)\nreturn []")
    proc = subprocess.Popen([str(SCRIPT), "scan", "--dsn", bulk_dsn, "--format", "json", "-p", plugin],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ctrl_c_default)
    first = b""
    while first.count(b"\n") < 3:  # the document is open and cards are coming
        first += os.read(proc.stdout.fileno(), 65536)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    out, err = (first + out).decode(), err.decode()
    assert proc.returncode == 130, err
    document = json.loads(out)
    assert document["interrupted"] is True and document["summary"] is None
    assert 0 < len(document["cards"]) < 1500
    assert "interrupted after" in err


def test_non_utf8_stdout(sample_dsn):
    r = script("scan", "--dsn", sample_dsn, "--format", "jsonl", env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    assert len([json.loads(line) for line in r.stdout.splitlines()]) == 36
    # read as what it is: Latin-1 (the card's "×" is a Latin-1 byte; "—" and "❌" become "?")
    r = script("review", DEMO, "--dsn", sample_dsn, env={"PYTHONIOENCODING": "latin-1"}, encoding="latin-1")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and "Session: c0a1e5a1" in r.stdout


@pytest.mark.parametrize("args", [["scan", "--jobs", "0"], ["review"], ["sessions", "--limit", "x"], ["nope"],
                                  ["scan", "--format", "xml"], ["review", DEMO, "--bogus"]])
def test_usage_errors_are_one_line(capsys, args):
    r = invoke(capsys, *args)
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("nomos-forensics: error: "), r.err


def test_progress_bar_is_cleared_before_output(sample_dsn):
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), "scan", "--dsn", sample_dsn, "--format", "jsonl"],
                            stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    data = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    proc.wait(timeout=30)
    os.close(master)
    text = data.decode()
    assert "sessions," in text  # the bar was drawn
    for index in [i for i in range(len(text)) if text.startswith('{"schema_version"', i)]:
        before = text[:index]
        assert before == "" or before.endswith("\n") or before.endswith("\r\x1b[K"), repr(before[-80:])


# ------------------------------------------------------------------ 13. README claims
def test_readme_config_example_works_in_nomos_forensics_toml(capsys, sample_dsn, tmp_path, monkeypatch):
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text()
    start = readme.index("# Configuration")
    block = readme[readme.index("```toml", start) + len("```toml"): readme.index("```", readme.index("```toml", start) + 7)]
    (tmp_path / "nomos-forensics.toml").write_text(block)
    monkeypatch.chdir(tmp_path)
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn)
    assert r.code == 1, r.err  # fail-on = "blocker" from the example
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--config", str(tmp_path / "nomos-forensics.toml"))
    assert r.code == 1, r.err
    writing = (Path(__file__).parent.parent / "docs" / "writing-rules.md").read_text()
    for needle in (":name", "-p package.module", "logical_bytes", "by_role", "self.options", "self.finding(",
                   "ctx.query"):
        assert needle in writing


def test_demo_keep_says_how_to_stop_and_remove_the_server():
    r = script("demo", "--keep", timeout=300)
    assert r.returncode == 0, r.stderr
    (line,) = [line for line in r.stdout.splitlines() if line.startswith("to stop it and remove its data: ")]
    command = line.split(": ", 1)[1]
    base = command.rsplit(" ", 1)[1]
    assert os.path.isdir(base)
    subprocess.run(command, shell=True, check=True, timeout=60)
    assert not os.path.exists(base)


def test_plugin_module_from_the_working_directory(capsys, sample_dsn, tmp_path, monkeypatch):
    package = tmp_path / "my_rules_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = _plugin(tmp_path, "cwd_module", "yield self.finding('from cwd', session.messages[:1])")
    (package / "cwd_rule.py").write_text(open(source).read())
    monkeypatch.chdir(tmp_path)
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", "my_rules_pkg.cwd_rule", "--format", "json")
    assert r.code == 0 and "failed to load" not in r.err, r.err
    assert "cwd-module" in {f["rule"] for f in json.loads(r.out)["findings"]}


def test_a_deep_audit_row_costs_only_that_row_in_a_scan(capsys, make_db):
    """A scan reads each session's lifecycle rows as one JSON array; an array Python cannot
    decode whole (one row nested too deeply) is read again row by row, so the other rows still
    count and the card is the one `review` gives."""
    dsn = make_db(sample=True)
    sid = insert_case(dsn, {
        "name": "deep-audit", "messages": [{"user": "wipe lxc/105"}, {"assistant": "It was blocked."}],
        "audit_log": [{"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked",
                       "detail": {"command": "rm -rf /srv"}}],
    })
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO audit_log (session_id, actor, action, target, outcome, detail, created_at)"
            " VALUES (%s, 'agent', 'run', 'lxc/106', 'allowed', %s::jsonb, now())",
            (sid, '{"deep": ' + "[" * DEEP + "]" * DEEP + "}"),
        )
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl")
    assert r.code in (0, 1) and "Traceback" not in r.err, r.err
    (card,) = [json.loads(line) for line in r.out.splitlines() if json.loads(line)["session"]["id"] == sid]
    assert "blocked-action" in {f["rule"] for f in card["findings"]}
    review = json.loads(invoke(capsys, "review", sid, "--dsn", dsn, "--format", "json").out)
    assert card == review
