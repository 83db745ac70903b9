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


def _fanout(counts_per_turn: list[dict[str, int]], per_message: int = 10, vary: bool = True) -> list[dict]:
    """Turns of calls, each with a container id (`vary`: a different one per call in a message,
    a loop over items; else the same one, a poll)."""
    messages: list[dict] = []
    for t, counts in enumerate(counts_per_turn):
        messages.append({"user": f"task {t}: check every container"})
        calls = [name for name, n in counts.items() for _ in range(n)]
        for start in range(0, len(calls), per_message):
            batch = calls[start:start + per_message]
            messages.append({"assistant": {"text": "", "tool_calls": [
                {"name": n, "arguments": {"vmid": 100 + i * vary}} for i, n in enumerate(batch)]}})
            messages += [{"tool": {"name": n, "output": "ok"}} for n in batch]
        messages.append({"assistant": "All checked."})
    return messages


FANOUT_CASES = [
    {"name": "tool-fanout/31-run-calls", "expect": {"tool-fanout": 1}, "messages": _fanout([{"run": 31}])},
    {"name": "tool-fanout/exactly-30-does-not-fire", "expect": {"tool-fanout": 0},
     "messages": _fanout([{"run": 30}], vary=False)},
    {"name": "tool-fanout/90-over-three-turns", "expect": {"tool-fanout": 0},
     "messages": _fanout([{"run": 30}, {"run": 30}, {"run": 30}], vary=False)},
    {"name": "tool-fanout/a-loop-of-30-fires", "expect": {"tool-fanout": 1}, "messages": _fanout([{"run": 30}])},
    {"name": "tool-fanout/40-in-one-message", "expect": {"tool-fanout": 1},
     "messages": _fanout([{"list_lxcs": 40}], per_message=40)},
    {"name": "tool-fanout/two-turns-fire-twice", "expect": {"tool-fanout": 2},
     "messages": _fanout([{"run": 35}, {"run": 5}, {"list_lxcs": 33}])},
    # each tool loops over a dozen containers (ids change, the shape does not): one finding per turn
    {"name": "tool-fanout/three-loops-in-one-turn", "expect": {"tool-fanout": 1},
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
    assert finding.data["alike"] == 1.0 and finding.data["values"] == 40 and finding.evidence[0].turn == 1
    assert "100% of them alike but for ids and numbers (40 different values)" in finding.message
    other = review_in_memory({"name": "other", "messages": _fanout([{"get_vm": 33}])}, select=["tool-fanout"])
    assert "a bulk form of `get_vm` that takes the whole list" in other.findings[0].fix


def test_a_busy_turn_of_varied_calls_is_no_fanout():
    """Issue 33: 64 calls over three tools, each call different in shape, is a coding agent
    working, not N+1; 35 calls of one tool whose arguments differ in shape neither."""
    commands = [f"grep -n {word} src/{word}.py" for word in ("alpha", "beta", "gamma", "delta", "epsilon")] * 7
    busy = [{"user": "fix the bug"}] + [
        {"assistant": {"text": "", "tool_calls": [{"name": name, "arguments": {"command": f"{verb} {c}"}}]}}
        for name, verb in (("bash", "run"), ("read", "open"), ("edit", "patch")) for c in commands[:21]]
    busy += [{"assistant": {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": c}}]}} for c in commands]
    card = review_in_memory({"name": "busy", "messages": busy + [{"assistant": "Fixed."}]}, select=["tool-fanout"])
    assert card.findings == []


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
    """25 alike `run` calls over containers, interleaved with `list_lxcs` (no run of 10 in a row):
    under the default 30, over a `max_calls` of 20."""
    calls = [{"name": name, "arguments": {"vmid": 100 + i}} for i in range(25) for name in ("run", "list_lxcs")]
    case = {"name": "interleaved", "messages": [{"user": "check them all"}] + [
        {"assistant": {"text": "", "tool_calls": [call]}} for call in calls] + [{"assistant": "All checked."}]}
    sid = insert_case(dsn, case)
    assert findings_by_rule(review_case(dsn, sid, select=["tool-fanout"])) == {}
    card = review_case(dsn, sid, select=["tool-fanout"], options={"tool-fanout": {"max_calls": 20}})
    assert findings_by_rule(card) == {"tool-fanout": 1} and card.findings[0].data["count"] == 25


def test_oversized_is_exact_for_values_that_compress_extremely_well(dsn):
    sid = insert_case(dsn, {"name": "oversized/repetitive", "messages": [
        {"user": "x"}, {"tool": {"name": "run", "output": "y" * 90_000}}, {"assistant": "done"}]})
    card = review_case(dsn, sid, select=["oversized-message"])
    (finding,) = card.findings
    big = finding.data["messages"][0]
    assert big["logical_bytes"] > 90_000 and big["disk_bytes"] < 5_000
