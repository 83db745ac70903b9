"""Docs move with the code: the rules reference is current, every rule is documented, the card
JSON validates against docs/card.schema.json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from nomos_forensics import plugins
from nomos_forensics.docs import hooks_markdown, rules_markdown
from nomos_forensics.hookspecs import nomos_forensics_card, nomos_forensics_rules
from nomos_forensics.rule import RULE_NAME

from .helpers import invoke

ROOT = Path(__file__).parent.parent
RULES = plugins.load().rules


def test_rules_reference_is_current():
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is stale: run `python -m nomos_forensics.docs > docs/rules.md`"
    )


@pytest.mark.parametrize("spec", RULES, ids=[s.name for s in RULES])
def test_every_rule_is_documented_and_well_formed(spec):
    sections = spec.cls.sections()
    for key in ("summary", "detects", "root cause", "fix"):
        assert sections.get(key), f"{spec.name}: docstring lacks {key!r}"
    assert RULE_NAME.match(spec.name)
    assert spec.source == "built-in"
    assert spec.cls.__module__.startswith("nomos_forensics_rules.")
    assert spec.cls.__module__.rsplit(".", 1)[1] == spec.name.replace("-", "_"), "one module per rule, named after it"


def test_rule_codes_and_names_are_unique():
    assert len({s.code for s in RULES}) == len(RULES)
    assert len({s.name for s in RULES}) == len(RULES)


def test_every_hook_has_a_documented_contract():
    for hook in (nomos_forensics_rules, nomos_forensics_card):
        assert hook.__doc__ and len(hook.__doc__.strip()) > 40


def test_hooks_reference_is_current():
    text = (ROOT / "docs" / "plugin_hooks.md").read_text(encoding="utf-8")
    assert text == hooks_markdown(), "docs/plugin_hooks.md is stale: run `python -m nomos_forensics.docs hooks`"
    assert "## `nomos_forensics_rules()" in text and "## `nomos_forensics_card(card, session)" in text


def test_card_json_matches_schema(capsys, sample_dsn):
    schema = json.loads((ROOT / "docs" / "card.schema.json").read_text())
    out = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out
    cards = [json.loads(line) for line in out.splitlines()]
    assert len(cards) >= 30
    for card in cards:
        jsonschema.validate(card, schema)


def test_readme_documents_every_command_and_exit_code():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in ("doctor", "sessions", "review", "scan", "compare", "merge", "report", "sizes", "rules", "demo"):
        assert f"`{command}" in readme
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in readme
    assert "nomos-forensics demo" in readme


def test_readme_outcome_rule_is_the_code_docstring():
    import inspect

    from nomos_forensics.card import decide_outcome

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- outcome-rule -->")[1].split("<!-- /outcome-rule -->")[0].strip()
    assert block == inspect.cleandoc(decide_outcome.__doc__).split("\n", 1)[1].strip()


def test_readme_rules_table_matches_the_rules():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| (NF\d+) \| `([a-z-]+)` \| (\w+) \|", readme, re.M))
    assert rows == {(s.code, s.name, s.cls.default_severity().label) for s in RULES}
