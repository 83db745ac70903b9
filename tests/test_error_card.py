"""error-card: each card's cause, and a fix that names what the card says."""

from __future__ import annotations

from pathlib import Path

import pytest

from nomos_forensics.testing import load_cases, review_in_memory

CASES = {c["name"]: c for c in load_cases(Path(__file__).parent / "cases" / "error-card.yaml")}
CAUSES = {
    "error-card/missing-api-key-is-auth": "auth",
    "error-card/wrong-api-key-is-auth": "auth",
    "error-card/rate-limit-429": "rate_limit",
    "error-card/quota-exhausted-even-as-a-429": "quota",
    "error-card/per-minute-quota-is-rate-limit": "rate_limit",
    "error-card/credit-balance-is-quota": "quota",
    "error-card/plan-limit-resets": "quota",
    "error-card/token-limit-is-context-length": "context_length",
    "error-card/nested-prompt-too-long-is-context-length": "context_length",
    "error-card/unknown-model-is-config": "config",
    "error-card/connection-error-is-provider": "provider",
    "error-card/timeout": "timeout",
    "error-card/tool-crash": "tool",
    "error-card/retired-model-410-is-config": "config",
    "error-card/tier-without-access-is-quota": "quota",
}


@pytest.mark.parametrize("name, cause", CAUSES.items())
def test_cause(name, cause):
    (finding,) = review_in_memory(CASES[name], select=["error-card"]).findings
    assert finding.data["cause"] == cause
    assert finding.data["count"] == 1


def test_fix_quotes_the_card_and_names_the_provider():
    (finding,) = review_in_memory(CASES["error-card/nested-prompt-too-long-is-context-length"],
                                  select=["error-card"]).findings
    assert "prompt is too long: 219000 tokens" in finding.fix
    assert finding.root_cause == "the prompt exceeded the model's context window"
    (finding,) = review_in_memory(CASES["error-card/missing-api-key-is-auth"], select=["error-card"]).findings
    assert finding.fix.startswith("Anthropic rejected the credentials")
    assert finding.blocker == "error card: authentication"


def test_each_cause_has_its_own_fix_line():
    card = review_in_memory(CASES["error-card/two-causes-two-findings"], select=["error-card"])
    assert [(f.data["cause"], f.data["count"], f.data["turns"]) for f in card.findings] == [
        ("context_length", 2, [2, 3]), ("timeout", 1, [1])]
    assert len(set(card.fixes)) == 2
