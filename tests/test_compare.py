"""compare's statistics on generated data with known rates (in memory, fast): a real drop and
a real rise are found, equal rates read as no change in >= 95 of 100 seeded runs, and a pure
shift in the model mix is not read as a fix once adjusted for the model."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from nomos_forensics.compare import IMPROVED, NO_CHANGE, REGRESSED, TOO_FEW, Periods, Window, compare
from nomos_forensics.facts import SessionFacts
from nomos_forensics.trends import Series

SPLIT = datetime(2026, 11, 16, tzinfo=timezone.utc)
PERIODS = Periods(Window(None, SPLIT), Window(SPLIT, None))
WHEN = {"before": datetime(2026, 11, 10, tzinfo=timezone.utc), "after": datetime(2026, 11, 20, tzinfo=timezone.utc)}
RULES = ["empty-response", "unfinished-session", "cant-run"]


def generated(seed: int, spec: dict[str, list[tuple[str, int, dict[str, float]]]]) -> Series:
    """Sessions per period: (model, how many, {rule: rate}); each rule fires independently."""
    rng = random.Random(seed)
    series = Series(PERIODS, rules=list(RULES))
    for period, groups in spec.items():
        for model, count, rates in groups:
            for _ in range(count):
                fired = frozenset(rule for rule, rate in rates.items() if rng.random() < rate)
                series.add_facts(SessionFacts(WHEN[period], model, 6, fired, False))
    return series


def verdicts(result) -> dict[str, str]:
    return {row["rule"]: row["verdict"] for row in result.signatures}


def test_a_real_drop_and_a_real_rise_are_found():
    spec = {
        "before": [("gemini-2.5-flash", 500, {"empty-response": 0.20, "unfinished-session": 0.05, "cant-run": 0.10})],
        "after": [("gemini-2.5-flash", 500, {"empty-response": 0.07, "unfinished-session": 0.15, "cant-run": 0.10})],
    }
    result = compare(generated(1, spec))
    got = verdicts(result)
    assert got["empty-response"] == IMPROVED
    assert got["unfinished-session"] == REGRESSED
    assert got["cant-run"] == NO_CHANGE
    assert result.regressed() == ["unfinished-session"]
    assert result.regressed(["empty-response"]) == []
    row = {r["rule"]: r for r in result.signatures}["empty-response"]
    low, high = row["interval"]
    assert low < row["change"] < high < 0
    assert row["before"]["sessions"] / 500 == pytest.approx(row["before"]["rate"])


def test_equal_rates_give_no_significant_change_in_95_of_100_runs():
    rates = {"empty-response": 0.10, "unfinished-session": 0.03, "cant-run": 0.25}
    spec = {"before": [("gemini-2.5-flash", 300, rates), ("gemini-2.5-pro", 100, rates)],
            "after": [("gemini-2.5-flash", 300, rates), ("gemini-2.5-pro", 100, rates)]}
    quiet = sum(set(verdicts(compare(generated(seed, spec))).values()) == {NO_CHANGE} for seed in range(100))
    assert quiet >= 95


def test_a_pure_model_mix_shift_is_not_read_as_a_fix():
    flash, pro = {"empty-response": 0.30}, {"empty-response": 0.05}
    spec = {"before": [("gemini-2.5-flash", 400, flash), ("gemini-2.5-pro", 100, pro)],
            "after": [("gemini-2.5-flash", 100, flash), ("gemini-2.5-pro", 400, pro)]}
    for seed in range(10):
        result = compare(generated(seed, spec))
        row = {r["rule"]: r for r in result.signatures}["empty-response"]
        assert row["p_value"] < 1e-3  # the crude rates alone would call it a fix
        assert row["verdict"] == NO_CHANGE, row
        assert abs(row["adjusted"]["change"]) < abs(row["change"])


def test_a_fix_within_each_model_survives_the_adjustment():
    spec = {"before": [("gemini-2.5-flash", 400, {"empty-response": 0.30}), ("gemini-2.5-pro", 200, {"empty-response": 0.10})],
            "after": [("gemini-2.5-flash", 200, {"empty-response": 0.12}), ("gemini-2.5-pro", 400, {"empty-response": 0.02})]}
    result = compare(generated(3, spec))
    assert verdicts(result)["empty-response"] == IMPROVED
    models = [m["model"] for m in result.data["models"]]
    assert sorted(models) == ["gemini-2.5-flash", "gemini-2.5-pro"]


def test_no_model_in_both_periods_cannot_be_told_from_the_mix():
    spec = {"before": [("gemini-2.5-flash", 300, {"empty-response": 0.30})],
            "after": [("gemini-2.5-pro", 300, {"empty-response": 0.02})]}
    row = {r["rule"]: r for r in compare(generated(4, spec)).signatures}["empty-response"]
    assert row["verdict"] == NO_CHANGE and "model mix" in row["reason"]


def test_too_few_sessions_says_how_few():
    spec = {"before": [("m", 12, {"empty-response": 0.5})], "after": [("m", 9, {"empty-response": 0.0})]}
    result = compare(generated(5, spec), min_sessions=30)
    row = result.signatures[0]
    assert row["verdict"] == TOO_FEW
    assert "12 sessions before, 9 after" in row["reason"] and "30" in row["reason"]
    assert compare(generated(5, spec), min_sessions=5).signatures[0]["verdict"] != TOO_FEW
