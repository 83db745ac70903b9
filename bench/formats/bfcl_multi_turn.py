"""Berkeley Function Calling Leaderboard (BFCL v3/v4) multi-turn runs: result files with the
harness's `inference_log`, beside the score files that list the failed entries.

A result file is JSONL, one entry per task: `id` (e.g. `multi_turn_miss_param_12`), `result`, and
`inference_log`, a list alternating the environment's state (`state_info` rows, left out) and one
dict per user turn: `begin_of_turn_query` (the scripted user's message(s)) and `step_N` lists of
the model's message (`content` a list of `{function: "json args"}` calls, a text string, or `[]`
when the model ended its turn), the handler's log lines, and one `tool` message per call (the
simulated API's answer; an `{"error": ...}` answer or "Error during execution" is `is_error`).
An entry the harness could not run has a `traceback` instead and is left out.

A score file (same path with `score` for `result`) is JSONL: a summary line, then one line per
FAILED entry (`valid: false`, `error.error_type`). An entry of the result file that is not in its
score file passed (BFCL's state and response checkers, computed on the simulated environment).

Mapped: user rows, assistant rows with `tool_calls`, `tool` rows; a `[]` end-of-turn message
carries no text in these logs (the harness did not record the model's closing text) and is left
out rather than shown as a blank reply; "forced to quit after N steps" is a `system` row. One run
per task is kept (the same task is run by several models/versions: the run whose sha1 sorts first),
then `max_sessions` (default 400) tasks in sha1 order. No timestamps: fixed start + 5 s a message.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

START = datetime(2025, 11, 12, tzinfo=timezone.utc)


def _is_error(output) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    if text.lstrip().startswith("Error during execution"):
        return True
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


def _rows(log):
    rows, n = [], 0
    for part in log:
        if not isinstance(part, dict):
            continue  # state_info snapshots of the simulated environment
        for key, messages in part.items():
            if key == "begin_of_turn_query":
                rows.extend({"role": "user", "content": {"text": m.get("content") or ""}} for m in messages
                            if m.get("role") == "user")
                continue
            pending = []
            for m in messages:
                role, content = m.get("role"), m.get("content")
                if role == "assistant":
                    if isinstance(content, str):
                        rows.append({"role": "assistant", "content": {"text": content, "tool_calls": [],
                                                                      "finish_reason": "stop"}})
                    elif content:
                        calls = []
                        for call in content:
                            for name, args in (call.items() if isinstance(call, dict) else []):
                                n += 1
                                try:
                                    args = json.loads(args) if isinstance(args, str) else args
                                except ValueError:
                                    pass
                                calls.append({"id": f"call_{n}", "name": name, "arguments": args})
                        pending = list(calls)
                        rows.append({"role": "assistant", "content": {"text": "", "tool_calls": calls,
                                                                      "finish_reason": "tool_calls"}})
                elif role == "tool":
                    call = pending.pop(0) if pending else {"id": f"call_{n}", "name": None}
                    rows.append({"role": "tool", "content": {"tool_call_id": call["id"], "name": call["name"],
                                                             "output": content, "is_error": _is_error(content)}})
                elif role == "handler_log" and "forced to quit" in str(content):
                    rows.append({"role": "system", "content": {"text": f"[harness] {content}"}})
    for i, r in enumerate(rows):
        r["created_at"] = START + timedelta(seconds=5 * (i + 1))
    return rows


def sessions(read, files, source):
    limit = int(source.get("max_sessions", 400))
    failed = {}  # score path -> {id: error_type}
    for path in files:
        if path.endswith("_score.json"):
            text = read(path)
            if text is not None:
                lines = [json.loads(x) for x in text.splitlines()[1:] if x.strip()]
                failed[path] = {x["id"]: (x.get("error") or {}).get("error_type") for x in lines}
    best = {}  # task id -> (digest, path, entry, error type or None)
    for path in files:
        if not path.endswith("_result.json"):
            continue
        score = path.replace("/result/", "/score/").replace("_result.json", "_score.json")
        if score not in failed:
            continue
        text = read(path)
        if text is None:
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if not entry.get("inference_log"):
                continue
            digest = hashlib.sha1(f"{path}:{entry['id']}".encode()).hexdigest()
            if entry["id"] not in best or digest < best[entry["id"]][0]:
                best[entry["id"]] = (digest, path, entry, failed[score].get(entry["id"], "passed"))
    tasks = sorted(best, key=lambda i: hashlib.sha1(i.encode()).hexdigest())[:limit]
    for tid in tasks:
        _digest, path, entry, error_type = best[tid]
        parts = path.split("/")
        run, model = parts[1], parts[3]
        rows = _rows(entry["inference_log"])
        passed = error_type == "passed"
        yield {
            "key": tid,
            "path": path,
            "session": {"title": tid, "status": None, "goal": None, "model": model, "created_at": START},
            "messages": rows,
            "external": {"outcome": "success" if passed else "failure", "valid": passed,
                         "error_type": None if passed else error_type, "run": run,
                         "field": "absent from (passed) / listed in (failed) the score file's entries, valid=false"},
        }
