"""The runbook's six signatures: their phrasings (tests/phrases) and generated sizes, reviewed in
memory (text) and on a real Postgres (sizes). Their case files run in tests/test_cases.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nomos_forensics.testing import findings_by_rule, insert_case, load_cases, review_case, review_in_memory

HERE = Path(__file__).parent
CASES = load_cases(HERE / "cases" / "messy-shapes.yaml")
PHRASES = HERE / "phrases"


def _phrase_cases(rule: str) -> list[dict]:
    data = yaml.safe_load((PHRASES / f"{rule}.yaml").read_text(encoding="utf-8"))
    cases = []
    for expected, key in ((1, "fire"), (0, "quiet")):
        for i, item in enumerate(data[key]):
            user, reply = item if isinstance(item, list) else ("please check lxc 105 for me", item)
            cases.append({
                "name": f"{rule}/{key}/{i}: {reply[:50]}",
                "expect": {rule: expected},
                "messages": [{"user": user}, {"assistant": reply}],
            })
    return cases


PHRASE_RULES = ("cant-run", "no-web-tool", "non-english-refusal")
PHRASE_CASES = [c for rule in PHRASE_RULES for c in _phrase_cases(rule)]


def _known_misses() -> list[tuple[str, str, int, str]]:
    """(rule, list, expected findings, reply) of each phrasing the rule is known to get wrong."""
    out = []
    for rule in PHRASE_RULES:
        data = yaml.safe_load((PHRASES / f"{rule}.yaml").read_text(encoding="utf-8"))
        for key, expected in (("xfail_fire", 1), ("xfail_quiet", 0)):
            for item in data.get(key) or []:
                user, reply = item if isinstance(item, list) else ("please check lxc 105 for me", item)
                out.append((rule, key, expected, user, reply))
    return out


@pytest.mark.parametrize("rule", PHRASE_RULES)
def test_known_misses_are_few(rule):
    """A rule may get a phrasing of its lists wrong (a learned model is not a lookup table), but
    not more than one in a hundred."""
    data = yaml.safe_load((PHRASES / f"{rule}.yaml").read_text(encoding="utf-8"))
    listed = len(data["fire"]) + len(data["quiet"])
    misses = len(data.get("xfail_fire") or []) + len(data.get("xfail_quiet") or [])
    assert misses <= listed / 100, (rule, misses, listed)


@pytest.mark.parametrize("miss", _known_misses(), ids=[f"{m[0]}/{m[1]}: {m[4][:40]}" for m in _known_misses()])
def test_known_misses_are_still_missed(miss):
    """When the rule gets a known miss right, it moves back to its list."""
    rule, key, expected, user, reply = miss
    card = review_in_memory({"name": key, "messages": [{"user": user}, {"assistant": reply}]}, select=[rule])
    assert findings_by_rule(card).get(rule, 0) != expected, f"{rule} now gets this right: move it back from {key}"


def _fanout(counts_per_turn: list[dict[str, int]], per_message: int = 10) -> list[dict]:
    messages: list[dict] = []
    for t, counts in enumerate(counts_per_turn):
        messages.append({"user": f"task {t}: check every container"})
        calls = [name for name, n in counts.items() for _ in range(n)]
        for start in range(0, len(calls), per_message):
            batch = calls[start:start + per_message]
            messages.append({"assistant": {"text": "", "tool_calls": [
                {"name": n, "arguments": {"vmid": 100 + i}} for i, n in enumerate(batch)]}})
            messages += [{"tool": {"name": n, "output": "ok"}} for n in batch]
        messages.append({"assistant": "All checked."})
    return messages


FANOUT_CASES = [
    {"name": "tool-fanout/31-run-calls", "expect": {"tool-fanout": 1}, "messages": _fanout([{"run": 31}])},
    {"name": "tool-fanout/exactly-30-does-not-fire", "expect": {"tool-fanout": 0}, "messages": _fanout([{"run": 30}])},
    {"name": "tool-fanout/90-over-three-turns", "expect": {"tool-fanout": 0},
     "messages": _fanout([{"run": 30}, {"run": 30}, {"run": 30}])},
    {"name": "tool-fanout/40-in-one-message", "expect": {"tool-fanout": 1},
     "messages": _fanout([{"list_lxcs": 40}], per_message=40)},
    {"name": "tool-fanout/two-turns-fire-twice", "expect": {"tool-fanout": 2},
     "messages": _fanout([{"run": 35}, {"run": 5}, {"list_lxcs": 33}])},
    # the runbook's threshold is >30 calls per turn; "same tool repeated" only makes it N+1
    {"name": "tool-fanout/varied-tools-no-dominant", "expect": {"tool-fanout": 1},
     "messages": _fanout([{"run": 12, "list_lxcs": 12, "http_get": 12}])},
    {"name": "tool-fanout/dominant-with-others", "expect": {"tool-fanout": 1},
     "messages": _fanout([{"run": 25, "list_lxcs": 6, "http_get": 4}])},
    {"name": "tool-fanout/nameless-calls-count", "expect": {"tool-fanout": 1},
     "messages": [{"user": "go"}, {"assistant": {"text": "", "tool_calls": [{"arguments": "{}"}] * 31}}]},
]


def _big(role: str, size: int) -> dict:
    blob = "".join(f"line {i} kernel: eth0 link up {i * 7919 % 10007}\n" for i in range(size // 20 + 1))[:size]
    if role == "tool":
        return {"tool": {"name": "run", "output": blob, "is_error": False}}
    return {"assistant": blob}


OVERSIZE_CASES = [
    {"name": "oversized/120KB-tool-output", "expect": {"oversized-message": 1},
     "messages": [{"user": "show the journal"}, {"assistant": {"text": "", "tool_calls": [{"name": "run"}]}},
                  _big("tool", 120_000), {"assistant": "That's the journal."}]},
    {"name": "oversized/just-under-50KiB", "expect": {"oversized-message": 0},
     "messages": [{"user": "show"}, _big("tool", 49_000), {"assistant": "ok"}]},
    {"name": "oversized/60KB-assistant-text", "expect": {"oversized-message": 1},
     "messages": [{"user": "paste it"}, _big("assistant", 60_000)]},
    {"name": "oversized/two-big-one-finding", "expect": {"oversized-message": 1},
     "messages": [{"user": "x"}, _big("tool", 70_000), _big("tool", 2_000_000), {"assistant": "done"}]},
]

IN_MEMORY = PHRASE_CASES + FANOUT_CASES


@pytest.fixture(scope="module")
def dsn(nomos_dsn):
    return nomos_dsn


def _check(case, card) -> None:
    assert not card.errors, card.errors
    got = findings_by_rule(card)
    for rule, count in case["expect"].items():
        assert got.get(rule, 0) == count, (case["name"], got, [f.message for f in card.findings])
    for finding in card.findings:
        assert finding.evidence, finding
        for evidence in finding.evidence:
            assert len(evidence.excerpt) <= 200
            assert evidence.message_id is not None


@pytest.mark.parametrize("case", IN_MEMORY, ids=[c["name"] for c in IN_MEMORY])
def test_case(case):
    _check(case, review_in_memory(case, select=list(case["expect"])))


@pytest.mark.parametrize("case", OVERSIZE_CASES, ids=[c["name"] for c in OVERSIZE_CASES])
def test_size_case_on_postgres(dsn, case):
    sid = insert_case(dsn, case)
    _check(case, review_case(dsn, sid, select=list(case["expect"])))


def test_messy_session_with_every_rule_gives_a_card(dsn):
    case = next(c for c in CASES if c["name"] == "messy/all-shapes-in-one-session")
    sid = insert_case(dsn, case)
    card = review_case(dsn, sid)
    assert not card.errors
    assert card.stats.messages == len(case["messages"])


def test_fanout_evidence_names_tool_and_count(dsn):
    sid = insert_case(dsn, FANOUT_CASES[0])
    card = review_case(dsn, sid, select=["tool-fanout"])
    (finding,) = card.findings
    assert "run" in finding.message and "31" in finding.message
    assert "run called 31×" in finding.evidence[0].excerpt
    assert finding.data["repeated"] is True
    assert finding.fix.startswith("turn 1 called `run` 31 times") and "one `run` whose command loops" in finding.fix


def test_fanout_fix_cites_the_session():
    """N+1: the fix names the tool, its count and the bulk call; a spread turn: the top tools."""
    card = review_in_memory({"name": "n+1", "messages": _fanout([{"list_lxcs": 40}], per_message=40)},
                            select=["tool-fanout"])
    (finding,) = card.findings
    assert "called `list_lxcs` 40 times" in finding.fix and "without a vmid" in finding.fix
    spread = review_in_memory({"name": "spread", "messages": _fanout([{"run": 25, "list_lxcs": 20, "http_get": 19}])},
                              select=["tool-fanout"])
    (finding,) = spread.findings
    assert finding.data["repeated"] is False and finding.data["calls"] == 64
    assert "64 tool calls over 3 tools" in finding.message and "N+1" not in finding.message
    assert finding.fix.startswith("turn 1 made 64 tool calls (run ×25, list_lxcs ×20, http_get ×19)")
    other = review_in_memory({"name": "other", "messages": _fanout([{"get_vm": 33}])}, select=["tool-fanout"])
    assert "a bulk form of `get_vm` that takes the whole list" in other.findings[0].fix
    assert finding.evidence[0].turn == 1


def test_oversized_reports_both_sizes(dsn):
    sid = insert_case(dsn, OVERSIZE_CASES[0])
    card = review_case(dsn, sid, select=["oversized-message"])
    (finding,) = card.findings
    big = max(card.session.messages, key=lambda m: m.logical_bytes or 0)
    assert big.logical_bytes > 120_000 and big.disk_bytes < big.logical_bytes
    assert "logical" in finding.evidence[0].excerpt and "on disk" in finding.evidence[0].excerpt


def test_oversized_threshold_is_configurable(dsn):
    sid = insert_case(dsn, OVERSIZE_CASES[1])
    card = review_case(dsn, sid, select=["oversized-message"], options={"oversized-message": {"max_kb": 40}})
    assert findings_by_rule(card) == {"oversized-message": 1}


def test_fanout_threshold_is_configurable(dsn):
    sid = insert_case(dsn, FANOUT_CASES[1])
    card = review_case(dsn, sid, select=["tool-fanout"], options={"tool-fanout": {"max_calls": 20}})
    assert findings_by_rule(card) == {"tool-fanout": 1}


def test_oversized_is_exact_for_values_that_compress_extremely_well(dsn):
    sid = insert_case(dsn, {"name": "oversized/repetitive", "messages": [
        {"user": "x"}, {"tool": {"name": "run", "output": "y" * 90_000}}, {"assistant": "done"}]})
    card = review_case(dsn, sid, select=["oversized-message"])
    (finding,) = card.findings
    big = finding.data["messages"][0]
    assert big["logical_bytes"] > 90_000 and big["disk_bytes"] < 5_000
