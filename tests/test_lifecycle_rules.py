"""The lifecycle rules (approvals, plans, audit log, retired tools, frustration, unfinished
sessions) and the card's outcome. Their case files (tests/cases/<rule>.yaml) run in
tests/test_cases.py; this module checks their coverage, metadata, evidence and outcomes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from nomos_forensics import plugins
from nomos_forensics.card import Outcome
from nomos_forensics.rule import Severity
from nomos_forensics.testing import findings_by_rule, insert_case, review_case

HERE = Path(__file__).parent
LIFECYCLE_RULES = (
    "orphaned-approval",
    "plan-step-order",
    "stale-plan-steps",
    "retired-tool",
    "blocked-action",
    "user-frustration",
    "unfinished-session",
)


# ---------------------------------------------------------------- metadata and docs
def _specs():
    registry = plugins.load()
    return {spec.name: spec for spec in registry.rules}


@pytest.mark.parametrize("name", LIFECYCLE_RULES)
def test_rule_is_registered_and_documented(name):
    spec = _specs()[name]
    assert spec.source == plugins.BUILTIN
    sections = spec.cls.sections()
    for section in ("summary", "detects", "root cause", "fix"):
        assert len(sections.get(section, "")) > 30 or section == "summary", (name, section)
    assert sections["summary"]


def test_codes_and_severities():
    specs = _specs()
    assert {n: specs[n].code for n in LIFECYCLE_RULES} == {
        "orphaned-approval": "NF101",
        "plan-step-order": "NF102",
        "stale-plan-steps": "NF103",
        "retired-tool": "NF104",
        "blocked-action": "NF105",
        "user-frustration": "NF106",
        "unfinished-session": "NF107",
    }
    assert specs["blocked-action"].cls.default_severity() == Severity.BLOCKER


def test_config_keys_are_documented():
    from nomos_forensics.docs import rules_markdown

    reference = rules_markdown()
    for name in LIFECYCLE_RULES:
        cls = _specs()[name].cls
        for key, option in cls.option_specs().items():
            assert f"| `{key}` |" in reference and option.description in reference, (name, key)


# ---------------------------------------------------------------- evidence
def _review(dsn, case, select=None, **kwargs):
    sid = insert_case(dsn, case)
    return review_case(dsn, sid, select=select or [], **kwargs)


def _finding(card, rule):
    found = [f for f in card.findings if f.rule == rule]
    assert len(found) == 1, [(f.rule, f.message) for f in card.findings]
    return found[0]


def test_frustration_evidence_quotes_each_message(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [
            {"user": "restart nginx on lxc/105"},
            {"assistant": "Restarted apache on lxc/105."},
            {"user": "No, I said nginx."},
            {"assistant": "Restarted nginx on lxc/106."},
            {"user": "restart nginx on lxc/105"},
            {"assistant": "Done."},
        ],
    }, select=["user-frustration"])
    finding = _finding(card, "user-frustration")
    users = [m for m in card.session.messages if m.role == "user"]
    assert [e.message_id for e in finding.evidence] == [users[1].id, users[2].id]
    assert [e.turn for e in finding.evidence] == [2, 3]
    assert "No, I said nginx." in finding.evidence[0].excerpt
    assert finding.evidence[0].excerpt.startswith("correction")
    assert finding.evidence[1].excerpt.startswith(f"repeat of message {users[0].id} (turn 1)")
    assert finding.severity == Severity.FRICTION and "in 2 messages (turn 2, 3; highest grade " in finding.message
    assert [m["message_id"] for m in finding.data["messages"]] == [users[1].id, users[2].id]
    assert all(m["kind"] in ("clarify", "correct", "repeat", "complain") and m["grade"] in ("low", "medium", "high")
               for m in finding.data["messages"])


def test_blocked_action_fills_the_blockers(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [
            {"user": "wipe /var/lib/docker on lxc/105"},
            {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "rm -rf /var/lib/docker"}}]}},
            {"tool": {"name": "run", "output": "blocked", "is_error": True}},
            {"assistant": "The command was blocked by policy."},
        ],
        "audit_log": [
            {"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked",
             "detail": {"command": "rm -rf /var/lib/docker", "reason": "destructive command requires approval"}},
            {"action": "run", "target": "lxc/106", "risk_class": "destructive", "outcome": "blocked",
             "detail": {"command": "rm -rf /srv"}},
            {"action": "run", "target": "lxc/106", "risk_class": "destructive", "outcome": "blocked",
             "detail": {"command": "rm -rf /srv"}},
        ],
    }, select=["blocked-action"])
    assert card.blockers == [
        "blocked: run on lxc/105 (destructive): destructive command requires approval",
        "blocked: run on lxc/106 (destructive): `rm -rf /srv` (2\u00d7)",
    ]
    first = [f for f in card.findings if "lxc/105" in f.message][0]
    assert first.severity == Severity.BLOCKER
    assert first.evidence[0].turn == 1
    assert first.evidence[0].message_id == card.session.messages[1].id  # the message that called run
    assert "rm -rf /var/lib/docker" in first.evidence[0].excerpt
    assert card.outcome == Outcome.FAILED


def test_resolved_block_is_friction_without_blocker_line(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [{"user": "restart haproxy on lb-1"}, {"assistant": "Approved and restarted."}],
        "audit_log": [
            {"action": "run", "target": "lb-1", "risk_class": "reversible_high", "outcome": "blocked",
             "detail": {"command": "systemctl restart haproxy", "reason": "needs approval"}},
            {"actor": "user:bob", "action": "run", "target": "lb-1", "outcome": "approved",
             "detail": {"command": "systemctl restart haproxy"}},
        ],
    }, select=["blocked-action"])
    finding = _finding(card, "blocked-action")
    assert finding.severity == Severity.FRICTION and "later approved" in finding.message
    assert card.blockers == []


def test_blocked_rows_of_other_sessions_do_not_leak(nomos_dsn):
    _review(nomos_dsn, {"messages": [{"user": "x"}, {"assistant": "y"}],
                        "audit_log": [{"action": "run", "target": "lxc/1", "outcome": "blocked"}]})
    card = _review(nomos_dsn, {"messages": [{"user": "check"}, {"assistant": "fine"}]}, select=["blocked-action"])
    assert findings_by_rule(card) == {}


def test_orphaned_approval_evidence(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [
            {"user": "delete the old snapshots"},
            {"assistant": {"text": "All done.", "tool_calls": [{"name": "complete_task"}]}},
            {"tool": {"name": "complete_task", "output": "ok"}},
        ],
        "executions": [{"tool": "run", "status": "pending_approval", "command": "zfs destroy tank/old"}],
    }, select=["orphaned-approval"])
    finding = _finding(card, "orphaned-approval")
    assert finding.evidence[0].message_id == card.session.messages[1].id
    assert "zfs destroy tank/old" in finding.evidence[1].excerpt
    assert "complete_task in turn 1" in finding.message and "1 approval still pending_approval" in finding.message


def test_unfinished_session_evidence_is_the_last_message(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [
            {"user": "how much disk is free?"},
            {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "df -h"}}]}},
            {"tool": {"name": "run", "output": "8G free"}},
        ],
    }, select=["unfinished-session"])
    finding = _finding(card, "unfinished-session")
    assert finding.evidence[0].message_id == card.session.messages[-1].id
    assert finding.evidence[0].turn == 1
    assert "result of run" in finding.evidence[0].excerpt
    assert "tool result" in finding.message


def test_plan_findings_name_the_steps(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [{"user": "migrate"}, {"assistant": "Migrated."}],
        "plans": [{"status": "executing", "steps": [
            {"seq": 1, "title": "snapshot", "status": "pending", "generation": 1},
            {"seq": 2, "title": "migrate", "status": "done", "generation": 1},
            {"seq": 1, "title": "new snapshot", "status": "pending", "generation": 2},
        ]}],
    }, select=["plan-step-order", "stale-plan-steps"])
    order = _finding(card, "plan-step-order")
    assert "\u201cmigrate\u201d done while step 1 \u201csnapshot\u201d pending" in order.evidence[0].excerpt
    stale = _finding(card, "stale-plan-steps")
    assert stale.severity == Severity.COSMETIC
    assert [e.excerpt.split(": ", 1)[1] for e in stale.evidence] == [
        "step 1 \u201csnapshot\u201d still pending (generation 2 exists)"
    ]


def test_retired_tool_reads_executions_without_another_rule(nomos_dsn):
    card = _review(nomos_dsn, {
        "messages": [{"user": "reboot"}, {"assistant": "Rebooted."}],
        "executions": [{"tool": "request_execution", "status": "succeeded", "command": "reboot"}],
    }, select=["retired-tool"])
    finding = _finding(card, "retired-tool")
    assert "1 execution" in finding.message and "`reboot`" in finding.evidence[0].excerpt


def test_unknown_config_key_is_an_error(nomos_dsn):
    from nomos_forensics.errors import ConfigError

    sid = insert_case(nomos_dsn, {"messages": [{"user": "hi"}]})
    with pytest.raises(ConfigError):
        review_case(nomos_dsn, sid, select=["retired-tool"], options={"retired-tool": {"tool": ["x"]}})


# ---------------------------------------------------------------- outcome, end to end
def _msgs(*items):
    return [dict([item]) for item in items]


DONE = [{"user": "restart nginx on lxc/105"},
        {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "systemctl restart nginx"}}]}},
        {"tool": {"name": "run", "output": ""}},
        {"assistant": {"text": "nginx restarted.", "tool_calls": [{"name": "complete_task"}]}},
        {"tool": {"name": "complete_task", "output": "ok"}}]

OUTCOME_CASES = [
    ("achieved/complete-task", Outcome.ACHIEVED, {"messages": DONE}),
    ("achieved/answered", Outcome.ACHIEVED,
     {"messages": [{"user": "what is the uptime of lxc/105?"}, {"assistant": "It has been up for 12 days."}]}),
    ("achieved/thanks-after-answer", Outcome.ACHIEVED,
     {"messages": [{"user": "what is the uptime of lxc/105?"}, {"assistant": "12 days."}, {"user": "thanks!"}]}),
    ("achieved/cosmetic-findings-only", Outcome.ACHIEVED,
     {"messages": DONE, "plans": [{"status": "proposed", "steps": [
         {"seq": 1, "status": "pending", "generation": 1}, {"seq": 1, "status": "done", "generation": 2}]}]}),
    ("achieved/long-answer-ending-with-offer", Outcome.ACHIEVED,
     {"messages": [{"user": "explain the difference between lxc and docker"},
                   {"assistant": "LXC runs full system containers with an init system, while Docker runs "
                                 "single application containers built from layered images. LXC suits "
                                 "long-lived hosts that you manage like virtual machines; Docker suits "
                                 "immutable application deployments shipped through a registry and "
                                 "orchestrated by compose or kubernetes. Would you like an example of each?"}]}),
    ("failed/blocked-action-ended-it", Outcome.FAILED,
     {"messages": [{"user": "wipe /srv on lxc/105"}, {"assistant": "The command was blocked by policy."}],
      "audit_log": [{"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked"}]}),
    ("failed/error-card", Outcome.FAILED,
     {"messages": [{"user": "restart nginx"}, {"assistant": {"text": "", "error": "upstream timeout"}}]}),
    ("failed/blank-final-reply", Outcome.FAILED,
     {"messages": [{"user": "restart nginx"}, {"assistant": {"text": "", "tool_calls": []}}]}),
    ("failed/status-failed", Outcome.FAILED,
     {"session": {"status": "failed"}, "messages": [{"user": "restart nginx"}, {"assistant": "Working on it."}]}),
    ("partial/ends-on-tool-result", Outcome.PARTIAL,
     {"messages": DONE[:3]}),
    ("partial/ends-on-user-message", Outcome.PARTIAL,
     {"messages": [{"user": "check nginx"}, {"assistant": "It runs."}, {"user": "now restart php-fpm"}]}),
    # the user corrected it, then the task was done: the Outcome reads the ending (achieved);
    # the user-frustration finding reports the friction beside it
    ("achieved/completed-after-a-correction", Outcome.ACHIEVED,
     {"messages": [{"user": "restart nginx on lxc/105"}, {"assistant": "Restarted nginx on lxc/106."},
                   {"user": "No, I said lxc/105."}, *DONE[1:]]}),
    ("partial/completed-with-orphaned-approval", Outcome.PARTIAL,
     {"messages": DONE, "executions": [{"tool": "run", "status": "pending_approval", "command": "reboot"}]}),
    ("partial/early-block-then-completed", Outcome.PARTIAL,
     {"messages": [{"user": "wipe /srv on lxc/105"}, {"assistant": "That was blocked; I'll free space differently."},
                   *DONE],
      "audit_log": [{"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked"}]}),
    ("partial/cancelled", Outcome.PARTIAL,
     {"session": {"status": "cancelled"},
      "messages": [{"user": "upgrade all nodes"}, {"assistant": "Upgrading web-1 first."}]}),
    # a request nobody answered is a failed session, not one with nothing to judge
    ("failed/no-assistant", Outcome.FAILED, {"messages": [{"user": "hello?"}]}),
    ("unknown/no-messages", Outcome.UNKNOWN, {"messages": []}),
    ("unknown/waiting-on-a-question", Outcome.UNKNOWN,
     {"messages": [{"user": "restart the web server"}, {"assistant": "Which one: web-1 or web-2?"}]}),
]


@pytest.mark.parametrize("name, expected, case", OUTCOME_CASES, ids=[c[0] for c in OUTCOME_CASES])
def test_outcome(nomos_dsn, name, expected, case):
    card = _review(nomos_dsn, case)
    assert card.outcome == expected, (card.outcome, [(f.rule, f.severity.label, f.message) for f in card.findings])


def test_outcome_of_a_session_still_running(nomos_dsn):
    case = {"session": {"status": "active", "created_at": datetime.now(timezone.utc) - timedelta(seconds=30)},
            "messages": DONE[:3]}
    card = _review(nomos_dsn, case)
    assert card.outcome == Outcome.UNKNOWN
    assert "unfinished-session" not in findings_by_rule(card)
    stale = dict(case, session={"status": "active", "created_at": datetime.now(timezone.utc) - timedelta(hours=2)})
    card = _review(nomos_dsn, stale)
    assert card.outcome == Outcome.PARTIAL
    assert findings_by_rule(card).get("unfinished-session") == 1


def test_outcome_uses_its_own_reading_without_findings(nomos_dsn):
    # with no rule selected, the ending alone still decides
    assert _review(nomos_dsn, {"messages": DONE[:3]}, select=["oversized-message"]).outcome == Outcome.PARTIAL
    assert _review(nomos_dsn, {"messages": DONE}, select=["oversized-message"]).outcome == Outcome.ACHIEVED
    thanks = [*DONE, {"user": "great, thank you so much!"}]
    assert _review(nomos_dsn, {"messages": thanks}, select=["oversized-message"]).outcome == Outcome.ACHIEVED
    more = [*DONE, {"user": "thanks, now restart php-fpm"}]
    assert _review(nomos_dsn, {"messages": more}, select=["oversized-message"]).outcome == Outcome.PARTIAL


SAME_TURN_BLOCK = [
    {"user": "free some space on lxc/105"},
    {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "rm -rf /var/log"}}]}},
    {"tool": {"name": "run", "output": "blocked by policy", "is_error": True}},
]


def test_outcome_block_worked_around_in_the_same_turn_is_partial(nomos_dsn):
    case = {
        "messages": [
            *SAME_TURN_BLOCK,
            {"assistant": {"text": "", "tool_calls": [{"name": "run", "arguments": {"command": "journalctl --vacuum-time=7d"}}]}},
            {"tool": {"name": "run", "output": "freed 3G"}},
            {"assistant": {"text": "Freed 3 GB by vacuuming the journal.", "tool_calls": [{"name": "complete_task"}]}},
            {"tool": {"name": "complete_task", "output": "ok"}},
        ],
        "audit_log": [{"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked"}],
    }
    card = _review(nomos_dsn, case)
    assert findings_by_rule(card).get("blocked-action") == 1
    assert card.outcome == Outcome.PARTIAL


def test_outcome_block_then_complete_task_without_work_is_failed(nomos_dsn):
    case = {
        "messages": [
            *SAME_TURN_BLOCK,
            {"assistant": {"text": "That was blocked, so I'm closing the task.", "tool_calls": [{"name": "complete_task"}]}},
            {"tool": {"name": "complete_task", "output": "ok"}},
        ],
        "audit_log": [{"action": "run", "target": "lxc/105", "risk_class": "destructive", "outcome": "blocked"}],
    }
    assert _review(nomos_dsn, case).outcome == Outcome.FAILED
