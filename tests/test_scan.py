"""`scan`: the same cards as `review`, filters, summary formats, streaming."""

from __future__ import annotations

import json

import psycopg
import pytest

from .helpers import invoke, probe_plugin


def _jsonl(capsys, dsn, *args):
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "jsonl", *args)
    assert r.code in (0, 1), r.err
    return [json.loads(line) for line in r.out.splitlines()]


def test_jsonl_lines_are_exactly_the_review_cards(capsys, sample_dsn):
    cards = _jsonl(capsys, sample_dsn)
    with psycopg.connect(sample_dsn) as conn:
        total = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert len(cards) == total
    assert [c["session"]["id"] for c in cards] == sorted(c["session"]["id"] for c in cards)
    for card in cards:
        review = json.loads(invoke(capsys, "review", card["session"]["id"], "--dsn", sample_dsn, "--format", "json").out)
        assert review == card


def test_filters(capsys, sample_dsn):
    with psycopg.connect(sample_dsn) as conn:
        flash = conn.execute("SELECT count(*) FROM sessions WHERE model = 'gemini-2.5-flash'").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM sessions WHERE status = 'failed'").fetchone()[0]
        late = conn.execute("SELECT count(*) FROM sessions WHERE created_at >= '2026-11-20'").fetchone()[0]
        early = conn.execute("SELECT count(*) FROM sessions WHERE created_at < '2026-11-10'").fetchone()[0]
        newest = [r[0] for r in conn.execute("SELECT id::text FROM sessions ORDER BY created_at DESC, id LIMIT 4")]
    assert {c["session"]["model"] for c in _jsonl(capsys, sample_dsn, "--model", "gemini-2.5-flash")} == {"gemini-2.5-flash"}
    assert len(_jsonl(capsys, sample_dsn, "--model", "gemini-2.5-flash")) == flash
    assert len(_jsonl(capsys, sample_dsn, "--status", "failed")) == failed
    assert len(_jsonl(capsys, sample_dsn, "--since", "2026-11-20")) == late
    assert len(_jsonl(capsys, sample_dsn, "--until", "2026-11-10")) == early
    assert sorted(c["session"]["id"] for c in _jsonl(capsys, sample_dsn, "--limit", "4")) == sorted(newest)
    assert _jsonl(capsys, sample_dsn, "--model", "no-such-model") == []


def test_summary_table_and_markdown(capsys, sample_dsn):
    r = invoke(capsys, "scan", "--dsn", sample_dsn)
    for heading in ("Overview", "Signatures", "Worst sessions", "Tools", "Signatures by model", "Biggest messages"):
        assert heading in r.out
    assert "c0a1e5a1" in r.out and "tool-fanout" in r.out and "gemini-2.5-flash" in r.out
    assert r.err == ""  # no progress bar when stderr is not a terminal
    md = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "markdown").out
    assert "## Signatures by model" in md and "|:--" in md or "|---" in md


def test_json_document(capsys, sample_dsn):
    doc = json.loads(invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "json").out)
    assert doc["schema_version"] == 1
    summary = doc["summary"]
    assert summary["sessions"] == len(doc["cards"])
    by_rule = {s["rule"]: s["sessions"] for s in summary["signatures"]}
    for rule, n in by_rule.items():
        assert n == sum(1 for c in doc["cards"] if rule in {f["rule"] for f in c["findings"]})
    assert summary["fanout_offenders"] and summary["fanout_offenders"][0]["max_calls"] > 30
    assert summary["biggest_messages"][0]["logical_bytes"] > 50 * 1024
    flash = next(m for m in summary["models"] if m["model"] == "gemini-2.5-flash")
    assert flash["sessions"] == sum(1 for c in doc["cards"] if c["session"]["model"] == "gemini-2.5-flash")


def test_fail_on_and_select(capsys, sample_dsn):
    assert invoke(capsys, "scan", "--dsn", sample_dsn, "--fail-on", "blocker", "--format", "jsonl").code == 1
    cards = _jsonl(capsys, sample_dsn, "--select", "tool-fanout")
    assert {f["rule"] for c in cards for f in c["findings"]} == {"tool-fanout"}


def test_jobs_give_the_same_output_byte_for_byte(capsys, sample_dsn):
    """Workers scan hash partitions; the parent merges their cards back into session order."""
    for fmt in ("jsonl", "json", "table"):
        one = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", fmt)
        for jobs in ("2", "3"):
            many = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", fmt, "--jobs", jobs)
            assert (many.code, many.out) == (one.code, one.out), (fmt, jobs)
        if fmt == "jsonl":
            ids = [json.loads(line)["session"]["id"] for line in one.out.splitlines()]
            assert len(ids) > 30 and ids == sorted(ids)


@pytest.mark.parametrize("batch", [1, 4])
def test_jobs_merge_cards_sent_in_batches(capsys, sample_dsn, monkeypatch, batch):
    """Workers send cards in batches of CARD_BATCH (forked workers inherit the patched value):
    many batches per worker, and a short last one, merge to one process's output."""
    from nomos_forensics.scan import parallel

    one = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl")
    monkeypatch.setattr(parallel, "CARD_BATCH", batch)
    two = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "--jobs", "2")
    assert len(one.out.splitlines()) > 4 * batch
    assert (two.code, two.out) == (one.code, one.out)


def test_jobs_workers_share_the_models_the_parent_preloads(capsys, sample_dsn, monkeypatch, tmp_path):
    """`--jobs` loads Lingua's models once, in the parent, before the fork (NF004's `preload`):
    the workers use that detector, whose pages they share, instead of each building its own."""
    import os

    from nomos_forensics.text import language as langid

    built = tmp_path / "built"
    real = langid._build_detector

    def recording(*, preloaded):
        with built.open("a") as out:
            out.write(f"{os.getpid()} {preloaded}\n")
        return real(preloaded=preloaded)

    monkeypatch.setattr(langid, "_DETECTOR", [])
    monkeypatch.setattr(langid, "_build_detector", recording)
    # a rule that asks Lingua in every worker, whatever the sample's texts need
    probe = probe_plugin(tmp_path, "asks_lingua", "from nomos_forensics.text import language as langid\nlangid._detector()\nreturn []")
    one = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "-p", probe)
    built.unlink()
    monkeypatch.setattr(langid, "_DETECTOR", [])
    two = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "-p", probe, "--jobs", "2")
    assert (two.code, two.out) == (one.code, one.out)
    assert built.read_text().split() == [str(os.getpid()), "True"]  # one build: the parent's, preloaded


@pytest.mark.parametrize("command", [["scan", "--format", "jsonl"], ["compare", "--at", "2026-11-25"]])
def test_jobs_workers_are_forked_before_any_other_thread_runs(capsys, sample_dsn, monkeypatch, command):
    """A thread running at the fork (the output writer) may hold a lock, stdout's or stderr's,
    that the child would then wait on forever: the workers are forked first."""
    import os
    import threading

    others: list[list[str]] = []
    real_fork = os.fork
    before = set(threading.enumerate())  # the test process's own threads, if any

    def fork():
        others.append([t.name for t in threading.enumerate() if t not in before])
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    r = invoke(capsys, command[0], "--dsn", sample_dsn, *command[1:], "--jobs", "2")
    assert r.code in (0, 1), r.err
    assert len(others) == 2 and others == [[], []], others


def test_a_rule_whose_preload_fails_still_runs_in_every_worker(capsys, sample_dsn, tmp_path):
    probe = probe_plugin(tmp_path, "bad_preload", "yield self.finding('checked', [])", methods='''
        def preload(self):
            print("preloading")  # stdout carries the cards: this must go to stderr
            raise RuntimeError("no model here")
        ''')
    one = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "-p", probe)
    two = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "-p", probe, "--jobs", "2")
    assert (two.code, two.out) == (one.code, one.out)
    assert all("checked" in line for line in two.out.splitlines())
    assert "preloading" in two.err


def test_jobs_with_limit_scan_limit_sessions(capsys, sample_dsn):
    one = _jsonl(capsys, sample_dsn, "--limit", "7")
    two = _jsonl(capsys, sample_dsn, "--limit", "7", "--jobs", "2")
    assert len(one) == 7 and one == two


def test_slim_rows_give_the_calls_the_content_has():
    from nomos_forensics.model import message_from_mapping

    def slim(names, count):
        return message_from_mapping({"id": 1, "role": "assistant", "content_shipped": False,
                                     "call_names": names, "call_count": count})

    odd = slim([" run ", {"name": "x"}, "", 7], 5)
    assert [c.name for c in odd.tool_calls] == ["run", None, None, None, None]
    assert [c.name for c in slim([" run "], 1).tool_calls] == ["run"]
    assert slim(["run"], 2).tool_calls == slim(["run"], 2).tool_calls != slim(["run"], 1).tool_calls
    full = message_from_mapping({"id": 1, "role": "assistant", "content_shipped": True,
                                 "content": {"text": "", "tool_calls": [{"name": " run "}, {"name": ""}]}})
    assert [c.name for c in full.tool_calls] == [c.name for c in slim([" run ", ""], 2).tool_calls]


def test_message_queries_are_never_memoized(sample_dsn):
    """PostgreSQL 14+ may put a Memoize node keyed by the content over the once-per-row detoast
    of _message_source.sql: every lookup detoasts and hashes the value again (7.7x the blocks
    and 3x the server CPU on the bench database). Every connection the tool opens turns it off."""
    from nomos_forensics.db import MEMOIZE_SINCE, ConnectionSettings, Database, load_query

    db = Database(ConnectionSettings.resolve(sample_dsn))
    try:
        raw = db.raw_connection()
        with raw:
            if raw.info.server_version < MEMOIZE_SINCE:
                return  # no Memoize before PostgreSQL 14
            assert raw.execute("SHOW enable_memoize").fetchone()[0] == "off"
            sql = load_query("scan_messages").replace(":full_content", "false").replace(":logical_floor", "2048")
            plan = "\n".join(row[0] for row in raw.execute("EXPLAIN " + sql))
            assert "Memoize" not in plan and "messages" in plan
        with db.connect("testing") as conn:  # the pooled connections too
            assert conn.exec_driver_sql("SHOW enable_memoize").scalar() == "off"
    finally:
        db.dispose()


def _fetch_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "nomos-forensics-fetch" and t.is_alive()]


def test_prefetched_pages_give_the_same_scan_and_no_fetch_outlives_it(capsys, sample_dsn, monkeypatch):
    """The messages come a page or two ahead of the reader, from a thread of their own: with
    three-row pages (many pages, a full queue) the cards are the same, and the thread is gone
    when the scan ends, also when its consumer stops early."""
    from nomos_forensics import plugins
    from nomos_forensics.config import Config
    from nomos_forensics.db import ConnectionSettings, Database
    from nomos_forensics.engine import build_ruleset
    from nomos_forensics.scan import stream as stream_mod
    from nomos_forensics.schema import reflect

    whole = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out
    monkeypatch.setattr(stream_mod, "STREAM_BATCH", 3)
    monkeypatch.setattr(stream_mod, "PREFETCH_PAGES", 1)
    assert invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out == whole
    assert not _fetch_threads()
    db = Database(ConnectionSettings.resolve(sample_dsn))
    try:
        with db.connect("testing") as conn:
            schema = reflect(conn, db)
            ruleset = build_ruleset(plugins.load(()), Config(), schema=schema)
            cards = stream_mod.stream_sessions(db, conn, ruleset, stream_mod.ScanFilters(), schema)
            first = [next(cards), next(cards)]
            assert _fetch_threads(), "fetching ahead while the consumer works"
            cards.close()  # the consumer stops early
            assert not _fetch_threads()
            assert [c.session.id for c in first] == [json.loads(line)["session"]["id"] for line in whole.splitlines()[:2]]
    finally:
        db.dispose()


def test_a_fetch_error_reaches_the_reader():
    from nomos_forensics.scan.stream import _Prefetch

    class Pages:  # a cursor whose second fetch fails (the server went away)
        calls = 0

        def fetchmany(self, size):
            self.calls += 1
            if self.calls == 2:
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return [(self.calls, i) for i in range(size)]

    rows = iter(_Prefetch(Pages(), 2))
    assert [next(rows), next(rows)] == [(1, 0), (1, 1)]
    try:
        next(rows)
    except psycopg.OperationalError as error:
        assert "closed the connection" in str(error)
    else:
        raise AssertionError("the fetch error was lost")
    assert not _fetch_threads()
