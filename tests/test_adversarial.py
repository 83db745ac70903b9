"""Hardening, round three: each test reproduces one defect found by attacking the tool as a hostile
database, plugin or operator would, against a real server."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import stat
import subprocess
import threading
from pathlib import Path

import psycopg
import pytest

from nomos_forensics.db import ConnectionSettings

from .helpers import SCRIPT, ctrl_c_default, invoke, probe_plugin

DEMO = "c0a1e5a1"


def _plugin(tmp_path, name: str, body: str, header: str = "") -> str:
    return probe_plugin(tmp_path, name, body, header=header, code_prefix="A")


@pytest.fixture(scope="module")
def writable_dsn(make_db) -> str:
    """A sample database reached as the superuser: a role that COULD write."""
    return make_db(sample=True)


# ------------------------------------------------------------------ a rule query's side effects
SETTINGS = "SELECT current_setting('statement_timeout') AS st, current_setting('lock_timeout') AS lt, " \
           "current_setting('search_path') AS sp, (SELECT count(*) FROM pg_largeobject_metadata) AS lo"


@pytest.mark.parametrize("mode", [["review", DEMO, "--format", "json"], ["scan", "--format", "jsonl"]])
def test_a_rule_query_cannot_change_the_session_for_later_queries(capsys, writable_dsn, tmp_path, mode):
    """set_config(..., false) in ctx.query turned the timeouts off (and moved search_path) for
    every later query of the run, the tool's own included; a large object it made lived on."""
    body = f'''
    ctx.query("SELECT set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false),"
              " set_config('search_path', 'pg_catalog', false)", {{}})
    try:  # PostgreSQL 15 lets a read-only transaction make a large object; later versions refuse it
        ctx.query("SELECT lo_from_bytea(0, 'x')", {{}})
    except Exception:
        pass
    row = ctx.query({SETTINGS!r}, {{}})[0]
    yield self.finding(f"{{row['st']}} {{row['lt']}} {{row['sp']}} {{row['lo']}}", session.messages[:1])
    '''
    path = _plugin(tmp_path, "settings_changer", body)
    r = invoke(capsys, *mode, "--dsn", writable_dsn, "-p", path, "--select", "settings-changer")
    cards = [json.loads(line) for line in r.out.splitlines()] if mode[0] == "scan" else [json.loads(r.out)]
    seen = {f["message"] for card in cards for f in card["findings"]}
    assert seen == {'30s 2s "$user", public 0'}, seen
    with psycopg.connect(writable_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0] == 0


# ------------------------------------------------------------------ session ids stored as text
@pytest.mark.parametrize("statements", [
    ["ALTER TABLE sessions ALTER id TYPE text", "ALTER TABLE messages ALTER session_id TYPE text"],
    ["ALTER TABLE messages ALTER session_id TYPE varchar(36)"],
], ids=["both", "messages"])
def test_text_session_ids_are_refused_by_doctor_and_every_command(capsys, make_db, statements):
    """doctor said `tolerated: ... cast on read` and exited 0, then review, sessions and
    `scan -j 2` failed on `operator does not exist: text = uuid`: no query casts them."""
    dsn = make_db(sample=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages DROP CONSTRAINT messages_session_id_fkey")
        for statement in statements:
            conn.execute(statement)
    doctor = invoke(capsys, "doctor", "--dsn", dsn)
    assert doctor.code == 2 and "messages.session_id" in doctor.out, doctor.out
    for args in (["review", DEMO], ["sessions"], ["scan", "-j", "2", "--format", "jsonl"], ["scan", "--shard", "0/2"]):
        r = invoke(capsys, *args, "--dsn", dsn)
        assert r.code == 2 and r.out == "", (args, r.out)
        assert r.err.count("\n") == 1 and "not a usable Nomos database: " in r.err and "messages.session_id is" in r.err, (args, r.err)


# ------------------------------------------------------------------ findings of the wrong shape
GARBAGE = {
    "severity": "f.severity = 'blocker'",
    "message": "f.message = None",
    "evidence": "f.evidence = [None]",
    "evidence_text": "f.evidence = 'msg 1'",
    "blocker": "f.blocker = 5",
    "fix": "f.fix = ['restart it']",
    "data": "f.data = [1, 2]",
}


@pytest.mark.parametrize("kind", list(GARBAGE))
@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_a_finding_with_a_field_of_the_wrong_type_is_a_rule_error(capsys, sample_dsn, tmp_path, kind, fmt):
    """A Finding whose severity was a string (or evidence None, blocker an int, ...) crashed the
    run with a traceback while sorting or rendering the card; now it is the rule's error."""
    body = f"f = self.finding('odd', session.messages[:1])\n{GARBAGE[kind]}\nyield f\n" \
           "yield self.finding('fine', session.messages[:1])"
    path = _plugin(tmp_path, f"garbage_{kind}", body)
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", fmt)
    assert r.code == 1 and "Traceback" not in r.err, r.err
    rule = f"garbage-{kind}".replace("_", "-")
    if fmt == "json":
        card = json.loads(r.out)
        assert [e["rule"] for e in card["errors"]] == [rule]
        assert "Finding" in card["errors"][0]["message"] and kind.split("_")[0] in card["errors"][0]["message"]
        assert [f["message"] for f in card["findings"] if f["rule"] == rule] == ["fine"]
        assert "cant-run" in {f["rule"] for f in card["findings"]}
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "-p", path, "--format", "jsonl" if fmt == "json" else "table")
    assert r.code == 1 and "Traceback" not in r.err, r.err


# ------------------------------------------------------------------ schema_migrations.version of another type
def test_a_text_migration_version_is_unknown_not_a_traceback(capsys, make_db):
    """schema_migrations.version as text made the migration a str: `< 20` raised TypeError in
    every command as soon as one rule was skipped (here: no audit_log), and `max()` of text
    would have said '9' is newer than '20'."""
    dsn = make_db(sample=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE schema_migrations ALTER version TYPE text")
        conn.execute("INSERT INTO schema_migrations VALUES ('9', now())")
        conn.execute("DROP TABLE audit_log")
    doctor = invoke(capsys, "doctor", "--dsn", dsn, "--format", "json")
    assert doctor.code == 0, doctor.err
    report = json.loads(doctor.out)
    assert report["migration"] is None
    assert "schema_migrations.version: text, expected integer" in report["type_mismatches"]
    r = invoke(capsys, "review", DEMO, "--dsn", dsn, "--format", "json")
    assert r.code == 0, r.err
    assert {s["rule"] for s in json.loads(r.out)["skipped_rules"]} == {"blocked-action"}
    assert invoke(capsys, "scan", "--dsn", dsn).code == 0
    r = invoke(capsys, "compare", "--at", "migration:020", "--dsn", dsn)
    assert r.code == 2 and "give the date instead" in r.err and "Traceback" not in r.err, r.err


# ------------------------------------------------------------------ shard files nested too deeply
@pytest.mark.parametrize("where", ["card", "trailer"])
@pytest.mark.parametrize("command", [["merge"], ["merge", "--by", "week"], ["compare", "--at", "2026-11-16"]])
def test_a_shard_line_nested_too_deeply_is_refused_not_a_traceback(capsys, tmp_path, sample_dsn, where, command):
    """A line of 100,000 nested arrays raised RecursionError (a traceback, exit 1) where any
    other undecodable line is a one-line refusal with exit 3."""
    paths = []
    for k in range(2):
        r = invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", f"{k}/2")
        paths.append(tmp_path / f"s{k}.jsonl")
        paths[-1].write_text(r.out, encoding="utf-8")
    lines = paths[1].read_text(encoding="utf-8").splitlines()
    deep = "[" * 100_000 + "]" * 100_000
    lines = [deep, *lines] if where == "card" else [*lines, deep]
    paths[1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = invoke(capsys, *command, *map(str, paths))
    assert r.code == 3 and r.out == "", (r.code, r.err)
    assert r.err.count("\n") == 1 and r.err.startswith("nomos-forensics: error: "), r.err
    assert ("line 1" if where == "card" else "is not a whole shard") in r.err, r.err


# ------------------------------------------------------------------ a config file nested too deeply
@pytest.mark.parametrize("where", ["--config", "nomos-forensics.toml"])
def test_a_config_file_nested_too_deeply_is_invalid_toml(capsys, sample_dsn, tmp_path, monkeypatch, where):
    """`x = [[[[…]]]]` 100,000 deep raised RecursionError out of tomllib: a traceback, exit 1."""
    path = tmp_path / "nomos-forensics.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["--config", str(path)] if where == "--config" else []
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, *args)
    assert r.code == 2 and r.out == "", (r.code, r.err)
    assert r.err.count("\n") == 1 and "invalid TOML in" in r.err and "nested too deeply" in r.err, r.err


# ------------------------------------------------------------------ report -o a FIFO, a device, a symlink
def test_report_into_a_fifo_writes_into_it_instead_of_replacing_it(capsys, sample_dsn, tmp_path):
    """The atomic rename replaced whatever -o named: a FIFO (or, as root, /dev/null or
    /dev/full) became a regular file and whoever read the pipe got nothing."""
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(fifo), "--transcripts", "1")
    assert r.code == 0, r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    reader.join(timeout=60)
    assert got and got[0].startswith("<!doctype html>")


def test_report_through_a_symlink_replaces_its_target_not_the_link(capsys, sample_dsn, tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.html"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(link), "--transcripts", "1")
    assert r.code == 0, r.err
    assert link.is_symlink() and target.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["report.html"]  # no temporary file left


# ------------------------------------------------------------------ stdout on a full disk
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [["review", DEMO], ["scan", "--format", "jsonl"], ["scan", "--shard", "0/2"],
                                  ["sessions"], ["doctor"]])
def test_stdout_on_a_full_disk_is_one_line_and_exit_2(sample_dsn, args):
    """`scan --shard 0/2 > shard.jsonl` on a full volume ended in a traceback and exit 1, which
    the README's job recipes read as 'findings' (success)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([str(SCRIPT), *args, "--dsn", sample_dsn], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120, env={**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""})
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr, done.stderr  # doctor warns first that the role can write
    assert done.stderr.splitlines()[-1] == "nomos-forensics: error: cannot write the output: No space left on device"


# ------------------------------------------------------------------ rule metadata of the wrong type
RULE_CLASS = '''
from nomos_forensics import Rule, hookimpl

class Odd(Rule):
    """Odd metadata.

    Detects: nothing real.
    Root cause: a test.
    Fix: none.
    """
    code = "A950"
    name = "odd-metadata"
    {attribute}

    def check(self, session, ctx):
        yield self.finding("ran", session.messages[:1])

@hookimpl
def nomos_forensics_rules():
    return {returned}
'''
ODD_METADATA = {
    "hook_returns_int": ("", "5"),
    "code_int": ("code = 5", "[Odd]"),
    "requires_int": ("requires = 5", "[Odd]"),
    "floor_str": ("def logical_size_floor(self): return 'big'", "[Odd]"),
    "floor_too_big": ("def logical_size_floor(self): return 2 ** 40", "[Odd]"),
}


@pytest.mark.parametrize("kind", list(ODD_METADATA))
def test_rule_metadata_of_the_wrong_type_is_that_plugins_problem(capsys, sample_dsn, tmp_path, kind):
    """A rules hook returning 5, a code that is an int, `requires = 5` or a floor that is a
    string crashed every command at start-up with a traceback; a floor over 2^31 failed the
    message query (integer out of range) when only that rule was selected."""
    attribute, returned = ODD_METADATA[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(RULE_CLASS.replace("{attribute}", attribute).replace("{returned}", returned), encoding="utf-8")
    for args in (["review", DEMO, "--format", "json"], ["scan", "--format", "jsonl"]):
        r = invoke(capsys, *args, "--dsn", sample_dsn, "-p", str(path))
        assert "Traceback" not in r.err and r.code in (0, 1), (args, r.code, r.err)
        cards = [json.loads(line) for line in r.out.splitlines()] if args[0] == "scan" else [json.loads(r.out)]
        assert len(cards) in (1, 36)
        card = next(c for c in cards if c["session"]["id"].startswith(DEMO))
        assert "cant-run" in {f["rule"] for f in card["findings"]}  # the built-ins still ran
        if kind == "floor_too_big":
            assert r.code == 0 and "odd-metadata" in {f["rule"] for f in card["findings"]}
        else:
            blamed = json.dumps(card["errors"]) + r.err
            assert r.code == 1 and (str(path) in blamed or "odd-metadata" in blamed), (card["errors"], r.err)
    if kind == "floor_too_big":
        r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path), "--select", "odd-metadata")
        assert r.code == 0, r.err


# ------------------------------------------------------------------ a card hook that breaks the card
CARD_DAMAGE = {
    "finding_str": "card.findings.append('x')",
    "findings_none": "card.findings = None",
    "finding_severity": "card.findings[0].severity = 'x'",
    "error_str": "card.errors.append('boom')",
    "skipped_str": "card.skipped.append('s')",
}


@pytest.mark.parametrize("kind", list(CARD_DAMAGE))
@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_a_card_hook_that_breaks_the_card_is_a_card_error(capsys, sample_dsn, tmp_path, kind, fmt):
    """A card hook that put a string among the findings (or set them to None) crashed the
    renderer with a traceback; now what it broke is dropped and the card says so."""
    path = tmp_path / f"damage_{kind}.py"
    path.write_text("from nomos_forensics import hookimpl\n\n\n@hookimpl\ndef nomos_forensics_card(card):\n"
                    f"    {CARD_DAMAGE[kind]}\n", encoding="utf-8")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path), "--format", fmt)
    assert r.code == 1 and "Traceback" not in r.err, r.err
    if fmt == "json":
        card = json.loads(r.out)
        assert any(e["rule"] == "card hook" and "nomos_forensics_card" in e["message"] for e in card["errors"]), card
        if kind in ("error_str", "skipped_str"):
            assert "cant-run" in {f["rule"] for f in card["findings"]}
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "-p", str(path), "--format", "jsonl" if fmt == "json" else "table")
    assert r.code == 1 and "Traceback" not in r.err, r.err


# ------------------------------------------------------------------ an undashed prefix
@pytest.mark.parametrize("ref", ["c0a1e5a15e55", "c0a1e5a15e554a1e9b", "C0A1E5A15E55-4A1E"])
def test_a_prefix_without_the_dashes_finds_the_session(capsys, sample_dsn, ref):
    """The whole uuid without dashes was found (`c0a1e5a15e554a1e9b0d7e57f0a1ed01`, as
    uuid.hex prints it), but any shorter undashed prefix past 8 characters was 'no session'."""
    r = invoke(capsys, "review", ref, "--dsn", sample_dsn, "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["session"]["id"] == "c0a1e5a1-5e55-4a1e-9b0d-7e57f0a1ed01"


# ------------------------------------------------------------------ duplicate session ids
@pytest.fixture(scope="module")
def duplicated_dsn(make_db) -> str:
    """`sessions` is a view (an archive and the live table, overlapping) that has one session twice."""
    dsn = make_db(sample=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages DROP CONSTRAINT messages_session_id_fkey")
        conn.execute("ALTER TABLE sessions RENAME TO sessions_live")
        conn.execute("CREATE VIEW sessions AS SELECT * FROM sessions_live"
                     " UNION ALL SELECT * FROM sessions_live WHERE id::text LIKE 'c0a1e5a1%'")
    return dsn


def test_a_session_listed_twice_is_reviewed_once(capsys, tmp_path, duplicated_dsn):
    """Its prefix was 'ambiguous' between the session and itself, and scan printed a second,
    empty card for it (outcome unknown: 'no user message'); shards then disagreed with the total."""
    r = invoke(capsys, "review", DEMO, "--dsn", duplicated_dsn, "--format", "json")
    assert r.code == 0, r.err
    r = invoke(capsys, "scan", "--dsn", duplicated_dsn, "--format", "jsonl")
    cards = [json.loads(line) for line in r.out.splitlines()]
    assert len({card["session"]["id"] for card in cards}) == len(cards) == 36
    assert [c["stats"]["messages"] for c in cards if c["session"]["id"].startswith(DEMO)] == [10]
    overview = invoke(capsys, "scan", "--dsn", duplicated_dsn, "--format", "table", "--wide").out.splitlines()
    assert overview[3].split()[0] == "36"
    paths = []
    for k in range(2):
        shard = invoke(capsys, "scan", "--dsn", duplicated_dsn, "--shard", f"{k}/2")
        paths.append(tmp_path / f"s{k}.jsonl")
        paths[-1].write_text(shard.out, encoding="utf-8")
    merged = invoke(capsys, "merge", *map(str, paths), "--format", "jsonl")
    assert merged.code in (0, 1) and merged.out == r.out, merged.err


# ------------------------------------------------------------------ the same schema, the same message
def test_schema_problems_are_listed_in_the_same_order_every_run(make_db):
    """The columns of one table were listed in set order, which changes with PYTHONHASHSEED:
    the same database gave 'goal …; title …' in one run and 'title …; goal …' in the next."""
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE sessions ALTER goal TYPE varchar(20), ALTER title TYPE varchar(200),"
                     " ALTER model TYPE varchar(50), ALTER status TYPE varchar(20)")
    errors = set()
    for seed in ("1", "2", "3", "4", "5"):
        done = subprocess.run([str(SCRIPT), "review", DEMO, "--dsn", dsn], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONHASHSEED": seed, "NOMOS_FORENSICS_LOAD_PLUGINS": ""})
        assert done.returncode == 2
        errors.add(done.stderr)
    assert len(errors) == 1, errors


# ------------------------------------------------------------------ a plugin that prints
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_plugin_printing_to_stdout_does_not_corrupt_the_output(sample_dsn, tmp_path, jobs):
    """print() in a rule (or at its import) went into stdout between the JSON lines: a
    `scan --shard` file that merge refuses, a `--format json` document that does not parse."""
    path = _plugin(tmp_path, "printer", "print('debug:', session.id)\nreturn []", header="print('loaded')")
    env = {**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""}
    run = [str(SCRIPT), "scan", "--dsn", sample_dsn, "-p", path, "-j", jobs]
    done = subprocess.run([*run, "--format", "json"], capture_output=True, text=True, timeout=300, env=env)
    assert len(json.loads(done.stdout)["cards"]) == 36, done.stderr
    assert "debug: " in done.stderr and "loaded" in done.stderr
    shard = tmp_path / "s0.jsonl"
    with shard.open("w") as out:
        subprocess.run([*run, "--shard", "0/1"], stdout=out, stderr=subprocess.PIPE, timeout=300, env=env)
    merged = subprocess.run([str(SCRIPT), "merge", str(shard)], capture_output=True, text=True, timeout=120, env=env)
    assert merged.returncode in (0, 1), merged.stderr
    review = subprocess.run([str(SCRIPT), "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert json.loads(review.stdout)["session"]["id"].startswith(DEMO)


# ------------------------------------------------------------------ the longest statement timeout the option allows
def test_the_largest_statement_timeout_connects(capsys, sample_dsn):
    """--statement-timeout accepts up to 2,147,483 s, but from 1,073,742 s on the idle-in-
    transaction timeout derived from it (twice as long) overflowed the server's int and every
    connection failed: 'cannot connect …: invalid value for parameter …'."""
    r = invoke(capsys, "doctor", "--dsn", sample_dsn, "--statement-timeout", "2147483", "--format", "json")
    assert r.code == 0, r.err
    conninfo = ConnectionSettings.resolve(sample_dsn, statement_timeout_s=2147483).startup_conninfo()
    with psycopg.connect(conninfo) as conn:  # and the session really carries it
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "2147483s"


# ------------------------------------------------------------------ the connection lost while a session's messages stream
@pytest.fixture(scope="module")
def chatty_dsn(make_db) -> str:
    """1,500 sessions of 50 messages: the message stream fetches again every 40 sessions."""
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO sessions (id, title, status, model, created_at)"
                     " SELECT gen_random_uuid(), 'chatty ' || i, 'completed', 'm', now() - i * interval '1 minute'"
                     " FROM generate_series(1, 1500) i")
        conn.execute("INSERT INTO messages (session_id, role, content, created_at)"
                     " SELECT s.id, CASE WHEN g = 1 THEN 'user' ELSE 'assistant' END,"
                     " jsonb_build_object('text', 'line ' || g), s.created_at + g * interval '1 second'"
                     " FROM sessions s CROSS JOIN generate_series(1, 50) g")
    return dsn


def test_a_connection_lost_mid_stream_prints_no_unreadable_cards(chatty_dsn, tmp_path):
    """Killed while the reader fetched messages, the scan printed a '(session could not be
    read)' card with an 'engine' OperationalError for every session it had already listed
    (300 of them), counted them as done, and only then said the connection was lost."""
    plugin = _plugin(tmp_path, "slow", "import time\ntime.sleep(0.02)\nreturn []")
    proc = subprocess.Popen([str(SCRIPT), "scan", "--dsn", chatty_dsn, "--format", "jsonl", "-p", plugin],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""})
    first = b""
    while first.count(b"\n") < 3:
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, proc.stderr.read()
        first += chunk
    with psycopg.connect(chatty_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE application_name = 'nomos-forensics' AND datname = current_database()")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and b"lost the connection" in err, err
    cards = [json.loads(line) for line in (first + out).decode().splitlines()]
    assert [c["session"]["id"] for c in cards if c["errors"]] == []


# ------------------------------------------------------------------ terminal escapes in warnings
def test_a_plugin_error_message_cannot_drive_the_terminal(capsys, sample_dsn, tmp_path):
    """Errors were neutralised, warnings were not: a plugin failing to load with an OSC
    sequence in its message set the terminal's title (or its clipboard) through stderr."""
    path = tmp_path / "escapes.py"
    path.write_text('raise ImportError("\\x1b]0;pwned\\x07 \\x1b]52;c;ZWNobyBwd25lZA==\\x07 \\x9b31m")\n', encoding="utf-8")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path))
    assert r.code == 1 and "failed to load" in r.err
    assert "\x1b" not in r.err and "\x07" not in r.err and "\x9b" not in r.err, repr(r.err)


# ------------------------------------------------------------------ a rule that never returns, a worker that dies
@pytest.mark.parametrize("args", [["review", DEMO], ["scan", "--format", "json"], ["scan", "-j", "2", "--format", "jsonl"]])
def test_a_rule_that_never_returns_is_stopped_by_ctrl_c(sample_dsn, tmp_path, args):
    """There is no per-rule time limit (only ctx.query has the statement timeout): Ctrl-C
    stops a rule stuck in Python, exit 130, as the README says."""
    marker = tmp_path / "entered"
    path = _plugin(tmp_path, "forever", f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(3600)\nreturn []")
    proc = subprocess.Popen([str(SCRIPT), *args, "--dsn", sample_dsn, "-p", path], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default,
                            env={**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": "", "PYTHONFAULTHANDLER": "1"})
    try:
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read()
            threading.Event().wait(0.1)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say where it hangs: its signal masks and stacks
            status = Path(f"/proc/{proc.pid}/status")
            masks = [line for line in status.read_text().splitlines() if line.startswith("Sig")] if status.exists() else []
            proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            pytest.fail(f"still running 60 s after Ctrl-C ({masks}); its stacks:\n{proc.communicate(timeout=10)[1][-4000:]}")
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_a_worker_killed_by_its_plugin_ends_the_scan_as_a_crash(capsys, sample_dsn, tmp_path):
    """A dead worker is a crash (exit 70, issue 36), not an environment error."""
    path = _plugin(tmp_path, "exits", "import os\nif session.id.startswith('c0a1'):\n    os._exit(3)\nreturn []")
    r = invoke(capsys, "scan", "-j", "2", "--dsn", sample_dsn, "-p", path, "--format", "jsonl")
    assert r.code == 70 and "internal error: a scan worker exited unexpectedly (exit status 3)" in r.err, r.err
    for line in r.out.splitlines():
        json.loads(line)


# ------------------------------------------------------------------ roles in another case or with spaces
def test_sessions_counts_the_tool_calls_of_an_assistant_role_written_oddly(capsys, nomos_dsn):
    """The card reads ' Assistant ' and 'ASSISTANT\\n' as the assistant (roles are trimmed and
    lower-cased), but `sessions` counted tool calls only where role = 'assistant': 0 calls for
    a session whose card has 3."""
    from nomos_forensics.testing import insert_case

    call = {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "uptime"}}]}
    sid = insert_case(nomos_dsn, {"name": "odd roles", "messages": [
        {"user": "uptime please"},
        {"raw": {"role": " Assistant ", "content": call}},
        {"raw": {"role": "ASSISTANT\n", "content": call}},
        {"raw": {"role": "assistant", "content": call}},
    ]})
    card = json.loads(invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--format", "json").out)
    listed = json.loads(invoke(capsys, "sessions", "--dsn", nomos_dsn, "--format", "json", "--search", "odd roles").out)
    assert card["stats"]["tool_calls"] == 3
    assert [s["tool_calls"] for s in listed["sessions"]] == [3]


# ------------------------------------------------------------------ more shards than open files
def test_merge_opens_every_shard_within_the_hard_limit(capsys, sample_dsn, tmp_path):
    """merge reads all shards side by side: with a soft limit of open files below the shard
    count (1,024 is common, --shard allows N up to 4,096) it failed on 'Too many open files'
    although the hard limit allowed them."""
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 256:
        pytest.skip("the hard limit on open files is too low here")
    n = 30
    paths = []
    for k in range(n):
        paths.append(tmp_path / f"s{k:02d}.jsonl")
        paths[-1].write_text(invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", f"{k}/{n}").out, encoding="utf-8")
    whole = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out

    def low_soft_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, hard))

    done = subprocess.run([str(SCRIPT), "merge", *map(str, paths), "--format", "jsonl"], capture_output=True, text=True,
                          timeout=120, preexec_fn=low_soft_limit, env={**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""})
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout == whole


# ------------------------------------------------------------------ model names in CSV and table cells
@pytest.fixture(scope="module")
def odd_models_dsn(make_db) -> str:
    dsn = make_db(sample=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE sessions SET model = CASE WHEN id::text < '4' THEN E'\\t=HYPERLINK(\"http://x.test\")'"
                     " WHEN id::text < '8' THEN E'\\x1b]0;pwned\\x07m' WHEN id::text < 'c' THEN E'two\\nlines' END")
    return dsn


def test_csv_cells_from_the_database_are_safe_in_a_terminal_and_a_spreadsheet(capsys, odd_models_dsn):
    """`scan --by model --format csv` printed a model name's escape sequences raw (JSON escapes
    them, text shows stand-ins), and a formula behind a leading tab went through: spreadsheets
    drop the tab and run it (OWASP lists tab and carriage return with = + - @)."""
    r = invoke(capsys, "scan", "--by", "model", "--dsn", odd_models_dsn, "--format", "csv")
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\x07" not in r.out
    models = {row["model"] for row in csv.DictReader(io.StringIO(r.out))}
    assert not any(m[:1] in ("=", "+", "-", "@", "\t", "\r") for m in models), models


def test_a_newline_in_a_table_cell_keeps_the_row_on_one_line(capsys, odd_models_dsn):
    """A model named 'two\\nlines' split its row of `scan --by model` (and of every table) in two."""
    r = invoke(capsys, "scan", "--by", "model", "--dsn", odd_models_dsn)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) == 2 + 4, r.out  # header, rule, one row per model (3 odd ones and '(unknown)')


# ------------------------------------------------------------------ a plugin rule named like a built-in
def test_a_plugin_rule_named_like_a_built_in_is_the_one_refused(capsys, sample_dsn, tmp_path):
    """Local plugins' rules were checked first, so a plugin rule named `cant-run` replaced the
    built-in one, and the warning blamed 'plugin built-in'."""
    path = _plugin(tmp_path, "cant_run", "yield self.finding('impostor', session.messages[:1])")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json")
    card = json.loads(r.out)
    assert r.code == 1
    assert {f["code"] for f in card["findings"] if f["rule"] == "cant-run"} == {"NF001"}
    assert "impostor" not in r.out
    assert f"plugin file:{path}: rule cant-run" in r.err and "duplicates cant-run (NF001) from built-in" in r.err, r.err


# ------------------------------------------------------------------ a rule that changes the session it is given
SESSION_DAMAGE = {
    "append": "session.messages.append('x')",
    "none": "session.messages = None",
    "clear": "session.messages.clear()",
    "info": "session.info = None",
}


@pytest.mark.parametrize("kind", list(SESSION_DAMAGE))
def test_a_rule_that_changes_the_session_is_a_rule_error_and_undone(capsys, sample_dsn, tmp_path, kind):
    """Rules share one Session: a rule that appended a string to its messages (or set them to
    None, or the info) crashed the card with a traceback; one that cleared them emptied
    every later rule's view and the card's counts."""
    path = _plugin(tmp_path, f"changes_{kind}", f"{SESSION_DAMAGE[kind]}\nreturn []")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", path, "--format", "json")
    assert r.code == 1 and "Traceback" not in r.err, r.err
    card = json.loads(r.out)
    assert [e["rule"] for e in card["errors"]] == [f"changes-{kind}"]
    assert card["stats"]["messages"] == 10 and card["outcome"] == "failed"
    assert "cant-run" in {f["rule"] for f in card["findings"]}
    assert invoke(capsys, "scan", "--dsn", sample_dsn, "-p", path, "--format", "jsonl").code == 1
