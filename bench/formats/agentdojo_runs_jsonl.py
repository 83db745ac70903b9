"""AgentDojo runs exported as JSONL, one file per model (or model + defence).

The first line of a file is a header (`{"metadata": {"benchmark": "agent-dojo", "accuracy": ...}}`);
every other line is one run of AgentDojo (ethz-spylab/agentdojo, NeurIPS 2024): `messages` in its
own chat format (system, user, assistant with OpenAI-style `tool_calls`, tool with the `tool_call`
it answers and `error`, a string when the tool raised), and `metadata` with `suite_name`,
`user_task_id`, `injection_task_id` (null on the runs without an attack), `success` (the
environment's utility check: did the user's task get done, computed on the environment's state)
and `security`.

Only the runs without an attack are mapped (an attack plants instructions in tool outputs; those
runs measure the injection, not the user's task). The source's `max_sessions` (default 400) keeps a
deterministic sample: the sessions whose sha1(key) sort first. AgentDojo has no timestamps here:
a fixed start plus 5 s per message.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath
from typing import Any

START = datetime(2024, 6, 1, tzinfo=timezone.utc)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw if raw is not None else {}


def _rows(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) not answered yet, in call order
    n = 0
    for m in messages:
        role = m.get("role")
        text = m.get("content") if isinstance(m.get("content"), str) else ""
        if role == "assistant":
            calls = []
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                n += 1
                cid = c.get("id") or f"call_{n}"
                calls.append({"id": cid, "name": fn.get("name"), "arguments": _arguments(fn.get("arguments"))})
                pending.append((cid, fn.get("name")))
            rows.append({"role": "assistant", "content": {
                "text": text, "tool_calls": calls, "finish_reason": "tool_calls" if calls else "stop"}})
        elif role == "tool":
            called = m.get("tool_call") or {}
            cid = m.get("tool_call_id")
            match = next((p for p in pending if p[0] == cid), None) if cid else None
            if match is None:
                name = called.get("function")
                match = next((p for p in pending if p[1] == name), pending[0] if pending else (cid or f"call_{n}", name))
            if match in pending:
                pending.remove(match)
            error = m.get("error")
            rows.append({"role": "tool", "content": {
                "tool_call_id": match[0], "name": called.get("function") or match[1],
                "output": error if error and not text else text, "is_error": bool(error)}})
        elif role in ("user", "system"):
            rows.append({"role": role, "content": {"text": text}})
    for i, r in enumerate(rows):
        r["created_at"] = START + timedelta(seconds=5 * (i + 1))
    return rows


def sessions(read, files, source):
    limit = int(source.get("max_sessions", 400))
    runs = []
    for path in files:
        text = read(path)
        if text is None:
            continue
        stem = PurePosixPath(path).stem.removeprefix("agentdojo-")
        for line in text.splitlines():
            if not line.strip():
                continue
            run = json.loads(line)
            meta = run.get("metadata") or {}
            if "messages" not in run or meta.get("success") is None or meta.get("injection_task_id") is not None:
                continue  # the header line, and the runs under attack
            key = f"{stem}:{meta.get('suite_name')}:{meta.get('user_task_id')}"
            runs.append((hashlib.sha1(key.encode()).hexdigest(), key, path, run))
    runs.sort()
    for _digest, key, path, run in runs[:limit]:
        meta = run["metadata"]
        rows = _rows(run["messages"])
        first = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
        yield {
            "key": key,
            "path": path,
            "session": {"title": first.strip().split("\n")[0][:80] or None, "status": None, "goal": None,
                        "model": meta.get("model"), "created_at": START},
            "messages": rows,
            "external": {"outcome": "success" if meta["success"] else "failure", "utility": bool(meta["success"]),
                         "field": "metadata.success", "suite": meta.get("suite_name"),
                         "user_task": meta.get("user_task_id")},
        }
