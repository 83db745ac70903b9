"""Command-line behaviour: formats, prefix resolution, exit codes, rules listing, plugins."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from nomos_forensics.testing import insert_case

from .helpers import invoke, script

DEMO = "c0a1e5a1"
README = Path(__file__).parent.parent / "README.md"


def test_review_text_card_has_every_runbook_field(capsys, sample_dsn):
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].startswith(f"Session: {DEMO} — \"")
    for field in ("Messages:", "Tool calls:", "Top tools:", "Objective:", "Outcome:", "Blockers:",
                  "Fixes needed:", "Severity:"):
        assert any(line.startswith(field) for line in lines), field
    assert re.search(r"^Messages: \d+ \(\d+ user, \d+ assistant, \d+ tool(, \d+ other)?\) in \d+ turns?$", r.out, re.M)
    assert re.search(r"^Tool calls: \d+, in \d+ of \d+ turns?$", r.out, re.M)
    assert "Outcome: ❌ failed" in r.out
    assert "Severity: blocker" in r.out
    assert "cant-run" in r.out


def test_review_json_schema(capsys, sample_dsn):
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json")
    card = json.loads(r.out)
    assert card["schema_version"] == 1
    assert set(card) >= {"session", "stats", "objective", "outcome", "findings", "severity", "blockers",
                         "fixes", "errors"}
    assert set(card["session"]) == {"id", "title", "created_at", "status", "model"}
    assert set(card["stats"]) >= {"messages", "user_messages", "assistant_messages", "tool_messages",
                                  "tool_calls", "turns", "unique_tools", "top_tools"}
    assert card["outcome"] in ("achieved", "failed", "partial", "unknown")
    finding = card["findings"][0]
    assert set(finding) >= {"rule", "code", "severity", "message", "root_cause", "fix", "evidence"}
    assert set(finding["evidence"][0]) == {"message_id", "turn", "excerpt"}
    assert card["session"]["id"].startswith(DEMO)


def test_review_markdown(capsys, sample_dsn):
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "markdown")
    assert r.out.startswith(f"### Session `{DEMO}`")
    assert "- **Outcome:** ❌ failed" in r.out
    assert "| severity | rule | finding | evidence |" in r.out


def test_full_uuid_and_prefix_agree(capsys, sample_dsn):
    full = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json").out)
    again = json.loads(invoke(capsys, "review", full["session"]["id"], "--dsn", sample_dsn, "--format", "json").out)
    assert again == full


def test_ambiguous_prefix_lists_candidates(capsys, nomos_dsn):
    insert_case(nomos_dsn, {"name": "a", "messages": [{"user": "hi"}]}, session_id="abcd0000-0000-4000-8000-000000000001")
    insert_case(nomos_dsn, {"name": "b", "messages": [{"user": "hi"}]}, session_id="abcd1111-0000-4000-8000-000000000002")
    r = invoke(capsys, "review", "abcd", "--dsn", nomos_dsn)
    assert r.code == 2
    assert "ambiguous" in r.err and "abcd0000" in r.err and "abcd1111" in r.err
    assert invoke(capsys, "review", "abcd1", "--dsn", nomos_dsn).code == 0


@pytest.mark.parametrize("ref,fragment", [
    ("ffffffff", "no session id starts with"),
    ("ffffffff-ffff-4fff-8fff-ffffffffffff", "no session with id"),
    ("abc", "at least 4 hex"),
    ("'; DROP TABLE sessions; --", "invalid session id"),
    ("%", "invalid session id"),
    ("____", "invalid session id"),
])
def test_bad_session_refs_exit_2(capsys, sample_dsn, ref, fragment):
    r = invoke(capsys, "review", ref, "--dsn", sample_dsn)
    assert r.code == 2
    assert fragment in r.err
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    assert invoke(capsys, "sessions", "--dsn", sample_dsn, "--limit", "1").code == 0  # table still there


def test_fail_on(capsys, sample_dsn):
    assert invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--fail-on", "blocker").code == 1
    clean = "066e1336"
    assert invoke(capsys, "review", clean, "--dsn", sample_dsn, "--fail-on", "cosmetic").code == 0


def test_select_and_ignore(capsys, sample_dsn):
    only = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json",
                             "--select", "NF003").out)
    assert {f["rule"] for f in only["findings"]} == {"empty-response"}
    without = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json",
                                "--ignore", "cant-run,empty-response").out)
    assert not {f["rule"] for f in without["findings"]} & {"cant-run", "empty-response"}
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--select", "no-such-rule")
    assert "unknown rule 'no-such-rule'" in r.err


def test_config_file_thresholds(capsys, nomos_dsn, tmp_path, monkeypatch):
    # 12 alike `run` calls, interleaved with `list_lxcs` (no run of 10 in a row): under the default 30
    calls = [{"name": name, "arguments": {"vmid": i}} for i in range(12) for name in ("run", "list_lxcs")]
    sid = insert_case(nomos_dsn, {"name": "cfg", "messages": [
        {"user": "check all"}, {"assistant": {"text": "", "tool_calls": calls}}, {"assistant": "done"}]})
    assert json.loads(invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--format", "json").out)["findings"] == []
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.nomos-forensics]
        select = ["tool-fanout"]
        [tool.nomos-forensics.rules.tool-fanout]
        max_calls = 10
    """))
    monkeypatch.chdir(tmp_path)
    card = json.loads(invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--format", "json").out)
    assert [f["rule"] for f in card["findings"]] == ["tool-fanout"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[rules.tool-fanout]\nnot_a_key = 3\n")
    r = invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--config", str(bad))
    assert r.code == 2 and "unknown config key" in r.err


def test_rules_listing(capsys):
    r = invoke(capsys, "rules", "--format", "json")
    rules = json.loads(r.out)["rules"]
    names = {x["name"] for x in rules}
    assert {"cant-run", "no-web-tool", "empty-response", "non-english-refusal", "tool-fanout",
            "oversized-message"} <= names
    assert all(x["source"] == "built-in" for x in rules)
    table = invoke(capsys, "rules").out
    assert "NF001" in table and "cant-run" in table and "built-in" in table


def _readme_rule() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Writing a rule"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_rule_example_loads_with_plugin(capsys, nomos_dsn, tmp_path):
    path = tmp_path / "my_rule.py"
    path.write_text(_readme_rule())
    listed = invoke(capsys, "rules", "-p", str(path), "--format", "json")
    mine = [r for r in json.loads(listed.out)["rules"] if r["source"] == f"file:{path}"]
    assert len(mine) == 1
    sid = insert_case(nomos_dsn, {"name": "greetings", "messages": [
        {"user": "hi"}, {"assistant": "Hello! How can I help?"}, {"user": "disk?"},
        {"assistant": "Hello again, disk is fine."}, {"user": "and memory?"}, {"assistant": "Hi there, memory is fine."}]})
    quiet = json.loads(invoke(capsys, "review", sid, "--dsn", nomos_dsn, "--format", "json").out)
    assert "greeting-loop" not in {f["rule"] for f in quiet["findings"]}
    r = invoke(capsys, "review", sid, "--dsn", nomos_dsn, "-p", str(path), "--format", "json",
               "--select", mine[0]["code"])
    card = json.loads(r.out)
    assert [f["rule"] for f in card["findings"]] == [mine[0]["name"]]
    assert card["findings"][0]["evidence"]


CRASHING = '''
from nomos_forensics import Rule, hookimpl

class Boom(Rule):
    """Always raises.

    Detects: nothing.
    Root cause: a bug.
    Fix: none.
    """
    code = "T900"
    name = "boom"
    def check(self, session, ctx):
        raise ZeroDivisionError("kaboom")

@hookimpl
def nomos_forensics_rules():
    return [Boom]
'''


def test_crashing_rule_is_a_card_error_and_others_still_run(capsys, sample_dsn, tmp_path):
    path = tmp_path / "boom.py"
    path.write_text(CRASHING)
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path), "--format", "json")
    assert r.code == 1
    card = json.loads(r.out)
    assert card["errors"] == [{"rule": "boom", "type": "ZeroDivisionError", "message": "kaboom"}]
    assert "cant-run" in {f["rule"] for f in card["findings"]}
    text = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path)).out
    assert "Rule error: boom: ZeroDivisionError: kaboom" in text


def test_broken_plugin_file_is_reported_by_name(capsys, sample_dsn, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import no_such_module_anywhere\n")
    r = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "-p", str(path), "--format", "json")
    assert f"plugin {path}" in r.err and "ModuleNotFoundError" in r.err
    card = json.loads(r.out)
    assert card["findings"]  # built-ins still ran
    assert r.code == 1


def test_plugins_from_env(capsys, sample_dsn, tmp_path, monkeypatch):
    path = tmp_path / "my_rule.py"
    path.write_text(_readme_rule())
    monkeypatch.setenv("NOMOS_FORENSICS_PLUGINS", str(path))
    rules = json.loads(invoke(capsys, "rules", "--format", "json").out)["rules"]
    assert any(r["source"] == f"file:{path}" for r in rules)


def test_sessions_table_and_json(capsys, sample_dsn):
    r = invoke(capsys, "sessions", "--dsn", sample_dsn, "--limit", "5")
    assert r.code == 0
    header = r.out.splitlines()[0].split()
    assert header == ["id", "title", "created", "status", "msgs", "tools"]
    data = json.loads(invoke(capsys, "sessions", "--dsn", sample_dsn, "--format", "json", "--limit", "100").out)
    rows = data["sessions"]
    assert [r["created_at"] for r in rows] == sorted((r["created_at"] for r in rows), reverse=True)
    demo = next(r for r in rows if r["id"].startswith(DEMO))
    assert demo["messages"] == 10
    found = json.loads(invoke(capsys, "sessions", "--dsn", sample_dsn, "--format", "json", "--search", "nginx").out)
    assert found["sessions"] and all("nginx" in (s["title"] or "").lower() or True for s in found["sessions"])
    assert invoke(capsys, "sessions", "--dsn", sample_dsn, "--since", "not-a-date").code == 2


def test_unknown_option_exit_2(capsys):
    r = invoke(capsys, "review", "--no-such-option")
    assert r.code == 2 and "No such option" in r.err


def test_installed_script_runs(sample_dsn):
    proc = script("review", DEMO, "--dsn", sample_dsn, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["session"]["id"].startswith(DEMO)
