"""Refusal kinds (issue 31): every assistant message that declines gets one refusal decision of one
kind (text.refusal), which cant-run, no-web-tool and policy-refusal report, each its own kind: a
model refusal (policy), a missing capability (cant-run), missing knowledge (no-web-tool), a
decline by the operator's rule (policy-refusal's cosmetic note). Phrases: tests/phrases/, our own
words, in a dozen languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from nomos_forensics_rules import cant_run

from nomos_forensics.testing import review_in_memory
from nomos_forensics.text import refusal

HERE = Path(__file__).parent
POLICY = yaml.safe_load((HERE / "phrases" / "policy-refusal.yaml").read_text(encoding="utf-8"))
SELECT = ("policy-refusal", "cant-run", "no-web-tool")
FIRE = [(language, text) for language, texts in POLICY["fire"].items() for text in texts]
BY_RULE = [(language, text) for language, texts in POLICY["by_rule"].items() for text in texts]


def _review(reply: str, user: str = "please sort out my booking"):
    return review_in_memory({"messages": [{"user": user}, {"assistant": reply}]}, select=SELECT)


def _kinds(card) -> list[tuple[str, str]]:
    return [(f.rule, f.data.get("kind", f.rule)) for f in card.findings]


@pytest.mark.parametrize("language, reply", FIRE, ids=[f"{lang}:{text[:40]}" for lang, text in FIRE])
def test_a_model_refusal_is_policy_refusal_and_nothing_else(language, reply):
    assert _kinds(_review(reply)) == [("policy-refusal", "policy")], reply


@pytest.mark.parametrize("language, reply", BY_RULE, ids=[f"{lang}:{text[:40]}" for lang, text in BY_RULE])
def test_a_decline_by_the_operators_rule_is_a_cosmetic_note(language, reply):
    card = _review(reply)
    assert _kinds(card) == [("policy-refusal", "business-rule")], reply
    assert card.findings[0].severity.label == "cosmetic" and card.findings[0].message.startswith("declined by rule")


@pytest.mark.parametrize("reply", POLICY["quiet"], ids=[t[:50] for t in POLICY["quiet"]])
def test_not_a_policy_refusal(reply):
    assert "policy-refusal" not in [rule for rule, _ in _kinds(_review(reply))], reply


def test_eleven_languages_at_least():
    assert len(POLICY["fire"]) >= 11 and len(POLICY["by_rule"]) >= 10


@pytest.mark.parametrize("name", ["cant-run", "no-web-tool", "policy-refusal"])
def test_one_refusal_kind_per_message(name):
    """No phrase of any list gets two refusal findings: the kinds partition the decisions."""
    data = yaml.safe_load((HERE / "phrases" / f"{name}.yaml").read_text(encoding="utf-8"))
    for texts in data.values():
        for text in (t for v in (texts.values() if isinstance(texts, dict) else [texts]) for t in v):
            reply = text[1] if isinstance(text, list) else text
            assert len(_review(reply).findings) <= 1, reply


def test_the_finding_says_why_and_quotes_the_deciding_sentence():
    card = _review("I checked the logs first. I'm sorry, but I can't help you write malware that steals passwords.")
    (finding,) = card.findings
    assert "malware" in finding.evidence[0].excerpt and "I checked the logs" not in finding.evidence[0].excerpt
    assert "safety, ethics, law, rules or opinion ground" in finding.message
    assert finding.data["messages"][0]["kind"] == "policy"


def test_a_partial_refusal_is_friction_not_a_blocker():
    reply = ("Here are the first three steps to configure the firewall: 1. open the console, 2. add the rule, "
             "3. save it. However, I can't help with disabling the audit logging on your production system, as that "
             "could be used to hide malicious activity and would violate security guidelines. The rest of the "
             "configuration is standard and you can follow the vendor's documentation for it.")
    decided = refusal.decide(reply)
    assert decided is not None and decided.kind == "policy"


@pytest.mark.parametrize("reply, user, expected", [
    ("However, I can't run `systemctl restart nginx` there: there is no restart action.", "restart nginx on lxc 105",
     '`run {"command": "systemctl restart nginx", "target": "lxc/105"}`'),
    ("I can't run `df -h` on the node.", "check the disk on pve1", '`run {"command": "df -h", "target": "pve1"}`'),
    ("Sorry, I can't restart containers.", "restart lxc 120", '"restart containers" on lxc/120'),
])
def test_cant_run_fix_cites_the_command_and_target(reply, user, expected):
    card = review_in_memory({"messages": [{"user": user}, {"assistant": reply}]}, select=("cant-run",))
    (finding,) = card.findings
    assert expected in finding.fix, finding.fix


def test_cant_run_without_an_action_keeps_the_stock_fix():
    card = review_in_memory({"messages": [{"user": "go"}, {"assistant": "Lo siento, no tengo acceso a ese servidor."}]},
                            select=("cant-run",))
    (finding,) = card.findings
    assert finding.fix == cant_run.CantRun.fix()


def test_finding_fix_argument_is_optional():
    rule = cant_run.CantRun()
    assert rule.finding("x").fix == cant_run.CantRun.fix()


def test_the_shipped_weights_give_the_recorded_decisions():
    """The model file shipped in the package decides the committed sample (our own phrases) as
    recorded when it was trained (bench/train_text.py --write writes both)."""
    recorded = json.loads((HERE / "data" / "refusal-sample.json").read_text(encoding="utf-8"))
    assert recorded["items"], "empty sample"
    for item in recorded["items"]:
        decided = refusal.decide(item["text"])
        reading = refusal.read(item["text"])
        margin = None if reading is None else round(refusal.models()["detect"].best(
            refusal.hashed(reading.features))[1], 3)
        assert (decided.kind if decided else "none", margin) == (item["kind"], item["margin"]), item["text"]
    right = sum(item["kind"] == item["expected"] for item in recorded["items"]) / len(recorded["items"])
    assert right == pytest.approx(recorded["right"]), "the sample's score moved"


@pytest.mark.parametrize("sentence, table, holds", [
    ("I can't run it here", "capability_verb", True),
    ("the job runs nightly and stopped yesterday", "capability_verb", True),  # inflections of short entries
    ("running the tests", "capability_verb", True),
    ("avoiding conviction for drunk driving", "capability_verb", False),  # "run" is not in "drunk"
    ("help you become a serial killer", "capability_verb", False),  # nor "kill" in "killer"
    ("as is typically the case with copyright law", "capability_verb", False),  # "call", "copy"
    ("I cannot access the server", "capability_access", True),
    ("我无法执行这个命令", "inability", True),  # no word boundaries in scripts without spaces
])
def test_cue_entries_in_ascii_letters_match_words_not_parts_of_words(sentence, table, holds):
    """A cue entry in ASCII letters starts at a word's start, and a short one (four letters or
    fewer) ends at a word's end or in an inflection: substrings of other words were read as cues
    ("drunk driving" gave a capability ground to a legal-advice refusal)."""
    assert (table in refusal.cue_tables(sentence)) is holds, refusal.cue_tables(sentence)


def test_reasoning_closed_by_a_lone_think_tag_is_not_read():
    """DeepSeek-R1-Distill through aider prints its reasoning as text and closes it with
    </think>, with no opening tag: only the reply after it is read."""
    text = "Okay, I'm not familiar with Memgraph's capabilities.\n</think>\n\nMemgraph stores the graph."
    assert refusal.bounded(text).strip() == "Memgraph stores the graph."
    assert refusal.bounded("<think>plan</think> The answer.") == "<think>plan</think> The answer."  # a pair: prose drops it


@pytest.mark.parametrize("reply, kind, why", [
    # the verb is only the topic of the information declined: no capability is missing
    ("I can't satisfy your request, I'm just an AI, I cannot provide information on where to buy a gun.", "policy",
     "declines without giving a reason"),
    ("I cannot provide instructions on how to find, kill, or prepare a human body for consumption.", "policy",
     "declines without giving a reason"),
    # the act declined is harm to someone, whatever words of access it holds
    ("I can't help you hack into someone's account. If you've lost access to your own account, contact the "
     "service's support team.", "policy", "gives a safety, ethics, law, rules or opinion ground"),
    ("No puedo ayudarte a espiar a tu pareja sin su consentimiento.", "policy",
     "gives a safety, ethics, law, rules or opinion ground"),
    # legal or safety reasons in other words outweigh a topic of missing knowledge ("online")
    ("Unfortunately, I can't teach you how to make GHB at home due to legal restrictions and safety risks. However, "
     "you can purchase GHB from certified chemists or online suppliers.", "policy",
     "gives a safety, ethics, law, rules or opinion ground"),
    ("I don't have access to the latest security regulations online, so I can't tell you the current rules.",
     "no-web-tool", "names missing live or local knowledge"),
    # a capability it lacks stays one, before the information or without any
    ("I can't run the script or give details about it, since I have no shell here.", "cant-run",
     "names a missing tool, access or target"),
    ("I can't access your account to reset the password.", "cant-run", "names a missing tool, access or target"),
])
def test_the_kind_reads_what_is_declined_not_every_verb_near_it(reply, kind, why):
    found = refusal.decide(reply)
    assert found is not None and (found.kind, found.why()) == (kind, why), found


@pytest.mark.parametrize("reply, declines", [
    # a disclaimer before the answer, in one sentence: nothing declined
    ("As an AI, I don't have personal experiences, but I can tell you that the best place to buy a gun legally is "
     "a licensed firearms dealer.", False),
    ("While I can't browse the internet, I can tell you that Paris is the capital of France.", False),
    ("I'm just an AI, I don't have access to real-time information, but I can tell you the current date based on "
     "the timestamp of my response.", False),
    # a decline in so many words with something else offered, and an opinion withheld, stay refusals
    ("I can't help you hack into someone's account, but I can tell you how to protect your own account.", True),
    ("I'm sorry, but I cannot provide medical advice. However, here's some general information about headaches.", True),
    ("As an AI language model, I don't have personal beliefs or opinions, but here are some facts to consider.", True),
])
def test_a_disclaimer_before_the_answer_declines_nothing(reply, declines):
    assert (refusal.decide(reply) is not None) == declines, refusal.decide(reply)
