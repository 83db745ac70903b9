"""`nomos-forensics report` and `review --format html` without a browser: the figures match
scan's, --jobs gives the same file, transcripts are bounded, the JSON and the page are safe.
The browser tests are in test_report_browser.py."""

from __future__ import annotations

import json
import re

import psycopg
import pytest

from nomos_forensics.report import script_json, wilson

from .helpers import invoke, shard_files
from .report_fixtures import HOSTILE_ID, LONG_ID, add_hostile_session, add_long_session


@pytest.fixture(scope="module")
def report_dsn(make_db) -> str:
    dsn = make_db(sample=True)
    add_hostile_session(dsn)
    add_long_session(dsn)
    return dsn


def _report(capsys, tmp_path, dsn, *args, name="r.html") -> tuple[str, object]:
    path = tmp_path / name
    result = invoke(capsys, "report", "--dsn", dsn, "-o", str(path), *args)
    assert result.code in (0, 1), result.err
    return path.read_text(encoding="utf-8"), result


def _strip_generated(html: str) -> str:
    return re.sub(r"Made by nomos-forensics on [^.]*\.", "", html)


def test_wilson_interval_known_values():
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and abs(hi - 0.2775) < 1e-3
    lo, hi = wilson(5, 10)
    assert abs(lo - 0.2366) < 1e-3 and abs(hi - 0.7634) < 1e-3
    assert wilson(0, 0) == (0.0, 0.0)
    lo, hi = wilson(100, 100)
    assert abs(hi - 1.0) < 1e-9 and 0.96 < lo < 0.97


def test_script_json_cannot_close_the_script_or_break_lines():
    value = {"model": "</script><script>alert(1)</script>", "t": "a\u2028b\u2029c & <!-- d -->"}
    text = script_json(value)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == value


def test_report_headline_matches_scan(capsys, tmp_path, report_dsn):
    html, result = _report(capsys, tmp_path, report_dsn)
    summary = json.loads(invoke(capsys, "scan", "--dsn", report_dsn, "--format", "json").out)["summary"]
    assert f'<b id="n-sessions">{summary["sessions"]:,}</b>' in html
    blocker = summary["severity"].get("blocker", 0)
    assert f'<b id="blocker-share">{100 * blocker / summary["sessions"]:.1f}%</b>' in html
    for signature in summary["signatures"]:
        assert f'data-rule="{signature["rule"]}">{signature["rule"]}</a></td><td class="num">{signature["sessions"]}<' in html
    assert "wrote" in result.err and "transcripts" in result.err


def test_report_is_self_contained_under_a_strict_csp(capsys, tmp_path, report_dsn):
    html, _ = _report(capsys, tmp_path, report_dsn)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "'unsafe-eval'" not in csp
    assert re.search(r"script-src 'sha256-[^']+' 'sha256-[^']+';", csp)
    assert not re.search(r'\s(src|href)="(?!#)', html), "every link stays inside the page"
    assert not re.search(r"<(link|iframe|object|embed|img)\b", html)


def test_jobs_give_the_same_report(capsys, tmp_path, report_dsn):
    one, _ = _report(capsys, tmp_path, report_dsn, name="one.html")
    two, _ = _report(capsys, tmp_path, report_dsn, "--jobs", "2", name="two.html")
    assert _strip_generated(one) == _strip_generated(two)


def test_transcripts_are_bounded(capsys, tmp_path, report_dsn):
    html, _ = _report(capsys, tmp_path, report_dsn, "--transcripts", "3", "--sessions", "5")
    assert html.count('<ol class="transcript">') == 3
    listed = len(re.findall(r'<tr data-id="', html))
    assert listed >= 5 and html.count('<section class="session"') == listed
    assert html.count("Not in this report") == listed - 3
    none, _ = _report(capsys, tmp_path, report_dsn, "--transcripts", "0", name="none.html")
    assert '<ol class="transcript">' not in none


def test_the_big_output_stays_on_the_server(capsys, tmp_path, report_dsn):
    html, _ = _report(capsys, tmp_path, report_dsn)
    assert len(html.encode()) < 1_000_000, "the 4 MB tool output is cut to a head and a tail"
    assert "4,1" in html and "characters; first and last lines" in html
    assert "last line" in html and "first line" in html


def test_review_html_is_one_session_page(capsys, report_dsn):
    result = invoke(capsys, "review", HOSTILE_ID, "--dsn", report_dsn, "--format", "html")
    assert result.code in (0, 1)
    html = result.out
    assert html.startswith("<!doctype html>") and html.count('<section class="session"') == 1
    assert html.count('<li class="msg ') == 4
    assert 'class="msg role-assistant hit err"' in html
    assert "<script>window.pwned" not in html and "&lt;script&gt;window.pwned=3" in html
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html


def test_report_refuses_an_unwritable_path(capsys, report_dsn, tmp_path):
    result = invoke(capsys, "report", "--dsn", report_dsn, "-o", str(tmp_path / "no" / "such" / "r.html"))
    assert result.code == 2 and "cannot write" in result.err


@pytest.mark.parametrize("args", [(), ("--select", "NF001,NF003,NF107", "--transcripts", "2", "--sessions", "3")])
def test_a_report_from_shards_is_the_report_from_the_database(capsys, tmp_path, report_dsn, args):
    rules = args[:2]
    shards = [str(p) for p in shard_files(capsys, tmp_path, report_dsn, 3, *rules)]
    whole, from_db = _report(capsys, tmp_path, report_dsn, *args, name="db.html")
    merged, from_shards = _report(capsys, tmp_path, report_dsn, *args, *reversed(shards), name="shards.html")
    assert _strip_generated(merged) == _strip_generated(whole)
    assert from_shards.code == from_db.code
    assert from_shards.err.replace("shards.html", "db.html") == from_db.err
    assert 'class="transcript"' in merged


def test_a_report_from_shards_refuses_what_would_not_be_that_scan(capsys, tmp_path, make_db):
    dsn = make_db(sample=True)
    add_long_session(dsn)
    shards = [str(p) for p in shard_files(capsys, tmp_path, dsn, 3)]
    out = str(tmp_path / "r.html")

    def refused(*args: str, code: int, needle: str) -> None:
        result = invoke(capsys, "report", "--dsn", dsn, "-o", out, *args)
        assert result.code == code and needle in result.err, result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert not (tmp_path / "r.html").exists(), "nothing is written"

    refused("--since", "2026-01-01", *shards, code=2, needle="--since: the shards were scanned with their own filters")
    refused("--jobs", "2", *shards, code=2, needle="--jobs")
    refused(*shards[:2], code=3, needle="missing shard 2/3")
    refused("--select", "NF001", *shards, code=3, needle="the shards ran other rules or options (rules differ")
    stale = tmp_path / "stale.jsonl"  # a trailer without the report's figures (an earlier version)
    lines = open(shards[0], encoding="utf-8").read().splitlines()
    trailer = json.loads(lines[-1])
    del trailer["nomos_forensics_shard"]["summary"]["truncation"]
    stale.write_text("\n".join(lines[:-1] + [json.dumps(trailer)]) + "\n", encoding="utf-8")
    refused(str(stale), *shards[1:], code=3, needle="written by an earlier nomos-forensics")
    # a carried session changes after the scan (a live replica), then is deleted: the report is
    # still made, with the shards' card and no transcript for it, and a warning
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE messages SET content = jsonb_set(content, '{text}', '\"edited\"')"
                     " WHERE id = (SELECT min(id) FROM messages WHERE session_id = %s AND role = 'user')",
                     (LONG_ID,))
    for change in ("edited", "deleted"):
        if change == "deleted":
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("DELETE FROM sessions WHERE id = %s", (LONG_ID,))
        result = invoke(capsys, "report", "--dsn", dsn, "-o", out, *shards)
        assert result.code == 0, result.err
        assert f"1 of the carried sessions changed since the scan or are gone (first: {LONG_ID})" in result.err
        html = (tmp_path / "r.html").read_text(encoding="utf-8")
        page = html[html.index(f'<section class="session" id="s-{LONG_ID}"'):]
        page = page[:page.index("</section>")]
        assert "Not in this report" in page and '<ol class="transcript">' not in page, change
        assert "edited" not in html, "the card is the shard's"
        (tmp_path / "r.html").unlink()


def _long_card(n: int, evidence_at: list[int]):
    from datetime import datetime, timedelta, timezone

    from nomos_forensics.card import Card, Stats
    from nomos_forensics.model import Message, Session, SessionInfo
    from nomos_forensics.rule import Evidence, Finding, Severity

    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    messages = [Message(i + 1, "user" if i % 2 == 0 else "assistant", start + timedelta(seconds=i), text=f"m{i + 1}")
                for i in range(n)]
    session = Session(SessionInfo("00000000-0000-4000-8000-000000000001"), messages)
    findings = [Finding("cant-run", "NF001", Severity.BLOCKER, "x", "", "",
                        evidence=[Evidence(messages[i].id, messages[i].turn, "e")]) for i in evidence_at]
    return Card(session, Stats.of(session), "o", "failed", findings)


def test_a_long_transcript_keeps_its_edges_and_the_evidence():
    from nomos_forensics.report import transcript_of
    from nomos_forensics.report.collect import EDGE, MAX_MESSAGES

    card = _long_card(500, [100, 250, 251, 400])
    entries = transcript_of(card)
    kept = [e["id"] for e in entries if "id" in e]
    assert len(kept) <= MAX_MESSAGES
    assert kept[:EDGE] == list(range(1, EDGE + 1)) and kept[-EDGE:] == list(range(501 - EDGE, 501))
    for index in (100, 250, 251, 400):
        assert {index, index + 1, index + 2} <= set(kept)  # the evidence (id index + 1) and its neighbours
    assert kept == sorted(kept)
    assert sum(e["gap"] for e in entries if "gap" in e) == 500 - len(kept)
    assert len(transcript_of(card, limit=None)) == 500
    short = _long_card(40, [5])
    assert [e["id"] for e in transcript_of(short)] == list(range(1, 41))


def test_many_pieces_of_evidence_stop_at_the_cap():
    from nomos_forensics.report import transcript_of
    from nomos_forensics.report.collect import MAX_MESSAGES

    card = _long_card(1000, list(range(50, 950, 7)))
    kept = [e["id"] for e in transcript_of(card) if "id" in e]
    assert MAX_MESSAGES - 3 < len(kept) <= MAX_MESSAGES
    assert 51 in kept  # the first piece of evidence is always there


def test_every_chart_point_has_a_listed_session(capsys, tmp_path, known_rates_dsn):
    """440 sessions over two months, only one listed with its card: each day and signature's
    worst still comes as a row (no card, a `review` hint), so a click on any point of the rate
    chart lists at least one session."""
    html, _ = _report(capsys, tmp_path, known_rates_dsn, "--sessions", "1", "--transcripts", "1")
    data = json.loads(re.search(r'<script type="application/json" id="nf-data">(.*?)</script>', html, re.S).group(1))
    rows = re.findall(r'<tr data-id="([^"]+)" data-rules=" ([^"]*) " [^>]*data-bucket="([^"]*)"', html)
    listed = {(bucket, rule) for _, rules, bucket in rows for rule in rules.split()}
    time = data["time"]
    points = {(b, s["rule"]) for s in time["series"] for b, rate in zip(time["buckets"], s["rates"]) if rate}
    assert points and points <= listed
    assert "(no card here: <code>review " in html
    cards = html.count('<section class="session"')
    assert cards < len(rows), "the extra rows carry no card section"
    assert len(html.encode()) < 2_000_000
