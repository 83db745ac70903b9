"""Docs move with the code: the rules reference is current, every rule is documented, the card
JSON validates against docs/card.schema.json, the README stays a five-minute read whose card is
the real one, and the docs site builds offline. The docs' command examples run in
test_doc_examples.py."""

from __future__ import annotations

import json
import re
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


DOCS = ROOT / "docs"


def test_docs_document_every_command_and_exit_code():
    commands = (DOCS / "commands.md").read_text(encoding="utf-8")
    for command in ("doctor", "sessions", "review", "scan", "compare", "merge", "report", "sizes", "rules", "demo"):
        assert f"| `{command}" in commands
    codes = (DOCS / "exit-codes.md").read_text(encoding="utf-8")
    from nomos_forensics.errors import ExitCode

    documented = {line.split("|")[1].strip() for line in codes.splitlines() if line.startswith("| ")}
    assert {str(int(code)) for code in ExitCode} <= documented


def test_readme_is_a_five_minute_read():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "python3 -m venv .venv && . .venv/bin/activate && pip install '.[demo]'\nnomos-forensics demo" in readme
    assert "![" in readme and "docs/report.png" in readme
    rule = readme[readme.index("## Writing a rule"):]
    code = rule[rule.index("```python\n") + 10:rule.index("```", rule.index("```python\n") + 10)]
    assert len(code.strip().splitlines()) <= 15
    for page in DOCS.glob("*.md"):  # every page is linked from the README or the docs' home
        assert f"docs/{page.name}" in readme or f"]({page.name}" in (DOCS / "index.md").read_text(), page.name


def test_readme_card_is_the_real_one(capsys, sample_dsn, monkeypatch):
    monkeypatch.delenv("NOMOS_FORENSICS_WIDE")
    monkeypatch.delenv("COLUMNS", raising=False)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("```\nSession: c0a1e5a1") + 4
    shown = readme[start:readme.index("```", start)]
    assert shown == invoke(capsys, "review", "c0a1e5a1", "--dsn", sample_dsn).out


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## Run the tests"):]
    command = block[block.index("```bash\n") + 8:block.index("```", block.index("```bash\n") + 8)].strip()
    assert command.endswith("pytest") and ". .venv/bin/activate" in command
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_docs_site_builds_offline(tmp_path):
    """`properdocs build --strict` (every link and anchor checked) with any network access
    refused, and a site that loads nothing from the network either."""
    import os
    import subprocess
    import sys

    offline = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
               "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": ""}
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "properdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=offline, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pages = list(site.glob("**/*.html"))
    assert len(pages) >= 18
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html), page


def test_outcome_rule_is_the_code_docstring():
    import inspect

    from nomos_forensics.card import decide_outcome

    page = (DOCS / "outcome.md").read_text(encoding="utf-8")
    block = page.split("<!-- outcome-rule -->")[1].split("<!-- /outcome-rule -->")[0].strip()
    assert block == inspect.cleandoc(decide_outcome.__doc__).split("\n", 1)[1].strip()


def test_rules_table_matches_the_rules():
    page = (DOCS / "signatures.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| (NF\d+) \| `([a-z-]+)` \| (\w+) \|", page, re.M))
    assert rows == {(s.code, s.name, s.cls.default_severity().label) for s in RULES}
