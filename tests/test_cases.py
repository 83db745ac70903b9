"""Every rule's case file (tests/cases/<rule>.yaml): text cases reviewed in memory, lifecycle
cases on Postgres, and one Postgres pass over all of them that checks the in-memory review
gives exactly what the database path gives (the contract between SQL and the session model)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from nomos_forensics import plugins
from nomos_forensics.testing import (
    LIFECYCLE_KEYS,
    findings_by_rule,
    insert_case,
    load_cases,
    review_case,
    review_in_memory,
)

CASES_DIR = Path(__file__).parent / "cases"
CASES = load_cases(CASES_DIR)
RULES = [s.name for s in plugins.load().rules]
IN_MEMORY = [c for c in CASES if not any(c.get(k) for k in LIFECYCLE_KEYS)]
ON_POSTGRES = [c for c in CASES if any(c.get(k) for k in LIFECYCLE_KEYS)]
# cases per rule, for each of "fires" and "stays quiet": the lifecycle rules, whose inputs have
# more shapes, need more
MIN_CASES = {"orphaned-approval": 10, "plan-step-order": 10, "stale-plan-steps": 10, "retired-tool": 10,
             "blocked-action": 10, "user-frustration": 10, "unfinished-session": 10}
MIN_OTHER = 3


def _check(case, card) -> None:
    assert not [e for e in card.errors if e.rule in case["expect"]], card.errors
    found = findings_by_rule(card)
    assert {rule: found.get(rule, 0) for rule in case["expect"]} == case["expect"], [
        (f.rule, f.message, [e.excerpt for e in f.evidence]) for f in card.findings
    ]
    for finding in card.findings:
        assert all(len(e.excerpt) <= 200 for e in finding.evidence)
    if "outcome" in case:  # the card's Outcome, read from the ending whatever the rules selected
        assert card.outcome == case["outcome"], card.outcome_reason


@pytest.mark.parametrize("case", IN_MEMORY, ids=[c["name"] for c in IN_MEMORY])
def test_case_in_memory(case):
    _check(case, review_in_memory(case, select=list(case["expect"]), options=case.get("options")))


@pytest.mark.parametrize("case", ON_POSTGRES, ids=[c["name"] for c in ON_POSTGRES])
def test_lifecycle_case_on_postgres(nomos_dsn, case):
    sid = insert_case(nomos_dsn, case)
    _check(case, review_case(nomos_dsn, sid, select=list(case["expect"]), options=case.get("options")))


def _summary(card) -> list[tuple]:
    """What a reader sees, with message ids (assigned by the database) taken out of the text."""
    def plain(text: str) -> str:
        return re.sub(r"\bmessage \d+", "message #", text)

    return sorted((f.rule, f.severity.label, plain(f.message), tuple((e.turn, plain(e.excerpt)) for e in f.evidence))
                  for f in card.findings) + [("outcome", card.outcome, card.objective)]


def test_in_memory_review_is_the_database_review(nomos_dsn):
    """Every text case, every rule at once: the same findings, evidence, outcome and objective."""
    differ = []
    for case in IN_MEMORY:
        sid = insert_case(nomos_dsn, case)
        on_db = review_case(nomos_dsn, sid, options=case.get("options"))
        in_memory = review_in_memory(case, options=case.get("options"))
        if _summary(on_db) != _summary(in_memory):
            differ.append((case["name"], _summary(on_db), _summary(in_memory)))
    assert differ == []


def test_every_rule_has_a_case_file_with_cases_both_ways():
    files = {p.stem for p in CASES_DIR.glob("*.yaml")}
    assert set(RULES) <= files, f"rules without tests/cases/<rule>.yaml: {sorted(set(RULES) - files)}"
    fires: Counter[str] = Counter()
    quiet: Counter[str] = Counter()
    for case in CASES:
        for rule, count in case["expect"].items():
            (fires if count else quiet)[rule] += 1
    for rule in RULES:
        if rule == "oversized-message":  # its sizes are built in Python (tests/test_runbook_rules.py)
            continue
        least = MIN_CASES.get(rule, MIN_OTHER)
        assert fires[rule] >= least and quiet[rule] >= least, (rule, fires[rule], quiet[rule])


def test_case_names_are_unique_and_name_their_rule():
    names = Counter(c["name"] for c in CASES)
    assert [n for n, c in names.items() if c > 1] == []
    for case in CASES:
        stem = Path(case["source"]).stem
        assert stem == "messy-shapes" or case["name"].split("/")[0] in (stem, stem.split("-")[0]), case["name"]
