"""Hardening, round four (issue 36): each attack of the round, as a purpose-built database,
plugin or file would make it, against a real server: one clear line, its documented exit code,
and output that stays whole."""

from __future__ import annotations

import json
import os
import stat

import psycopg
import pytest

from nomos_forensics import model
from nomos_forensics.errors import ExitCode

from .helpers import invoke, probe_plugin, script, shard_files

SURROGATE_SESSION = "dddddddd-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def surrogate_dsn(make_db) -> str:
    """The sample plus a session whose user message is a JSON string holding JSON with a lone
    surrogate escape (valid jsonb: the escape is plain text until Python decodes it again)."""
    dsn = make_db(sample=True)
    with psycopg.connect(dsn) as conn:
        conn.execute("INSERT INTO sessions (id, title, status, created_at) VALUES (%s, 'lone \\ud800', 'completed', now())",
                     (SURROGATE_SESSION,))
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES "
            "(%s, 'user', to_jsonb(%s::text), now()), (%s, 'assistant', to_jsonb(%s::text), now())",
            (SURROGATE_SESSION, '{"text": "restart \\ud800 nginx \\udc80"}',
             SURROGATE_SESSION, '{"text": "done", "tool_calls": [{"name": "run", "arguments": "{\\"c\\": \\"\\\\udfff\\"}"}]}'))
    return dsn


# ------------------------------------------------------------------ F1 lone surrogates
@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_f1_a_lone_surrogate_reads_as_u_fffd_in_every_review_format(capsys, surrogate_dsn, fmt):
    r = invoke(capsys, "review", SURROGATE_SESSION, "--dsn", surrogate_dsn, "--format", fmt)
    assert r.code in (0, 1), r.err
    r.out.encode("utf-8")  # encodable, and so written
    assert "\ufffd" in r.out and "Traceback" not in r.err


@pytest.mark.parametrize("args", [["--format", "jsonl"], ["--format", "json"], ["--format", "json", "--jobs", "2"]])
def test_f1_a_lone_surrogate_does_not_stop_a_scan(capsys, surrogate_dsn, args):
    r = invoke(capsys, "scan", "--dsn", surrogate_dsn, *args)
    assert r.code in (0, 1), r.err
    cards = json.loads(r.out)["cards"] if "json" in args and "jsonl" not in args else [json.loads(x) for x in r.out.splitlines()]
    assert len(cards) == 37
    mine = next(c for c in cards if c["session"]["id"] == SURROGATE_SESSION)
    assert "\ufffd" in mine["objective"]


def test_f1_shards_and_report(capsys, surrogate_dsn, tmp_path):
    shards = shard_files(capsys, tmp_path, surrogate_dsn, 2)
    assert invoke(capsys, "merge", *map(str, shards)).code in (0, 1)
    r = invoke(capsys, "report", "--dsn", surrogate_dsn, "-o", str(tmp_path / "r.html"))
    assert r.code in (0, 1) and (tmp_path / "r.html").stat().st_size > 0


def test_f1_the_read_boundary_replaces_surrogates_once():
    value, shape = model.decode_content('{"text": "a \\ud800 b", "k\\udfff": ["\\ud83d\\ude00"]}')
    assert shape == "double-encoded"
    assert value == {"text": "a \ufffd b", "k\ufffd": ["\U0001F600"]}  # a proper pair stays one character


# ------------------------------------------------------------------ F2 SQL_ASCII
@pytest.fixture(scope="module")
def ascii_dsn(make_db, admin_dsn) -> str:
    dsn = make_db(schema=False)
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}"')
        conn.execute(f"CREATE DATABASE \"{name}\" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    from nomos_forensics import devdb

    devdb.apply_migrations(dsn)
    with psycopg.connect(dsn) as conn:
        conn.execute("SET client_encoding TO 'SQL_ASCII'")
        conn.execute(b"INSERT INTO sessions (id, title, status, created_at) VALUES "
                     b"('aaaaaaaa-0000-4000-8000-0000000000a1', 'caf\xe9 \xff', 'completed', now())")
        conn.execute(b"INSERT INTO messages (session_id, role, content, created_at) VALUES "
                     b"('aaaaaaaa-0000-4000-8000-0000000000a1', 'user', '{\"text\": \"r\xe9sum\xe9 caf\xc3\xa9\"}', now())")
    return dsn


def test_f2_sql_ascii_is_read_as_utf8_with_replacement(capsys, ascii_dsn):
    doctor = invoke(capsys, "doctor", "--dsn", ascii_dsn)
    assert doctor.code == 0 and "encoding:          SQL_ASCII (bytes read as UTF-8" in doctor.out
    r = invoke(capsys, "review", "aaaaaaaa", "--dsn", ascii_dsn, "--format", "json")
    card = json.loads(r.out)
    assert card["session"]["title"] == "caf\ufffd \ufffd" and card["objective"] == "r\ufffdsum\ufffd café"
    for args in (["sessions"], ["scan", "--format", "jsonl"], ["sessions", "--search", "café"]):
        assert invoke(capsys, *args, "--dsn", ascii_dsn).code in (0, 1)


# ------------------------------------------------------------------ F3, F7 privileges and row security
@pytest.fixture(scope="module")
def reader(make_db) -> tuple[str, str, str]:
    """(admin DSN, reader DSN, role): a role that may not read audit_log, whose messages
    row-level security filters, and that may open one connection."""
    dsn = make_db(sample=True)
    role = "nf_reader_" + psycopg.conninfo.conninfo_to_dict(dsn)["dbname"][-10:]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP ROLE IF EXISTS {role}")
        conn.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 1")
        conn.execute(f"GRANT SELECT ON sessions, messages, nomos_plans, nomos_plan_steps, nomos_plan_executions, "
                     f"schema_migrations TO {role}")
        conn.execute("ALTER TABLE messages ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY no_tools ON messages FOR SELECT TO {role} USING (role <> 'tool')")
    yield dsn, psycopg.conninfo.make_conninfo(dsn, user=role), role
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


@pytest.fixture(scope="module")
def reader_dsn(reader) -> str:
    return reader[1]


def test_f3_f7_doctor_names_unreadable_tables_and_row_security(capsys, reader_dsn):
    r = invoke(capsys, "doctor", "--dsn", reader_dsn)
    assert r.code == 0
    assert "privileges:        no SELECT on audit_log" in r.out
    assert "row security:      filters messages (1 policy)" in r.out
    assert "unavailable:       blocked-action (no SELECT privilege on audit_log)" in r.out
    assert "schema:            usable, with gaps above" in r.out


def test_f3_f7_commands_skip_what_they_cannot_read_and_warn_of_hidden_rows(capsys, reader_dsn):
    r = invoke(capsys, "scan", "--dsn", reader_dsn, "--format", "jsonl")
    assert r.code in (0, 1), r.err
    warnings = [line for line in r.err.splitlines() if "row-level security" in line]
    assert len(warnings) == 1 and "messages (1 policy)" in warnings[0]
    cards = [json.loads(line) for line in r.out.splitlines()]
    assert all(any(s["rule"] == "blocked-action" for s in c["skipped_rules"]) for c in cards)
    r = invoke(capsys, "review", "c0a1e5a1", "--dsn", reader_dsn)
    assert r.code in (0, 1) and "Skipped: blocked-action (no SELECT privilege on audit_log)" in r.out


def test_f3_no_select_on_messages_is_one_line_exit_2(capsys, reader):
    admin, reader_dsn, role = reader
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"REVOKE SELECT ON messages FROM {role}")
    try:
        for args in (["scan"], ["review", "c0a1e5a1"], ["report", "-o", "-"], ["sessions"]):
            r = invoke(capsys, *args, "--dsn", reader_dsn)
            assert r.code == 2 and "no SELECT privilege on messages" in r.err and r.out == "", (args, r.err)
        assert "INCOMPATIBLE: no SELECT privilege on messages" in invoke(capsys, "doctor", "--dsn", reader_dsn).out
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"GRANT SELECT ON messages TO {role}")


# ------------------------------------------------------------------ F4, F12 what a plugin yields or raises
EVIL = '''
circular = {}
circular["self"] = circular
deep = {}
cursor = deep
for _ in range(100_000):
    cursor["a"] = {}
    cursor = cursor["a"]
m = session.messages[:1]
yield self.finding("tuple key", m, data={(1, 2): 3})
yield self.finding("circular", m, data=circular)
yield self.finding("big int", m, data={"n": 10 ** 5000})
yield self.finding("deep", m, data=deep)
yield self.finding("nan", m, data={"f": float("nan"), "g": float("inf")})
yield self.finding("surrogate \\ud800", [Evidence(m[0].id, 1, "x\\udc80y")], data={"s": "\\udfff"})
yield self.finding("huge" + "x" * 10_000_000, [Evidence(1, 1, "y" * 10_000_000)] * 1000)
for i in range(10_000):
    yield self.finding(f"many {i}", m)
'''


def test_f4_bad_findings_are_rule_errors_and_cards_stay_bounded(capsys, sample_dsn, tmp_path):
    path = probe_plugin(tmp_path, "evil_rule", EVIL, header="from nomos_forensics import Evidence")
    r = invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "-p", path, "--format", "json")
    assert r.code == 1, r.err
    assert "NaN" not in r.out and "Infinity" not in r.out
    card = json.loads(r.out)
    assert len(r.out.encode()) < 1_000_000
    errors = [e for e in card["errors"] if e["rule"] == "evil-rule"]
    assert any("data has a key that is tuple (1, 2)" in e["message"] for e in errors)
    assert any(e["type"] == "TooManyFindings" for e in errors)
    mine = [f for f in card["findings"] if f["rule"] == "evil-rule"]
    assert [f["message"] for f in mine][:1] == ["surrogate \ufffd"] and mine[0]["data"] == {"s": "\ufffd"}
    huge = next(f for f in mine if f["message"].startswith("huge"))
    assert len(huge["message"]) <= 500 and len(huge["evidence"]) == 20 and huge["evidence_omitted"] == 980
    assert all(len(e["excerpt"]) <= 200 for e in huge["evidence"])
    for fmt in ("text", "markdown", "html"):
        out = invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "-p", path, "--format", fmt)
        assert out.code == 1 and len(out.out.encode()) < 2_000_000, fmt
    scan = invoke(capsys, "scan", "--dsn", sample_dsn, "-p", path, "--format", "jsonl", "--jobs", "2")
    assert scan.code == 1 and len(scan.out.splitlines()) == 36


def test_f4_every_data_problem_is_named(capsys, sample_dsn, tmp_path):
    for data, words in (("{'c': circular}", "circular reference"), ("{'n': 10 ** 5000}", "beyond 64 bits"),
                        ("{'d': deep}", "nested deeper"), ("{'f': float('nan')}", "nan"),
                        ("{'x': 'z' * 100_000}", "over the bound")):
        body = EVIL.split("m = session")[0] + f"yield self.finding('x', session.messages[:1], data={data})\n"
        path = probe_plugin(tmp_path, f"data_{abs(hash(data))}", body)
        card = json.loads(invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "-p", path, "--format", "json").out)
        assert any(words in e["message"] for e in card["errors"]), (data, card["errors"])


@pytest.mark.parametrize("raised", ["GeneratorExit()", "type('Custom', (BaseException,), {})('mine')"])
def test_f12_a_plugin_raising_a_base_exception_is_a_rule_error(capsys, sample_dsn, tmp_path, raised):
    path = probe_plugin(tmp_path, f"raiser_{len(raised)}", f"raise {raised}\nyield")
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "-p", path, "--format", "jsonl")
    assert r.code == 1 and len(r.out.splitlines()) == 36, r.err


def test_f12_a_rules_hook_whose_generator_raises_later_is_a_load_problem(capsys, sample_dsn, tmp_path):
    path = tmp_path / "later.py"
    path.write_text("from nomos_forensics import hookimpl\n\ndef _rules():\n    yield from ()\n    raise RuntimeError('later')\n\n"
                    "@hookimpl\ndef nomos_forensics_rules():\n    return _rules()\n")
    r = invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "-p", str(path))
    assert r.code == 1 and "nomos_forensics_rules raised RuntimeError: later" in r.err


# ------------------------------------------------------------------ F5 timeouts
def test_f5_a_statement_timeout_is_said_as_such(capsys, make_db):
    dsn = make_db(sample=True)
    with psycopg.connect(dsn) as conn:  # one session whose tool output takes the server a while to measure
        conn.execute("INSERT INTO sessions (id, title, status, created_at) VALUES "
                     "('ffffffff-0000-4000-8000-000000000001', 'fat', 'completed', now())")
        conn.execute("INSERT INTO messages (session_id, role, content, created_at) SELECT "
                     "'ffffffff-0000-4000-8000-000000000001', 'tool', "
                     "jsonb_build_object('name', 'run', 'output', string_agg(md5(g::text), ' ')), now() "
                     "FROM generate_series(1, 2000000) g")
    r = invoke(capsys, "scan", "--dsn", dsn, "--statement-timeout", "0.05", "--format", "json")
    assert r.code == 2
    assert "statement timed out while" in r.err and "sessions were done" in r.err and "raise --statement-timeout" in r.err
    assert json.loads(r.out)["incomplete"] is True
    r = invoke(capsys, "scan", "--dsn", dsn, "--statement-timeout", "0.001")
    assert r.code == 2 and "cannot connect" not in r.err and "timed out" in r.err


def test_f5_doctor_warns_of_a_timeout_below_the_floor(capsys, sample_dsn):
    r = invoke(capsys, "doctor", "--dsn", sample_dsn, "--statement-timeout", "0.5")
    assert "timeout:           statement timeout 0.5s is under 1s" in r.out


# ------------------------------------------------------------------ F6 one enormous session
def test_f6_a_session_too_long_to_hold_is_read_in_two_windows(capsys, sample_dsn, monkeypatch):
    monkeypatch.setattr(model, "HELD_MESSAGES", 6)
    card = json.loads(invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "--format", "json").out)
    assert card["stats"]["messages"] == 10 and card["stats"]["tool_calls"] == 1
    assert card["notes"][0].startswith("10 messages: the rules read the first 3 and the last 3; the 4 between")
    html = invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "--format", "html").out
    assert "4 messages" in html


# ------------------------------------------------------------------ F8, F9 merge trusts nothing
def _edit_trailer(path, edit) -> None:
    lines = path.read_text().splitlines()
    trailer = json.loads(lines[-1])
    edit(trailer["nomos_forensics_shard"])
    path.write_text("\n".join([*lines[:-1], json.dumps(trailer)]) + "\n")


@pytest.mark.parametrize("edit, words", [
    (lambda t: t["summary"]["by_rule"].update({"cant-run": 45}), "do not match its card lines (by_rule"),
    (lambda t: t["summary"]["outcomes"].update({"achieved": 1}), "do not match its card lines"),
    (lambda t: t["summary"]["worst"].__setitem__(0, [[3], {"id": 1}]), "unreadable summary"),
    (lambda t: t["summary"]["biggest"].__setitem__(0, ["x", {}]), "unreadable summary"),
    (lambda t: t["scan"]["rules"].__setitem__(0, "cant-run"), "not a whole shard"),
], ids=["counts", "outcomes", "worst", "biggest", "rules"])
def test_f8_merge_report_and_compare_refuse_an_edited_trailer(capsys, sample_dsn, tmp_path, edit, words):
    shards = shard_files(capsys, tmp_path, sample_dsn, 2)
    _edit_trailer(shards[0], edit)
    for args in (["merge"], ["report", "-o", str(tmp_path / "r.html"), "--dsn", sample_dsn],
                 ["compare", "--at", "2026-11-16"]):
        r = invoke(capsys, *args, *map(str, shards))
        assert r.code == int(ExitCode.SHARDS) and words in r.err and "Traceback" not in r.err, (args, r.err)


def test_f9_shards_of_different_plugin_versions_do_not_merge(capsys, sample_dsn, tmp_path):
    """Two machines, one with an edited copy of the plugin (each shard its own process)."""
    path = probe_plugin(tmp_path, "versioned", "return ()")
    first = script("scan", "--dsn", sample_dsn, "--shard", "0/2", "-p", path).stdout
    with open(path, "a") as handle:
        handle.write("# changed\n")
    second = script("scan", "--dsn", sample_dsn, "--shard", "1/2", "-p", path).stdout
    (tmp_path / "a.jsonl").write_text(first)
    (tmp_path / "b.jsonl").write_text(second)
    r = invoke(capsys, "merge", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"))
    assert r.code == int(ExitCode.SHARDS) and "rules differ" in r.err


# ------------------------------------------------------------------ F10 a lost connection
def test_f10_a_lost_connection_leaves_a_closed_json_document(capsys, sample_dsn, monkeypatch):
    from nomos_forensics import engine
    from nomos_forensics.errors import ConnectionLost

    real, seen = engine.verdict, []

    def lose(session, findings, grace):
        seen.append(1)
        if len(seen) > 4:
            raise ConnectionLost("lost the connection to the server while scanning sessions: terminated")
        return real(session, findings, grace)

    monkeypatch.setattr(engine, "verdict", lose)
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "json")
    assert r.code == 2 and "sessions were done" in r.err
    document = json.loads(r.out)
    assert document["incomplete"] is True and len(document["cards"]) == 4


# ------------------------------------------------------------------ F11 configuration files
@pytest.mark.parametrize("text, words", [
    ('tool = "x"\n', "`tool` must be a table"),
    ("[[tool.nomos-forensics]]\nselect = ['x']\n", "must be a table, not list"),
    ("[tool.nomos-forensics]\nbounds = 3\n", "`bounds` must be a table"),
    ("[tool.nomos-forensics.bounds]\nnotes = -1\n", "`bounds.notes` must be a whole number"),
])
def test_f11_a_malformed_pyproject_is_one_line(capsys, tmp_path, monkeypatch, text, words):
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    r = invoke(capsys, "rules")
    assert r.code == 2 and words in r.err and "Traceback" not in r.err


# ------------------------------------------------------------------ F13, F14, F15 the small ones
def test_f13_jobs_auto_stays_inside_the_role_connection_limit(capsys, reader_dsn):
    r = invoke(capsys, "scan", "--dsn", reader_dsn, "--jobs", "auto", "--format", "jsonl")
    assert r.code in (0, 1), r.err
    assert "--jobs auto: 1 worker" in r.err and "allowed for the role (limit 1)" in r.err


def test_f14_report_keeps_a_file_mode_and_makes_new_files_private(capsys, sample_dsn, tmp_path):
    target = tmp_path / "r.html"
    assert invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(target)).code in (0, 1)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    os.chmod(target, 0o640)
    assert invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(target)).code in (0, 1)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_f15_ambiguous_prefix_candidates_differ_as_printed(capsys, make_db):
    dsn = make_db()
    with psycopg.connect(dsn) as conn:
        for tail in ("000000000001", "000000000002"):
            conn.execute("INSERT INTO sessions (id, title, created_at) VALUES (%s, 'twin', now())",
                         (f"abcdabcd-abcd-4bcd-abcd-{tail}",))
    r = invoke(capsys, "review", "abcdabcd", "--dsn", dsn)
    assert r.code == 2
    assert "abcdabcd-abcd-4bcd-abcd-000000000001" in r.err and "abcdabcd-abcd-4bcd-abcd-000000000002" in r.err
