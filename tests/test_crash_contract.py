"""The crash contract (issue 36): an unexpected exception anywhere in a command is one line naming
it (and the session, where there is one), its own exit code (70, never a normal outcome's), the
traceback only under --debug, and what was written so far left valid."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from nomos_forensics import engine
from nomos_forensics.db import Database
from nomos_forensics.errors import ExitCode

from .helpers import SCRIPT, invoke, shard_files

CRASH = int(ExitCode.CRASH)


class Injected(RuntimeError):
    """The exception the tests inject: no code of the tool raises it."""


def _fail_query(monkeypatch, name: str) -> None:
    real = Database.query

    def query(self, conn, query_name, *args, **kwargs):
        if query_name == name:
            raise Injected(f"injected into {query_name}")
        return real(self, conn, query_name, *args, **kwargs)

    monkeypatch.setattr(Database, "query", query)


def _fail_review_after(monkeypatch, good: int, error: type[BaseException] = Injected) -> None:
    """The card step raises from the (good+1)-th session on (in --jobs workers too: they fork)."""
    real = engine.verdict
    seen = []

    def explain(session, findings, grace):
        seen.append(session.id)
        if len(seen) > good:
            raise error("injected while deciding the outcome")
        return real(session, findings, grace)

    monkeypatch.setattr(engine, "verdict", explain)


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("nomos-forensics: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("args, query", [
    (["doctor"], "server_info"),
    (["sessions"], "list_sessions"),
    (["review", "c0a1e5a1"], "session_row"),
    (["sizes"], "sizes_database"),
    (["scan"], "scan_count"),
    (["report", "-o", "{tmp}/r.html"], "scan_count"),
    (["compare", "--at", "2026-11-16"], "scan_count"),
], ids=lambda v: v[0] if isinstance(v, list) else v)
def test_every_database_command_crashes_with_one_line_and_code_70(capsys, monkeypatch, sample_dsn, tmp_path, args, query):
    _fail_query(monkeypatch, query)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = invoke(capsys, *args, "--dsn", sample_dsn)
    assert r.code == CRASH, (r.code, r.err)
    line = _one_error_line(r.err)
    assert "internal error: Injected: injected into" in line and "--debug" in line, line
    assert list(tmp_path.iterdir()) == []  # no report, no temporary file


def test_merge_and_rules_crash_the_same_way(capsys, monkeypatch, sample_dsn, tmp_path):
    shards = shard_files(capsys, tmp_path, sample_dsn, 2)
    from nomos_forensics.scan import shard

    monkeypatch.setattr(shard, "_recount", lambda shards: (_ for _ in ()).throw(Injected("in merge")))
    r = invoke(capsys, "merge", *map(str, shards))
    assert r.code == CRASH and r.out == "" and "Injected: in merge" in _one_error_line(r.err)
    from nomos_forensics.commands import rules

    monkeypatch.setattr(rules, "table", lambda *a, **k: (_ for _ in ()).throw(Injected("in rules")))
    r = invoke(capsys, "rules")
    assert r.code == CRASH and "Injected: in rules" in _one_error_line(r.err)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_crash_mid_scan_names_the_session_and_keeps_the_json_valid(capsys, monkeypatch, sample_dsn, jobs):
    _fail_review_after(monkeypatch, good=5)
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "json", "--jobs", jobs)
    assert r.code == CRASH
    line = _one_error_line(r.err)
    assert "Injected: injected while deciding the outcome (session " in line, line
    document = json.loads(r.out)  # closed, whatever was written before
    assert document["incomplete"] is True and document["summary"] is None
    assert all(card["schema_version"] == 1 for card in document["cards"])


def test_a_crash_mid_scan_leaves_whole_jsonl_lines(capsys, monkeypatch, sample_dsn):
    _fail_review_after(monkeypatch, good=7)
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl")
    assert r.code == CRASH
    cards = [json.loads(line) for line in r.out.splitlines()]  # every line whole
    assert len(cards) <= 7


def test_a_crashed_shard_has_no_trailer_and_merge_refuses_it(capsys, monkeypatch, sample_dsn, tmp_path):
    _fail_review_after(monkeypatch, good=3)
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", "0/2")
    assert r.code == CRASH
    (tmp_path / "s0.jsonl").write_text(r.out)
    monkeypatch.undo()
    (tmp_path / "s1.jsonl").write_text(invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", "1/2").out)
    merged = invoke(capsys, "merge", str(tmp_path / "s0.jsonl"), str(tmp_path / "s1.jsonl"))
    assert merged.code == int(ExitCode.SHARDS) and "not a whole shard" in merged.err


def test_a_report_that_crashes_writes_nothing_and_leaves_no_temporary_file(capsys, monkeypatch, sample_dsn, tmp_path):
    _fail_review_after(monkeypatch, good=4)
    target = tmp_path / "report.html"
    r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(target))
    assert r.code == CRASH and list(tmp_path.iterdir()) == []
    from nomos_forensics.commands import report

    monkeypatch.undo()
    monkeypatch.setattr(report, "report_page", lambda *a, **k: "x\udc80y")  # cannot be encoded: the write fails
    r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(target))
    assert r.code == CRASH and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [KeyError, GeneratorExit, type("Custom", (BaseException,), {})])
def test_whatever_escapes_is_a_crash_not_a_success(capsys, monkeypatch, sample_dsn, error):
    _fail_review_after(monkeypatch, good=0, error=error)
    r = invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn, "--format", "json")
    assert r.code == CRASH and r.out == ""
    assert f"internal error: {error.__name__}" in _one_error_line(r.err)


def test_debug_prints_the_traceback(capsys, monkeypatch, sample_dsn):
    _fail_review_after(monkeypatch, good=0)
    r = invoke(capsys, "--debug", "review", "c0a1e5a1", "--dsn", sample_dsn)
    assert r.code == CRASH
    assert "Traceback (most recent call last)" in r.err and "Injected: injected while deciding" in r.err
    assert "rerun with --debug" not in r.err


CRASHING_PLUGIN = '''
from nomos_forensics import engine, hookimpl

def _boom(*args, **kwargs):
    raise RuntimeError("injected by the plugin")

engine.verdict = _boom  # outside any rule: nothing contains it

@hookimpl
def nomos_forensics_rules():
    return []
'''


@pytest.mark.parametrize("args", [["review", "c0a1e5a1"], ["scan", "--format", "jsonl"],
                                  ["scan", "--jobs", "2", "--format", "json"], ["report", "-o", "-"]])
def test_a_gate_written_as_le_1_fails_on_a_crash(sample_dsn, tmp_path, args):
    """The README's cluster recipes gate with `test $? -le 1` (0 clean, 1 findings): a crash is
    neither, so the gate fails (a real process, the installed script)."""
    plugin = tmp_path / "crashing.py"
    plugin.write_text(CRASHING_PLUGIN)
    command = " ".join([str(SCRIPT), *args, "--dsn", f"'{sample_dsn}'", "-p", str(plugin)])
    gate = subprocess.run(["sh", "-c", f"{command} > /dev/null; code=$?; test $code -le 1; echo gate=$? code=$code"],
                          capture_output=True, text=True, timeout=120, env={**os.environ})
    assert "gate=1 code=70" in gate.stdout, (gate.stdout, gate.stderr)
    assert "internal error: RuntimeError: injected by the plugin" in gate.stderr
