"""Refusal kinds (issue 12, item 3): a policy refusal (policy-refusal, NF008) is told from a
capability refusal (cant-run, NF001) and from a product constraint, in every language of the
phrase tables; and the cant-run and policy-refusal findings carry a fix that cites the session."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from nomos_forensics_rules import cant_run, policy_refusal

from nomos_forensics.testing import findings_by_rule, review_in_memory

HERE = Path(__file__).parent
POLICY = yaml.safe_load((HERE / "phrases" / "policy-refusal.yaml").read_text(encoding="utf-8"))
CANT_RUN = yaml.safe_load((HERE / "phrases" / "cant-run.yaml").read_text(encoding="utf-8"))
SELECT = ("policy-refusal", "cant-run")
FIRE = [(language, text) for language, texts in POLICY["fire"].items() for text in texts]


def _review(reply: str, user: str = "please sort out my booking"):
    return review_in_memory({"messages": [{"user": user}, {"assistant": reply}]}, select=SELECT)


@pytest.mark.parametrize("language, reply", FIRE, ids=[f"{lang}:{text[:40]}" for lang, text in FIRE])
def test_policy_refusal_fires_and_cant_run_stays_quiet(language, reply):
    found = findings_by_rule(_review(reply))
    assert found.get("policy-refusal") == 1, reply
    assert "cant-run" not in found, reply
    assert policy_refusal.policy_statement(reply)[1] == language


@pytest.mark.parametrize("reply", POLICY["quiet"], ids=[t[:50] for t in POLICY["quiet"]])
def test_not_a_policy_refusal(reply):
    assert "policy-refusal" not in findings_by_rule(_review(reply)), reply


def test_every_capability_phrase_of_cant_run_is_not_a_policy_refusal():
    fired = [t for t in CANT_RUN["fire"] if isinstance(t, str) and policy_refusal.policy_statement(t)]
    assert fired == []


def test_ten_languages_at_least():
    assert len(POLICY["fire"]) >= 10
    assert set(POLICY["fire"]) <= set(policy_refusal.LANGUAGES)
    assert {"en", "es", "de", "fr", "pt", "it", "ru", "zh", "ja", "id"} <= set(policy_refusal.LANGUAGES)


def test_policy_refusal_is_cosmetic_and_its_fix_names_the_action_and_the_rule():
    card = _review("I can't cancel this reservation because the policy does not allow it.")
    (finding,) = [f for f in card.findings if f.rule == "policy-refusal"]
    assert finding.severity.label == "cosmetic"
    assert '"cancel this reservation"' in finding.fix and "the policy" in finding.fix
    assert finding.fix != policy_refusal.PolicyRefusal.fix()


@pytest.mark.parametrize("reply, user, expected", [
    ("However, I can't run `systemctl restart nginx` there: there is no restart action.", "restart nginx on lxc 105",
     '`run {"command": "systemctl restart nginx", "target": "lxc/105"}`'),
    ("I can't run `df -h` on the node.", "check the disk on pve1", '`run {"command": "df -h", "target": "pve1"}`'),
    ("Sorry, I can't restart containers.", "restart lxc 120", '"restart containers" on lxc/120'),
    ("You need to run these commands manually since they require sudo.", "install nginx", "sudo"),
])
def test_cant_run_fix_cites_the_command_and_target(reply, user, expected):
    card = review_in_memory({"messages": [{"user": user}, {"assistant": reply}]}, select=("cant-run",))
    (finding,) = card.findings
    assert expected in finding.fix, finding.fix


def test_cant_run_without_an_action_keeps_the_stock_fix():
    card = review_in_memory({"messages": [{"user": "go"}, {"assistant": "Lo siento, no puedo hacerlo."}]},
                            select=("cant-run",))
    (finding,) = card.findings
    assert finding.fix == cant_run.CantRun.fix()


def test_finding_fix_argument_is_optional():
    rule = cant_run.CantRun()
    assert rule.finding("x").fix == cant_run.CantRun.fix()
    assert rule.finding("x", fix="do y").fix == "do y"
    assert rule.finding("x", fix="").fix == cant_run.CantRun.fix()
