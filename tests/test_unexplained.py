"""Unexplained failures (issue 34): the signature a failure no rule explains is grouped by, the
groups' exact merge in any order, bad input, the config's mute and names, and on a real
database: the planted test (a removed rule's sessions come back as one group), shard merge,
compare and the rule skeleton run as a plugin."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg.conninfo
import pytest

from nomos_forensics import devdb
from nomos_forensics.config import parse
from nomos_forensics.errors import ConfigError
from nomos_forensics.scan.groups import Unexplained
from nomos_forensics.scan.stream import _broken_card
from nomos_forensics.testing import review_in_memory
from nomos_forensics.unexplained import (
    SAMPLE,
    Signature,
    error_words,
    failure_signature,
    mask,
    rule_skeleton,
)

from .helpers import invoke, shard_files

ROOT = Path(__file__).resolve().parents[1]


def card_of(messages, status=None, name=None):
    case = {"name": name or f"s-{uuid.uuid4().hex[:6]}", "id": str(uuid.uuid4()), "messages": messages}
    if status:
        case["session"] = {"status": status}
    return review_in_memory(case)


def failing_tool(tool="run", output="Error: permission denied (publickey) for 10.0.5.12", reply=None):
    return [{"user": "restart nginx on lxc 105"},
            {"assistant": {"text": "", "tool_calls": [{"id": "c1", "name": tool, "arguments": {"cmd": "x"}}]}},
            {"tool": {"tool_call_id": "c1", "name": tool, "output": output, "is_error": True}},
            {"assistant": reply or "I'll check the access and get back to you."}]


# ------------------------------------------------------------------ the signature
def test_mask_hides_what_varies():
    assert mask("Error: open /var/lib/app/x.db: 404 at 2026-01-02 id 3f2a9c1e77b0") == \
        "error: open <path>: <n> at <n> id <id>"
    assert mask("column 'user_id' does not exist\nLINE 1") == "column <q> does not exist"
    assert error_words("Error: connection refused 10.0.0.5:5432 after 3 tries") == "error: connection refused <n> after"


def test_a_failed_tool_then_a_promise_is_one_signature_whatever_the_numbers():
    reply = "I could not restart nginx: permission denied."
    a = card_of(failing_tool(output="Error: permission denied (publickey) for 10.0.5.12", reply=reply))
    b = card_of(failing_tool(output="Error: permission denied (publickey) for 10.0.9.77", reply=reply), status="failed")
    for card in (a, b):
        assert card.outcome == "failed" and card.unexplained is not None, (card.outcome_reason, card.findings)
    assert a.unexplained.signature == b.unexplained.signature  # the status failed too: the ending read beneath it
    sig = a.unexplained.signature
    assert (sig.ending, sig.shape, sig.tool, sig.error) == (
        "says-unable", "problem", "run", "error: permission denied (publickey) for")
    assert "last tool `run` errored with `error: permission denied (publickey) for …`" in sig.describe()
    assert a.to_json()["unexplained"]["group"] == sig.id


def test_an_achieved_session_or_an_explained_failure_is_not_grouped():
    assert card_of([{"user": "hi"}, {"assistant": "Hello! The service is up."}]).unexplained is None
    card = card_of([{"user": "ls"}, {"assistant": {"error": "litellm.RateLimitError: 429 rate limited"}}])
    assert card.outcome == "failed" and any(f.rule == "error-card" for f in card.findings)
    assert card.unexplained is None  # error-card explains it


def test_bad_input_is_grouped_or_left_out_never_a_traceback():
    huge = "Error: " + "x" * 10_000_000
    binary = "\x00\x01\x02\ufffd" * 1000
    cards = [
        card_of([]),  # no messages
        card_of([{"user": "go"}], status="failed"),  # no reply, no tools
        card_of(failing_tool(output=huge)),
        card_of(failing_tool(output=binary, reply="Sorry, that did not work.")),
        card_of([{"user": "x"}, {"assistant": {"text": "", "tool_calls": [{"name": None}]}}]),
    ]
    groups = Unexplained()
    for card in cards:
        groups.add(card)
        json.dumps(card.to_json())
    broken = _broken_card(cards[0].session.info, ValueError("unreadable row"))  # what scan makes of an unreadable one
    groups.add(broken)
    cards.append(broken)
    data = groups.to_json(top=50)
    assert data["left_out"] == {"unreadable": 1} and broken.to_json()["unexplained"] is None
    assert data["failures"] == sum(c.outcome in ("failed", "partial", "unknown") for c in cards)
    assert data["failures"] == data["explained"] + data["unexplained"] + sum(data["left_out"].values())
    assert all(len(json.dumps(g)) < 20_000 for g in data["groups"])


# ------------------------------------------------------------------ exact merge
def _cards(n=60):
    rng = random.Random(5)
    outputs = ["Error: permission denied (publickey)", "Error: no such container 1{}", "Traceback (most recent call)"]
    replies = ["I could not restart nginx: permission denied.", "The restart failed with an error; I'll retry with sudo.",
               "The restart failed with an error. Should I retry?"]
    return [card_of(failing_tool(output=rng.choice(outputs).format(i), reply=rng.choice(replies)), status="failed")
            for i in range(n)]


def test_groups_merge_exactly_in_any_order():
    cards = _cards()
    whole = Unexplained()
    for card in cards:
        whole.add(card)
    for seed in range(3):
        rng = random.Random(seed)
        shuffled = cards[:]
        rng.shuffle(shuffled)
        parts = [Unexplained() for _ in range(4)]
        for card in shuffled:
            parts[rng.randrange(4)].add(card)
        merged = Unexplained()
        for part in parts:
            merged.merge(Unexplained.from_state(json.loads(json.dumps(part.to_state()))))
        assert merged.to_state() == whole.to_state()
    assert all(len(g.sample) <= SAMPLE for g in whole.groups.values())
    assert whole.to_json()["groups"], "the planted failures make groups of 3 or more"


def test_a_tampered_state_is_refused():
    state = Unexplained().to_state()
    state["groups"] = {"a|b||": {"sessions": 1, "outcomes": {}, "models": {}, "sample": [["r", "not a dict"]]}}
    with pytest.raises(TypeError):
        Unexplained.from_state(state)


# ------------------------------------------------------------------ config
def test_config_mutes_and_names_groups():
    config = parse({"unexplained": {"mute": ["0123abcd"], "names": {"89ABCDEF": "ssh keys missing"}}}, "t")
    assert config.muted_groups == {"0123abcd"} and config.group_names == {"89abcdef": "ssh keys missing"}
    for bad in ({"mute": "0123abcd"}, {"mute": ["zz"]}, {"names": {"0123abcd": ""}}, {"other": 1}):
        with pytest.raises(ConfigError):
            parse({"unexplained": bad}, "t")
    groups = Unexplained()
    for card in _cards():
        groups.add(card)
    top = groups.to_json()["groups"][0]
    groups.show({}, {top["id"]})
    muted = groups.to_json()
    assert top["id"] not in [g["id"] for g in muted["groups"]] and muted["muted"] == top["sessions"]
    groups.show({top["id"]: "known"}, ())
    named = groups.to_json()
    assert named["groups"][0]["name"] == "known"


# ------------------------------------------------------------------ the skeleton is a working rule
def test_the_rule_skeleton_flags_its_group(tmp_path):
    reply = "I could not restart nginx: permission denied."
    card = card_of(failing_tool(reply=reply), status="failed")
    signature = card.unexplained.signature
    path = tmp_path / "grp.py"
    path.write_text(rule_skeleton(signature, "ssh keys missing"), encoding="utf-8")
    flagged = review_in_memory({"name": "a", "messages": failing_tool(output="Error: permission denied (publickey) for 10.1.1.1",
                                                                      reply=reply)},
                               plugins=[str(path)], select=["ssh-keys-missing"])
    assert [f.rule for f in flagged.findings] == ["ssh-keys-missing"]
    other = review_in_memory({"name": "b", "messages": failing_tool(output="Error: disk full", reply=reply)},
                             plugins=[str(path)], select=["ssh-keys-missing"])
    assert other.findings == []
    assert failure_signature(card.session).signature == signature
    assert Signature.from_key(signature.key) == signature


# ------------------------------------------------------------------ on a database
@pytest.fixture(scope="module")
def bench_dsn(admin_dsn):
    name = f"nomos_forensics_unexpl_{uuid.uuid4().hex[:8]}"
    dsn = psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)
    try:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "generate.py"), "--dsn", admin_dsn, "--dbname", name,
             "--messages", "60000", "--sessions", "2000", "--seed", "11", "--meta", "/dev/null", "--quiet"],
            capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        yield dsn
    finally:
        devdb.drop_database(admin_dsn, dsn)


def _scan(capsys, dsn, *args):
    r = invoke(capsys, "scan", "--dsn", dsn, "--format", "json", *args)
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def test_planted_a_removed_rules_sessions_come_back_as_one_top_group(capsys, bench_dsn):
    """Issue 34's planted test: without cant-run, the failures only it explained are unexplained,
    and one of the top groups holds most of them, described by their cues."""
    whole = _scan(capsys, bench_dsn)
    only = {c["session"]["id"] for c in whole["cards"] if c["outcome"] in ("failed", "partial", "unknown")
            and {f["rule"] for f in c["findings"] if f["severity"] in ("friction", "blocker")} == {"cant-run"}}
    assert len(only) >= 5
    without = _scan(capsys, bench_dsn, "--ignore", "cant-run")
    groups = {c["session"]["id"]: c["unexplained"]["group"] for c in without["cards"] if c["unexplained"]}
    assert only <= set(groups), "every session only cant-run explained is unexplained without it"
    planted, n = max(((g, sum(groups[s] == g for s in only)) for g in {groups[s] for s in only}), key=lambda x: x[1])
    assert n >= 0.7 * len(only)  # the rest end answered: cant-run fired in an earlier turn
    before = {g["id"]: g["sessions"] for g in whole["summary"]["unexplained"]["groups"]}
    after = without["summary"]["unexplained"]["groups"]
    grew = max(after, key=lambda g: (g["sessions"] - before.get(g["id"], 0), g["id"]))
    assert grew["id"] == planted, "the group that grew most when the rule was removed holds its sessions"
    assert "could not" in grew["description"] and grew["rule_skeleton"].startswith('"""')
    assert grew["sessions"] - before.get(planted, 0) >= n


def test_shards_merge_to_the_same_groups(capsys, tmp_path, bench_dsn):
    whole = invoke(capsys, "scan", "--dsn", bench_dsn, "--format", "json")
    paths = shard_files(capsys, tmp_path, bench_dsn, 3)
    merged = invoke(capsys, "merge", "--format", "json", *map(str, paths))
    assert json.loads(merged.out)["summary"]["unexplained"] == json.loads(whole.out)["summary"]["unexplained"]
    assert merged.out == whole.out
    text = invoke(capsys, "scan", "--dsn", bench_dsn, "--jobs", "2")
    assert "Unexplained failures:" in text.out


def test_a_muted_group_is_counted_not_listed(capsys, tmp_path, bench_dsn):
    top = _scan(capsys, bench_dsn)["summary"]["unexplained"]["groups"][0]
    config = tmp_path / "nf.toml"
    config.write_text(f'[unexplained]\nmute = ["{top["id"]}"]\n', encoding="utf-8")
    data = _scan(capsys, bench_dsn, "--config", str(config))["summary"]["unexplained"]
    assert data["muted"] == top["sessions"] and top["id"] not in [g["id"] for g in data["groups"]]


def test_compare_tests_the_groups(capsys, bench_dsn):
    r = invoke(capsys, "compare", "--dsn", bench_dsn, "--at", "2026-04-15", "--format", "json")
    assert r.code == 0, r.err
    groups = json.loads(r.out)["unexplained_groups"]
    assert groups and all(g["verdict"] in ("grew", "shrank", "no significant change", "too few sessions")
                          for g in groups)
    assert {"group", "description", "before", "after", "q_value"} <= set(groups[0])


def test_a_support_chat_ending_on_are_you_still_there_or_a_greeting_is_its_own_shape():
    from nomos_forensics.unexplained import reply_shape

    def shape(text):
        return reply_shape(card_of([{"user": "x"}, {"assistant": text}]).session.messages[-1])

    assert shape("Eles estão, mas as aulas estão reservadas. Você ainda está aí?") == "presence-check"
    assert shape("Sind Sie noch da?") == "presence-check"
    assert shape("Obrigado por ter entrado em contacto. Como posso ajudar?") == "greeting"
    assert shape("Wie lange haben Sie das Gerät schon?") == "question"


def test_an_open_question_in_a_support_chat_is_not_grouped_with_a_tool_agents():
    chat = card_of([{"user": "my e-reader will not sync"}, {"assistant": "Have you restarted it?"}], status="failed")
    agent = card_of([{"user": "add Sarah to the meeting"},
                     {"assistant": {"text": "", "tool_calls": [{"id": "c1", "name": "get_events", "arguments": {}}]}},
                     {"tool": {"tool_call_id": "c1", "name": "get_events", "output": "[]"}},
                     {"assistant": "Have you restarted it?"}], status="failed")
    assert chat.unexplained.signature.chat and not agent.unexplained.signature.chat
    assert chat.unexplained.signature.id != agent.unexplained.signature.id
    assert "a conversation without tool calls" in chat.unexplained.signature.describe()
