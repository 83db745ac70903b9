"""Databases at older migrations: rules that need missing tables or columns are skipped with a
reason naming what is missing, the others still run, and `doctor` lists them as unavailable."""

from __future__ import annotations

import json

import pytest

from nomos_forensics import cli
from nomos_forensics.testing import findings_by_rule, insert_case, review_case

AUDIT_RULES = {"blocked-action"}
EXECUTION_RULES = {"orphaned-approval"}
GENERATION_RULES = {"plan-step-order", "stale-plan-steps"}
ALWAYS_RUN = {"retired-tool", "user-frustration", "unfinished-session"}
LIFECYCLE = AUDIT_RULES | EXECUTION_RULES | GENERATION_RULES | ALWAYS_RUN

TRANSCRIPT = {
    "session": {"status": "completed"},
    "messages": [
        {"user": "restart nginx on lxc/105"},
        {"assistant": {"text": "", "tool_calls": [{"name": "request_execution", "arguments": {"command": "x"}}]}},
        {"tool": {"name": "request_execution", "output": "unknown tool", "is_error": True}},
        {"assistant": "Restarted nginx on lxc/106."},
        {"user": "No, I said lxc/105."},
        {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "systemctl restart nginx"}}]}},
        {"tool": {"name": "run", "output": ""}},
    ],
}


@pytest.fixture(scope="module")
def migration_001(make_db) -> str:
    return make_db(upto=1)


@pytest.fixture(scope="module")
def migration_005(make_db) -> str:
    return make_db(upto=5)


@pytest.fixture(scope="module")
def migration_010(make_db) -> str:
    return make_db(upto=10)


def _skipped(card) -> dict[str, str]:
    return {s["rule"]: s["reason"] for s in card.skipped}


def _lifecycle_errors(card):
    return [e for e in card.errors if e.rule in LIFECYCLE]


def test_migration_001_skips_audit_plan_and_execution_rules(migration_001):
    sid = insert_case(migration_001, TRANSCRIPT)
    card = review_case(migration_001, sid)
    skipped = _skipped(card)
    assert set(skipped) & LIFECYCLE == AUDIT_RULES | EXECUTION_RULES | GENERATION_RULES
    assert "table audit_log is missing" in skipped["blocked-action"]
    assert "table nomos_plan_executions is missing" in skipped["orphaned-approval"]
    for rule in GENERATION_RULES:
        assert "table nomos_plans is missing" in skipped[rule]
        assert "table nomos_plan_steps is missing" in skipped[rule]
    assert all("database is at migration 001" in skipped[r] for r in skipped)
    assert _lifecycle_errors(card) == []
    # the rules that can still work on the transcript alone do
    found = findings_by_rule(card)
    assert {r: found.get(r, 0) for r in sorted(ALWAYS_RUN)} == {
        "retired-tool": 1, "unfinished-session": 1, "user-frustration": 1,
    }


def test_migration_005_has_the_audit_log(migration_005):
    case = dict(TRANSCRIPT, audit_log=[{"action": "run", "target": "lxc/105", "outcome": "blocked"}])
    sid = insert_case(migration_005, case)
    card = review_case(migration_005, sid)
    skipped = _skipped(card)
    assert set(skipped) & LIFECYCLE == EXECUTION_RULES | GENERATION_RULES
    assert findings_by_rule(card).get("blocked-action") == 1
    assert _lifecycle_errors(card) == []


def test_migration_010_skips_only_the_generation_rules(migration_010):
    case = dict(
        TRANSCRIPT,
        audit_log=[{"action": "run", "target": "lxc/105", "outcome": "denied"}],
        executions=[{"tool": "request_execution", "status": "pending_approval", "command": "reboot"}],
        plans=[{"status": "executing", "steps": [{"seq": 1, "status": "pending"}, {"seq": 2, "status": "done"}]}],
    )
    sid = insert_case(migration_010, case)
    card = review_case(migration_010, sid)
    skipped = _skipped(card)
    assert set(skipped) & LIFECYCLE == GENERATION_RULES
    for rule in GENERATION_RULES:
        assert skipped[rule] == "nomos_plan_steps.generation missing; database is at migration 010"
    found = findings_by_rule(card)
    assert found.get("blocked-action") == 1
    assert found.get("orphaned-approval") == 1
    assert found.get("retired-tool") == 1
    retired = [f for f in card.findings if f.rule == "retired-tool"][0]
    assert "1 call and 1 execution" in retired.message
    assert _lifecycle_errors(card) == []


def test_selecting_a_skipped_rule_alone_gives_a_card_not_a_crash(migration_001):
    sid = insert_case(migration_001, TRANSCRIPT)
    card = review_case(migration_001, sid, select=["plan-step-order"])
    assert card.findings == [] and card.errors == []
    assert list(_skipped(card)) == ["plan-step-order"]


@pytest.mark.parametrize("upto, unavailable", [
    (1, AUDIT_RULES | EXECUTION_RULES | GENERATION_RULES),
    (10, GENERATION_RULES),
])
def test_doctor_lists_unavailable_rules(make_db, capsys, upto, unavailable):
    dsn = make_db(upto=upto)
    capsys.readouterr()
    code = cli.run(["doctor", "--dsn", dsn, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["compatible"] is True
    listed = {item["rule"]: item["reason"] for item in report["unavailable"]}
    assert set(listed) & LIFECYCLE == unavailable
    if upto == 10:
        assert all("nomos_plan_steps.generation missing" in listed[r] for r in GENERATION_RULES)
    code = cli.run(["doctor", "--dsn", dsn])
    text = capsys.readouterr().out
    for rule in unavailable:
        assert f"unavailable:       {rule} (" in text
