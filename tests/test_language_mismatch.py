"""non-english-refusal: the user's language across the conversation, and a finding that quotes
both sides and names the language pair."""

from __future__ import annotations

from pathlib import Path

from nomos_forensics.testing import load_cases, review_in_memory
from nomos_forensics.text import language as langid

CASES = {c["name"]: c for c in load_cases(Path(__file__).parent / "cases" / "non-english-refusal.yaml")}


def _finding(name):
    (finding,) = review_in_memory(CASES[f"non-english-refusal/{name}"], select=["non-english-refusal"]).findings
    return finding


def test_finding_quotes_the_reply_and_the_user_and_names_the_pair():
    finding = _finding("english-reply-after-a-context-summary-to-a-chinese-user")
    (evidence,) = finding.evidence
    assert evidence.excerpt.startswith('English reply "Perfect! I\'ve completed all the tasks.')
    assert 'to Chinese "把登录页面的按钮改成蓝色' in evidence.excerpt
    assert "Chinese → English" in finding.fix and 'answer in Chinese' in finding.fix
    assert "context summary" in finding.fix  # the turn's only user text was the client's
    assert finding.data == {"pairs": [{"user": "zh", "reply": "en", "count": 1}], "refusals": 0}


def test_close_languages_told_apart_name_both():
    finding = _finding("portuguese-reply-to-a-spanish-user")
    assert finding.message == "1 assistant reply in Portuguese to a user writing Spanish"
    assert "Spanish → Portuguese" in finding.fix


def test_a_huge_paste_is_read_by_its_head_and_tail():
    """A 4 MB paste: the user's words before and after it count, the middle is not read (the
    line tests cost 100 ms there), and a client block around the cut is still removed whole."""
    log = "".join(f"2026-11-20T10:{i % 60:02d}:00Z kernel: eth0 link down, retry {i}\n" for i in range(60_000))
    text = "¿Por qué falla el servidor otra vez?\n" + log + "Ayúdame a entenderlo, por favor.\n"
    prose = langid.own_prose(text)
    assert len(prose) < langid.OWN_PROSE_MAX
    assert prose.startswith("¿Por qué falla") and prose.rstrip().endswith("por favor.")
    reminder = "<system-reminder>" + "contexto del cliente\n" * 2_000 + "</system-reminder>\n"
    assert "contexto" not in langid.own_prose(reminder + "Reinicia nginx, por favor.\n" + log)


def test_own_prose_drops_client_text_and_pasted_lines():
    assert langid.own_prose("This session is being continued from a previous conversation. Summary: …") == ""
    assert langid.own_prose("[Request interrupted by user for tool use]") == ""
    assert langid.own_prose("<command-name>/compact</command-name>\n<command-args></command-args>") .strip() == ""
    text = "为什么报错？\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nKeyError: 'x'"
    assert langid.own_prose(text) == "为什么报错？"
    assert langid.own_prose("Μπορείς να ελέγξεις τον δίσκο;") == "Μπορείς να ελέγξεις τον δίσκο;"  # Greek '?'
    assert langid.own_prose("# Design guide\nfor example the first part") == "# Design guide\nfor example the first part"


def test_asked_for_only_the_languages_a_translation_names():
    assert langid.asked_for("translate the error for me", "en")
    assert langid.asked_for("Traduis en anglais : le serveur est tombé", "en")
    assert not langid.asked_for("Переведи весь текст на казахский и испанский", "en")
    assert langid.asked_for("Переведи весь текст на казахский и испанский", "es")
