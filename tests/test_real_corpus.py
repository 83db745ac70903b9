"""The real-transcript corpus (bench/real_corpus.py, bench/eval_real.py): the mappers, the
label files, and the one-command build + evaluation against a real Postgres."""

from __future__ import annotations

import collections
import json
import re
import sys
import uuid
from pathlib import Path

import psycopg
import psycopg.conninfo
import pytest
import yaml

from nomos_forensics import devdb

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import eval_real  # noqa: E402
import real_corpus  # noqa: E402

AIDER_HISTORY = """
# aider chat started at 2026-04-22 22:40:12

> Aider v0.86.2
> Model: lm_studio/qwen with whole edit format

#### hola, revisa el archivo app.py  
#### y dime qué falla  

<thinking-content-abc123>
The user asks in Spanish.
</thinking-content-abc123>

El problema está en la línea 3.

app.py
```python
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
```

> Tokens: 1.8k sent, 653 received.
> Applied edit to app.py

#### /add utils.py  
> Added utils.py to the chat

#### Add file to the chat? (Y)es/(N)o [Yes]: y  

#### ¿y ahora?  
> litellm.RateLimitError: AnthropicException - rate_limit_error
> ^C KeyboardInterrupt

# aider chat started at 2026-04-22 23:00:00

> Aider v0.86.2

#### /exit  
"""

TRAJ = {
    "instance_id": "demo__demo-1",
    "info": {"exit_status": "Submitted", "config": {"model": {"model_name": "deepseek/deepseek-chat"}}},
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "<pr_description>fix it</pr_description>"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}],
         "extra": {"response": {"created": 1775795497, "choices": [{"finish_reason": "tool_calls", "message": {}}]}}},
        {"role": "tool", "tool_call_id": "c1", "content": "<returncode>0</returncode>", "extra": {"timestamp": 1775795498}},
        {"role": "user", "content": "Tool call error: missing command"},
        {"role": "exit", "content": "diff --git a/x b/x"},
    ],
}


def test_aider_history_maps_to_nomos_rows():
    sessions = list(real_corpus.map_aider(AIDER_HISTORY))
    assert len(sessions) == 2
    _start, session, rows = sessions[0]
    assert session["model"] == "lm_studio/qwen" and session["title"] == "hola, revisa el archivo app.py"
    roles = [r["role"] for r in rows]
    assert roles == ["system", "user", "assistant", "system", "system", "system", "system", "user", "assistant", "system"]
    assert rows[1]["content"]["text"] == "hola, revisa el archivo app.py\ny dime qué falla"
    answer = rows[2]["content"]
    assert answer["reasoning"] == "The user asks in Spanish."
    assert answer["text"].startswith("El problema") and answer["text"].rstrip().endswith(">>>>>>> REPLACE\n```")
    assert rows[4]["content"]["text"] == "/add utils.py"  # a client command, not the user's prose
    assert "(Y)es/(N)o" in rows[6]["content"]["text"]  # answering aider's own question
    assert rows[8]["content"]["error"].startswith("litellm.RateLimitError")  # the failed completion
    assert rows[8]["content"]["text"] == "" and rows[8]["content"]["tool_calls"] == []
    times = [r["created_at"] for r in rows]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert [r["role"] for r in sessions[1][2]] == ["system", "system"]  # nothing said: extract skips it


def test_extract_leaves_out_sessions_under_a_sources_min_said(tmp_path, monkeypatch):
    history = (
        "# aider chat started at 2026-05-01 10:00:00\n\n#### only a prompt, nobody answers\n\n"
        "# aider chat started at 2026-05-01 11:00:00\n\n#### fix the bug\n\nDone, the bug is fixed.\n"
    )
    source = {"name": "aider-demo", "repo": "demo/demo", "commit": "0" * 40, "licence": "MIT", "format": "aider-history",
              "files": [".aider.chat.history.md"], "language": "en", "split": "heldout7", "min_said": 2}
    monkeypatch.setattr(real_corpus, "load_sources", lambda: [source])
    monkeypatch.setattr(real_corpus, "read_file", lambda mirror, src, path: history)
    monkeypatch.setattr(real_corpus, "ROOT", tmp_path)
    monkeypatch.setattr(real_corpus, "MANIFEST", tmp_path / "manifest.jsonl")
    assert real_corpus.extract(tmp_path / "mirror", tmp_path / "data") == 0
    manifest = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert [m["key"] for m in manifest] == ["aider-demo:001"]  # the lone prompt (one message) is left out
    assert manifest[0]["split"] == "heldout7" and manifest[0]["messages"] == 2
    del source["min_said"]  # without it, a session with anything said stays
    real_corpus.extract(tmp_path / "mirror", tmp_path / "data")
    assert len((tmp_path / "manifest.jsonl").read_text().splitlines()) == 2


AIDER_ARTEFACTS = """
# aider chat started at 2026-04-22 22:40:12

#### jak mám nastavit soubory

### Postup

1. Otevři soubor.

#### 1. Upravit soubor `app.tsx`

````typescript
app.tsx
````

#### !find . -name "*.ts"

> ./a.ts

#### /help jak mám určit co se ukládá do repository map

#### # Question: jak mám určit co se ukládá do repository map

####

#### # Relevant docs:

#### Aider uses a concise map of your whole git repository

Repository map se nastavuje takto.
"""


def test_aider_client_lines_and_reply_headings_are_not_user_messages():
    # heldout2 artefacts: a model's `####` heading, aider's `!cmd` shell escape, the /help prompt
    _start, _session, rows = next(real_corpus.map_aider(AIDER_ARTEFACTS))
    assert [(r["role"], r["content"]["text"][:12]) for r in rows] == [
        ("user", "jak mám nast"), ("assistant", "### Postup\n\n"), ("system", '!find . -nam'),
        ("system", "./a.ts"), ("system", "/help jak má"), ("user", "jak mám urči"),
        ("system", "# Relevant d"), ("system", "Aider uses a"), ("assistant", "Repository m")]
    assert "#### 1. Upravit soubor `app.tsx`\n\n````typescript" in rows[1]["content"]["text"]


AIDER_CRASHES = """
# aider chat started at 2026-05-02 10:00:00

#### print('hello')

> Traceback (most recent call last):
> File "aider/coders/base_coder.py", line 1, in send
> result = future.result(timeout=180)
> File "patch.py", line 158, in _call_async
> raise GatewayPatchError(f"Gateway error {code}: {text}")
> patch.GatewayPatchError: Gateway error 403: {"detail":"Your tier does not have access to direct mode"}

#### what can you do?

I can edit files.

> Add file to the chat? (Y)es/(N)o [Yes]: y
> Traceback (most recent call last):
> File "patch.py", line 158, in _call_async
> patch.GatewayPatchError: Gateway error 500: Internal Server Error

#### run it

Here is the output.

> Traceback (most recent call last):
> File "app.py", line 3, in <module>
> TypeError: can't multiply sequence by non-int of type 'float'

#### n/add scenes/Wheel.cs

> Please answer with one of: yes, no, skip, all, don't
"""


def test_aider_crashes_and_mistyped_answers_map_to_what_the_user_saw():
    # heldout3: a traceback's frame line is not the error (aider-opencoder:033), a crash of the
    # API call after a reply is the resent turn's error card (:030), a program's own traceback
    # is not a card, a mistyped answer to aider's yes/no question is not a request (aider-cargame:006)
    _start, _session, rows = next(real_corpus.map_aider(AIDER_CRASHES))
    cards = [r["content"]["error"] for r in rows if r["role"] == "assistant" and r["content"].get("error")]
    assert cards == ['patch.GatewayPatchError: Gateway error 403: {"detail":"Your tier does not have access to direct mode"}',
                     "patch.GatewayPatchError: Gateway error 500: Internal Server Error"]
    assert [r["content"]["text"] for r in rows if r["role"] == "user"] == ["print('hello')", "what can you do?", "run it"]
    assert rows[-2]["role"] == "system" and rows[-2]["content"]["text"] == "n/add scenes/Wheel.cs"


def test_trajectory_maps_to_nomos_rows():
    session, rows = real_corpus.map_traj(json.dumps(TRAJ))
    assert session["status"] == "completed" and session["title"] == "demo__demo-1"
    assert [r["role"] for r in rows] == ["system", "user", "assistant", "tool", "system", "system"]
    call = rows[2]["content"]["tool_calls"][0]
    assert call == {"id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    assert rows[3]["content"]["tool_call_id"] == "c1" and rows[3]["content"]["name"] == "bash"
    assert rows[4]["content"]["text"].startswith("[user] Tool call error")  # harness text, not the user
    died = dict(TRAJ, info={"exit_status": "Timeout"},
                messages=TRAJ["messages"][:4] + [{"role": "exit", "content": "litellm.Timeout: timed out"}])
    session, rows = real_corpus.map_traj(json.dumps(died))
    assert session["status"] == "failed"
    assert rows[-1]["role"] == "assistant" and rows[-1]["content"]["error"] == "litellm.Timeout: timed out"


CLAUDE_EXPORT = """# Claude Session Export

## Session Information

- **Session ID**: `0c6f1876-cf68-46c8-a047-51a88bc13001`
- **Export Mode**: Full Conversation

---

## Conversation

### User
> 12/1/2025, 8:12:48 PM

<command-message>catchup is running…</command-message>
<command-name>/catchup</command-name>

---

### User
> 12/1/2025, 8:12:48 PM

check the backend

---

### Assistant
> 12/1/2025, 8:12:52 PM

[
  {
    "type": "thinking",
    "thinking": "Look at the port first."
  }
]

---

### Assistant
> 12/1/2025, 8:12:52 PM

[
  {
    "type": "text",
    "text": "Let me look."
  }
]

---

### Assistant
> 12/1/2025, 8:12:53 PM

[
  {
    "type": "tool_use",
    "id": "toolu_1",
    "name": "Bash",
    "input": {
      "command": "curl localhost:8081/health"
    }
  }
]

---

### User
> 12/1/2025, 8:12:55 PM

[
  {
    "tool_use_id": "toolu_1",
    "type": "tool_result",
    "content": "Exit code 7",
    "is_error": true
  }
]

---

### User
> 12/1/2025, 8:13:01 PM

[
  {
    "type": "text",
    "text": "[Request interrupted by user for tool use]"
  }
]

---

### User
> 12/1/2025, 8:13:05 PM

try again

---

### Assistant
> 12/1/2025, 8:13:09 PM

[
  {
    "type": "text",
    "text": "Credit balance is too low"
  }
]
"""


def test_claude_code_export_maps_to_nomos_rows():
    session, rows = real_corpus.map_claude_export(CLAUDE_EXPORT)
    assert [r["role"] for r in rows] == ["system", "user", "assistant", "tool", "system", "user", "assistant"]
    assert session["title"] == "check the backend"
    assert session["extra"] == {"claude_session": "0c6f1876-cf68-46c8-a047-51a88bc13001"}
    reply = rows[2]["content"]  # thinking, text and tool_use entries are one model response
    assert reply["text"] == "Let me look." and reply["reasoning"] == "Look at the port first."
    assert reply["tool_calls"] == [{"id": "toolu_1", "name": "Bash", "arguments": {"command": "curl localhost:8081/health"}}]
    assert reply["finish_reason"] == "tool_calls"
    assert rows[3]["content"] == {"tool_call_id": "toolu_1", "name": "Bash", "output": "Exit code 7", "is_error": True}
    assert rows[-1]["content"]["error"] == "Credit balance is too low" and rows[-1]["content"]["text"] == ""
    stamps = [r["created_at"] for r in rows]
    assert stamps == sorted(stamps) and stamps[0].isoformat() == "2025-12-01T20:12:48+00:00"
    counts = real_corpus._claude_raw_counts(CLAUDE_EXPORT)
    assert counts == {"fanout_turns": 0, "max_calls_in_turn": 1, "oversized": 0}


CLAUDE_CONVERSATION_LOG = """# Claude Conversation Log

Session ID: 7cc8ab2e-8446-4595-88cb-b17e9e6b1196
Date: 2025-11-20 00:56:52

---

## 👤 User

Please read `task-02.md` and create a worktree from `main`.

---

## 🤖 Claude

I'll read the task file first.

---

## 🤖 Claude


🔧 Using tool: Read
Input: {
  "file_path": "/repo/main/.planning/task-02.md"
}


---

## 🤖 Claude


🔧 Using tool: Bash
Input: {
  "command": "python3 create_worktree.py --help",
  "description": "Get help"
}


---

## 🤖 Claude

The worktree is ready at `../task-02`.

---

## 👤 User

[Request interrupted by user]

---

## 👤 User

push it

---

## 🤖 Claude

API Error: 500 {"type":"error","error":{"type":"api_error","message":"Overloaded"}}
"""


def test_claude_conversation_log_maps_to_nomos_rows():
    session, rows = real_corpus.map_claude_conversation_log(CLAUDE_CONVERSATION_LOG)
    assert [r["role"] for r in rows] == ["user", "assistant", "assistant", "assistant", "system", "user", "assistant"]
    assert session["title"] == "Please read `task-02.md` and create a worktree from `main`."
    assert session["extra"] == {"claude_session": "7cc8ab2e-8446-4595-88cb-b17e9e6b1196"}
    first = rows[1]["content"]  # a text entry and the tool use after it are one response
    assert first["text"] == "I'll read the task file first." and first["finish_reason"] == "tool_calls"
    assert first["tool_calls"] == [{"id": "clog_0", "name": "Read", "arguments": {"file_path": "/repo/main/.planning/task-02.md"}}]
    # the next entry follows a tool call (its result, dropped by the extractor, came between): a new response
    assert rows[2]["content"]["tool_calls"][0]["name"] == "Bash" and rows[2]["content"]["tool_calls"][0]["id"] == "clog_1"
    assert rows[3]["content"] == {"text": "The worktree is ready at `../task-02`.", "tool_calls": [], "finish_reason": "stop"}
    assert rows[-1]["content"]["error"].startswith("API Error: 500") and rows[-1]["content"]["text"] == ""
    stamps = [r["created_at"] for r in rows]
    assert stamps == sorted(stamps) and session["created_at"].isoformat() == "2025-11-20T00:56:52+00:00"
    assert real_corpus._clog_raw_counts(CLAUDE_CONVERSATION_LOG) == {"fanout_turns": 0, "max_calls_in_turn": 2, "oversized": 0}


def _jsonl(*entries):
    return "\n".join(json.dumps(e) for e in entries) + "\n"


CLAUDE_JSONL = _jsonl(
    {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}, "isSnapshotUpdate": False},
    {"type": "user", "sessionId": "5e1c0a2b-1111-4222-8333-944455556666", "isSidechain": False,
     "isMeta": True, "timestamp": "2026-01-10T10:00:00.000Z",
     "message": {"role": "user", "content": "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>"}},
    {"type": "user", "sessionId": "5e1c0a2b-1111-4222-8333-944455556666", "isSidechain": False,
     "timestamp": "2026-01-10T10:00:01.000Z", "message": {"role": "user", "content": "<command-name>/model</command-name>"}},
    {"type": "summary", "summary": "Disk usage check", "leafUuid": "x"},
    {"type": "user", "sessionId": "5e1c0a2b-1111-4222-8333-944455556666", "isSidechain": False,
     "timestamp": "2026-01-10T10:00:05.000Z", "message": {"role": "user", "content": "how full is my disk?"}},
    {"type": "system", "subtype": "api_error", "level": "error", "retryAttempt": 1, "timestamp": "2026-01-10T10:00:06.000Z"},
    {"type": "assistant", "isSidechain": False, "timestamp": "2026-01-10T10:00:09.000Z",
     "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "Run df."}]}},
    {"type": "assistant", "isSidechain": False, "timestamp": "2026-01-10T10:00:09.500Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}]}},
    {"type": "assistant", "isSidechain": False, "timestamp": "2026-01-10T10:00:10.000Z",
     "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "df -h /"}}]}},
    {"type": "user", "isSidechain": False, "timestamp": "2026-01-10T10:00:11.000Z",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "df: not found", "is_error": True}]}},
    {"type": "assistant", "isSidechain": True, "timestamp": "2026-01-10T10:00:12.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "a sidechain's reply"}]}},
    {"type": "assistant", "isSidechain": False, "timestamp": "2026-01-10T10:00:15.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "The root disk is 40% full."}]}},
    {"type": "user", "isSidechain": False, "timestamp": "2026-01-10T10:01:00.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "<bash-input>ls</bash-input>"}]}},
    {"type": "user", "isSidechain": False, "timestamp": "2026-01-10T10:02:00.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "and /home?"}]}},
    {"type": "assistant", "isSidechain": False, "isApiErrorMessage": True, "timestamp": "2026-01-10T10:02:30.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "API Error: 529 Overloaded"}]}},
)


def test_claude_code_jsonl_maps_to_nomos_rows():
    session, rows = real_corpus.map_claude_jsonl(CLAUDE_JSONL)
    assert [r["role"] for r in rows] == ["system", "system", "user", "assistant", "tool", "assistant", "system", "user", "assistant"]
    assert session["title"] == "how full is my disk?"
    assert session["extra"] == {"claude_session": "5e1c0a2b-1111-4222-8333-944455556666"}
    first = rows[3]["content"]  # thinking, text and tool use entries are one response
    assert first == {"text": "Let me check.", "tool_calls": [{"id": "toolu_1", "name": "Bash", "arguments": {"command": "df -h /"}}],
                     "finish_reason": "tool_calls", "reasoning": "Run df."}
    assert rows[4]["content"] == {"tool_call_id": "toolu_1", "name": "Bash", "output": "df: not found", "is_error": True}
    assert rows[5]["content"]["text"] == "The root disk is 40% full."  # the sidechain entry is left out
    assert rows[-1]["content"]["error"] == "API Error: 529 Overloaded" and rows[-1]["content"]["finish_reason"] == "error"
    stamps = [r["created_at"] for r in rows]
    assert stamps == sorted(stamps) and session["created_at"].isoformat() == "2026-01-10T10:00:00+00:00"
    assert real_corpus._claude_jsonl_raw_counts(CLAUDE_JSONL) == {"fanout_turns": 0, "max_calls_in_turn": 1, "oversized": 0}


def test_manifest_records_provenance():
    manifest = real_corpus.load_manifest()
    keys = [m["key"] for m in manifest]
    assert len(keys) == len(set(keys)) and manifest
    reserved = {"xiaomoziyi/session-logs", "durban-designer/vsla", "sierra-research/tau-bench"}
    for m in manifest:
        assert m["id"] == str(uuid.uuid5(real_corpus.NAMESPACE, m["key"]))
        assert re.fullmatch(r"[0-9a-f]{40}", m["commit"]) and m["repo"] and m["path"] and m["licence"]
        assert m["repo"].lower() not in reserved
    sources = {s["name"] for s in real_corpus.load_sources()}
    assert {m["source"] for m in manifest} <= sources


def test_label_files_are_well_formed_and_reference_sessions():
    manifest_keys = {m["key"] for m in real_corpus.load_manifest()}
    labels = eval_real.load_labels()
    assert len(labels) >= 100
    assert eval_real.check_labels(labels, manifest_keys) == []
    counts = yaml.safe_load((real_corpus.LABELS / "raw_counts.yaml").read_text(encoding="utf-8"))
    assert set(counts) == manifest_keys
    for value in counts.values():
        assert set(value) == {"fanout_turns", "max_calls_in_turn", "oversized"}
        # a fan-out turn is N+1 (issue 33), so it needs more than 9 calls; over 30 alone is no longer one
        assert 0 <= value["fanout_turns"] and (value["fanout_turns"] == 0 or value["max_calls_in_turn"] >= 10)


def test_raw_fanout_counts_loops_over_items_not_busy_turns():
    fanout = real_corpus._Fanout()
    for i in range(35):
        fanout.call("bash", {"command": f"grep -n word{chr(97 + i % 26)} src/file{chr(97 + i % 26)}.py"})
    fanout.turn()
    for i in range(12):
        fanout.call("run", {"target": f"lxc/{100 + i}", "command": "pct status"})
    fanout.turn()
    for _ in range(40):
        fanout.call("BashOutput", {"bash_id": "abc"})  # a poll: the same call
    assert fanout.result() == {"fanout_turns": 1, "max_calls_in_turn": 40}


def test_heldout_splits_are_labelled_validated_and_apart_from_the_tuned_set():
    manifest = real_corpus.load_manifest()
    sources = {s["name"]: s for s in real_corpus.load_sources()}
    for m in manifest:  # the manifest's split is the source's; the tuned set's lines carry none
        assert m.get("split", "tuned") == sources[m["source"]].get("split", "tuned")
        assert m.get("split", "tuned") in eval_real.SPLITS[1:]
    labels = eval_real.load_labels()
    tuned = eval_real.in_split(labels, manifest, "tuned")
    counted = len(tuned)
    for split in eval_real.SPLITS[2:]:  # heldout, heldout2
        heldout = eval_real.in_split(labels, manifest, split)
        heldout_keys = {m["key"] for m in manifest if m.get("split") == split}
        assert heldout and set(heldout) == heldout_keys, split  # every held-out session is labelled
        assert eval_real.check_labels(heldout, heldout_keys) == []
        assert not set(heldout) & set(tuned)
        counted += len(heldout)
    assert counted == len(labels)
    assert eval_real.in_split(labels, manifest, "all") == labels
    # no held-out source shares a file with a tuned one (the same run must not be in both)
    files = collections.Counter((s["repo"], s["commit"], g) for s in sources.values()
                                for g in s.get("globs") or s.get("files") or [])
    assert max(files.values()) == 1


def test_in_split_keeps_only_that_splits_labels():
    manifest = [{"key": "a:1"}, {"key": "b:1", "split": "heldout"}, {"key": "c:1", "split": "tuned"}]
    labels = {k: {"outcome": "unknown"} for k in ("a:1", "b:1", "c:1")}
    assert set(eval_real.in_split(labels, manifest, "heldout")) == {"b:1"}
    assert set(eval_real.in_split(labels, manifest, "tuned")) == {"a:1", "c:1"}
    assert set(eval_real.in_split(labels, manifest, "all")) == {"a:1", "b:1", "c:1"}


def test_check_labels_reports_every_kind_of_mistake():
    bad = {"nope:1": {"outcome": "won", "flags": {"cant-run": "", "made-up": "x"}}}
    problems = eval_real.check_labels(bad, set())
    assert len(problems) == 5, problems  # unknown session, outcome, no reason, empty flag reason, unknown rule


def _synthetic_data(tmp_path: Path) -> Path:
    """Mapped sessions from the texts above, for when the real ones are not on this machine."""
    data = tmp_path / "data"
    data.mkdir()
    with (data / "synthetic.jsonl").open("w", encoding="utf-8") as fh:
        _start, session, rows = next(real_corpus.map_aider(AIDER_HISTORY))
        traj_session, traj_rows = real_corpus.map_traj(json.dumps(TRAJ))
        for key, s, r in (("synthetic:aider", session, rows), ("synthetic:traj", traj_session, traj_rows)):
            record = {"key": key, "id": real_corpus.session_id(key), "provenance": {}, "session": s, "messages": r}
            fh.write(json.dumps(record, ensure_ascii=False, default=real_corpus._iso) + "\n")
    return data


@pytest.fixture
def throwaway_dbname(admin_dsn):
    name = f"nomos_forensics_real_{uuid.uuid4().hex[:8]}"
    yield name
    devdb.drop_database(admin_dsn, psycopg.conninfo.make_conninfo(admin_dsn, dbname=name))


def test_build_loads_every_session(admin_dsn, tmp_path, throwaway_dbname):
    data = real_corpus.find_data_dir() or _synthetic_data(tmp_path)
    dsn = real_corpus.build(admin_dsn, throwaway_dbname, data)
    records = list(real_corpus.iter_records(data))
    with psycopg.connect(dsn) as conn:
        ids = {str(r[0]) for r in conn.execute("SELECT id FROM sessions")}
        per_session = dict(conn.execute("SELECT session_id::text, count(*) FROM messages GROUP BY 1").fetchall())
        roles = {r[0] for r in conn.execute("SELECT DISTINCT role FROM messages")}
    assert ids == {r["id"] for r in records}
    assert per_session == {r["id"]: len(r["messages"]) for r in records if r["messages"]}
    assert roles == {"user", "assistant", "tool", "system"}


def test_evaluation_prints_the_table(admin_dsn, tmp_path, throwaway_dbname, capsys):
    """On the first three sessions of every source (the whole corpus takes too long for a test)."""
    source = real_corpus.find_data_dir()
    if source is None:
        data = _synthetic_data(tmp_path)
    else:
        data = tmp_path / "subset"
        data.mkdir()
        for path in source.glob("*.jsonl"):
            lines = path.read_text(encoding="utf-8").splitlines()
            (data / path.name).write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    per_session = tmp_path / "sessions.jsonl"
    argv = ["--dsn", admin_dsn, "--dbname", throwaway_dbname, "--data", str(data), "--cases", "2",
            "--json", str(per_session), "--by-family"]
    assert eval_real.main(argv) == 0
    out = capsys.readouterr().out
    written = [json.loads(line) for line in per_session.read_text(encoding="utf-8").splitlines()]
    labelled = re.search(r"^Real-transcript corpus: (\d+) labelled sessions", out, re.M)
    assert labelled and len(written) == int(labelled.group(1))
    for row in written:
        assert set(row["rules"]) == set(eval_real.TEXT_RULES) | set(eval_real.DERIVED_RULES) | set(eval_real.COUNT_RULES)
        assert row["outcome"]["expected"] in eval_real.OUTCOMES
    for rule in eval_real.TEXT_RULES + tuple(eval_real.COUNT_RULES):
        assert re.search(rf"^\| {rule} +\|", out, re.M), f"no row for {rule}:\n{out}"
    assert re.search(r"^Outcome: \d+/\d+ right", out, re.M)
    if source is not None:
        assert re.search(r"^Real-transcript corpus: [1-9]\d* labelled sessions", out, re.M)
