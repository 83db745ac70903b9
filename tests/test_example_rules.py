"""The rule examples shipped in docs/examples run as documented: loaded with -p, driven by the
config, not enabled by default."""

from __future__ import annotations

from pathlib import Path

from nomos_forensics.plugins import load as load_plugins
from nomos_forensics.testing import review_in_memory

from .helpers import invoke

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "write_without_confirmation.py"
OPTIONS = {"write-without-confirmation": {"write_tools": ["run", "upsert_knowledge"]}}


def _turns(*turns):
    messages = []
    for user, tool in turns:
        messages.append({"user": user})
        messages.append({"assistant": {"text": "", "tool_calls": [{"name": tool, "arguments": {"command": "x"}}]}})
        messages.append({"assistant": "Done."})
    return {"name": "w", "messages": messages}


def review(case, options=OPTIONS):
    return review_in_memory(case, plugins=[str(EXAMPLE)], select=["write-without-confirmation"], options=options)


def test_a_write_without_a_yes_is_flagged_and_one_after_a_yes_is_not():
    card = review(_turns(("restart nginx on lxc 105", "run"), ("yes, go ahead", "run"),
                         ("what runs on lxc 105?", "list_lxcs"), ("Да, делай", "upsert_knowledge"),
                         ("looks risky, but yes", "upsert_knowledge")))
    assert [(f.data["turn"], f.data["tool"]) for f in card.findings] == [(1, "run"), (5, "upsert_knowledge")]
    assert "restart nginx" in card.findings[0].evidence[0].excerpt


def test_no_write_tools_configured_finds_nothing_and_it_is_not_a_default_rule(capsys):
    assert review(_turns(("restart nginx", "run")), options=None).findings == []
    assert "write-without-confirmation" not in {spec.name for spec in load_plugins([]).rules}
    r = invoke(capsys, "rules", "-p", str(EXAMPLE), "--format", "json")
    assert r.code == 0 and "write-without-confirmation" in r.out
