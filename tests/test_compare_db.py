"""`compare` and `scan --by` end to end: the sample's release, a generated database with known
rates before and after, the JSON schemas, the regression gate and its exit code."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import psycopg
import pytest

from .helpers import invoke

ROOT = Path(__file__).resolve().parent.parent
RELEASE_RULES = ["empty-response", "unfinished-session", "orphaned-approval", "stale-plan-steps",
                 "plan-step-order", "retired-tool"]


def _schema(name: str) -> dict:
    return json.loads((ROOT / "docs" / name).read_text(encoding="utf-8"))


def test_sample_shows_the_release_effect_on_the_rules_it_targets(capsys, sample_dsn):
    r = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "migration:020", "--format", "json")
    assert r.code == 0, r.err
    result = json.loads(r.out)
    jsonschema.validate(result, _schema("compare.schema.json"))
    assert result["split"] == {"at": "2026-11-16T06:00:00+00:00", "source": "migration 020 applied_at"}
    assert result["before"]["sessions"] + result["after"]["sessions"] == 36
    rows = {row["rule"]: row for row in result["signatures"]}
    for rule in RELEASE_RULES:
        row = rows[rule]
        assert row["before"]["rate"] > row["after"]["rate"], rule
        assert row["adjusted"]["change"] < 0, rule
        assert row["verdict"] == "too few sessions"  # 21 and 15 sessions: honest, not significant
        assert "21 sessions before, 15 after" in row["reason"]


def test_sample_table_and_markdown(capsys, sample_dsn):
    r = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "2026-11-16T06:00:00Z", "--min-sessions", "10")
    assert r.code == 0, r.err
    for heading in ("Periods", "Signatures", "Model mix", "By model"):
        assert heading in r.out
    assert "no significant change" in r.out
    md = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "2026-11-16T06:00:00Z", "--format", "markdown")
    assert "## Model mix" in md.out and "| empty-response" in md.out


def test_ranges_agree_with_the_split(capsys, sample_dsn):
    at = json.loads(invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "2026-11-16T06:00:00Z", "--format", "json").out)
    ranges = json.loads(invoke(capsys, "compare", "--dsn", sample_dsn, "--before", "2026-11-01..2026-11-16T06:00:00Z",
                               "--after", "2026-11-16T06:00:00Z..2026-12-01", "--format", "json").out)
    assert at["signatures"] == ranges["signatures"]
    assert ranges["split"] is None


@pytest.mark.parametrize("args,fragment", [
    ((), "give --at"),
    (("--at", "2026-11-16", "--before", "..2026-11-16"), "give --at"),
    (("--before", "..2026-11-16"), "give --at"),
    (("--before", "2026-11-01", "--after", "2026-11-16.."), "not a range"),
    (("--before", "2026-11-01..2026-11-20", "--after", "2026-11-16.."), "overlap"),
    (("--at", "yesterday-ish"), "neither a date"),
    (("--at", "migration:030"), "give the date instead: --at YYYY-MM-DD"),
    (("--at", "2026-11-16", "--fail-on-regression", "no-such-rule"), "not among the rules compared"),
    (("--at", "2026-11-16", "--fail-on", "blocker"), "compare's gate is --fail-on-regression"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, sample_dsn, args, fragment):
    r = invoke(capsys, "compare", "--dsn", sample_dsn, *args)
    assert r.code == 2
    assert fragment in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err


def test_migration_time_not_recorded(capsys, make_db):
    dsn = make_db()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE schema_migrations DROP COLUMN applied_at")
    r = invoke(capsys, "compare", "--dsn", dsn, "--at", "migration:020")
    assert r.code == 2
    assert "does not record when migrations were applied" in r.err and "--at YYYY-MM-DD" in r.err


def test_scan_by_series_formats_and_schema(capsys, sample_dsn):
    schema = _schema("series.schema.json")
    doc = json.loads(invoke(capsys, "scan", "--dsn", sample_dsn, "--by", "week,model", "--format", "json").out)
    jsonschema.validate(doc, schema)
    assert doc["by"] == ["week", "model"]
    assert sum(b["sessions"] for b in doc["buckets"]) == 36
    empty = sum(b["signatures"]["empty-response"]["sessions"] for b in doc["buckets"])
    assert empty == 4
    lines = invoke(capsys, "scan", "--dsn", sample_dsn, "--by", "day", "--format", "jsonl").out.splitlines()
    for line in lines:
        jsonschema.validate(json.loads(line), schema["$defs"]["bucket"])
    assert sum(json.loads(line)["sessions"] for line in lines) == 36
    rows = list(csv.DictReader(io.StringIO(invoke(capsys, "scan", "--dsn", sample_dsn, "--by", "month", "--format", "csv").out)))
    assert {row["month"] for row in rows} == {"2026-11"}
    assert {row["rule"] for row in rows} >= set(RELEASE_RULES)
    table = invoke(capsys, "scan", "--dsn", sample_dsn, "--by", "model").out
    assert "gemini-2.5-flash" in table and "signatures (sessions, rate)" in table
    parallel = json.loads(invoke(capsys, "scan", "--dsn", sample_dsn, "--by", "week,model", "--format", "json", "-j", "2").out)
    assert parallel == doc


def test_scan_by_bad_values(capsys, sample_dsn):
    for value in ("hour", "week,month", "model,model", ","):
        r = invoke(capsys, "scan", "--dsn", sample_dsn, "--by", value)
        assert r.code == 2 and "--by" in r.err
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "csv")
    assert r.code == 2 and "add --by" in r.err


# ---------------------------------------------------------------------- generated database
# known_rates_dsn (conftest.py, built by tests/known_rates.py): 440 sessions with known rates


def test_known_rates_drop_rise_and_no_change(capsys, known_rates_dsn):
    r = invoke(capsys, "compare", "--dsn", known_rates_dsn, "--at", "2026-06-01", "--format", "json",
               "--select", "empty-response,retired-tool,no-web-tool")
    assert r.code == 0, r.err
    result = json.loads(r.out)
    jsonschema.validate(result, _schema("compare.schema.json"))
    verdicts = {row["rule"]: row["verdict"] for row in result["signatures"]}
    assert verdicts == {"empty-response": "improved", "retired-tool": "regressed", "no-web-tool": "no significant change"}
    assert result["regressions"] == ["retired-tool"] and result["improvements"] == ["empty-response"]
    parallel = json.loads(invoke(capsys, "compare", "--dsn", known_rates_dsn, "--at", "2026-06-01", "--format", "json",
                                 "--select", "empty-response,retired-tool,no-web-tool", "-j", "2").out)
    assert parallel == result


def test_fail_on_regression_gates(capsys, known_rates_dsn):
    base = ("compare", "--dsn", known_rates_dsn, "--at", "2026-06-01", "--select", "empty-response,retired-tool,no-web-tool")
    assert invoke(capsys, *base).code == 0
    gated = invoke(capsys, *base, "--fail-on-regression")
    assert gated.code == 1 and "regressed: retired-tool" in gated.err
    assert invoke(capsys, *base, "--fail-on-regression", "NF104").code == 1
    assert invoke(capsys, *base, "--fail-on-regression", "empty-response,no-web-tool").code == 0
