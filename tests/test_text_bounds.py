"""Hostile text through every text rule (issue 31): a 5 MB message, binary junk, a message of only
code, one that switches script every few words for 20,000 words, lone UTF-16 surrogates. Each is
read in bounded windows, so it is classified or skipped with no traceback, and the rest of the
session is untouched. How long each takes beside an ordinary reply: bench/bad_text.py (a timed
test would be noise on these machines); here, that what is read of a message is bounded."""

from __future__ import annotations

import random

import pytest

from nomos_forensics.testing import findings_by_rule, review_in_memory
from nomos_forensics.text import language, profile, refusal

TEXT_RULES = ["cant-run", "no-web-tool", "policy-refusal", "non-english-refusal", "user-frustration",
              "unfinished-session"]
_WORDS = {"en": "the backup finished and the disk is fine".split(), "ru": "резервная копия готова диск в порядке".split(),
          "zh": "备份 已经 完成 磁盘 正常".split(), "ar": "اكتمل النسخ الاحتياطي والقرص سليم".split(),
          "ja": "バックアップ は 完了 しました".split(), "ko": "백업이 완료 되었습니다".split()}


def _switching(words: int) -> str:
    rng = random.Random(31)
    out = []
    while len(out) < words:
        out.extend(_WORDS[rng.choice(sorted(_WORDS))][:rng.randint(2, 4)])
    return " ".join(out[:words])


HOSTILE = {
    "5MB-prose": ("I can't run that. " + "The disk is fine and the backup finished. " * 120_000)[:5_000_000],
    "binary-junk": bytes(random.Random(7).randrange(1, 256) for _ in range(200_000)).decode("latin-1"),
    "only-code": "```\n" + "for i in range(10):\n    print(i)  # I can't\n" * 5_000 + "```",
    "script-switching": _switching(20_000),
    "lone-surrogates": "I'm sorry, I can't \ud800 help \udfff with that." * 1_000,
}


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - {"lone-surrogates"}))
def test_hostile_reply_is_read_and_the_rest_of_the_session_is_untouched(name):
    """(Lone surrogates never reach a rule: the read boundary makes them U+FFFD, tests/test_attacks.py
    F1; the text functions take them anyway, below.)"""
    text = HOSTILE[name]
    case = {"name": name, "messages": [
        {"user": "Please restart nginx on lxc 105."},
        {"assistant": text},
        {"user": "Thanks. Also, can you reboot lxc 106?"},
        {"assistant": "I'm sorry, but I can't run commands inside containers."},
    ]}
    card = review_in_memory(case, select=TEXT_RULES)
    assert not card.errors, card.errors
    # the ordinary decline after the hostile message is still found, as itself
    found = findings_by_rule(card)
    assert found.get("cant-run", 0) + found.get("policy-refusal", 0) >= 1, [f.message for f in card.findings]
    for finding in card.findings:
        for evidence in finding.evidence:
            assert len(evidence.excerpt) <= 200


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_what_is_read_of_a_reply_is_bounded(name):
    """The refusal decision reads the head and tail of a message (RAW_HEAD + RAW_TAIL characters),
    the language profile its first RAW_CHARS: a longer message decides as its bounded part does."""
    text = HOSTILE[name]
    assert refusal.decide(text) == refusal.decide(refusal.bounded(text))
    assert len(refusal.bounded(text)) <= refusal.RAW_HEAD + refusal.RAW_TAIL + 10  # and a fence at the cut
    assert profile.prose(text) == profile.prose(text[:profile.RAW_CHARS])
    language.detect(text)  # and the language decision takes it, whatever it is


def test_a_decline_at_either_end_of_a_long_reply_is_read():
    """Whether a long reply with a decline at one end is a refusal is the model's call (a long
    answer that declines a last detail often is not); that the decline is read is the bound's."""
    filler = "The backup finished and the disk is fine. " * 50_000
    decline = "I'm sorry, but I can't help with that."
    for text in (decline + " " + filler, filler + decline):
        assert decline in [sentence for sentence, _ in refusal.read(text).cue_sentences]
