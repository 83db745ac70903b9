"""mini-swe-agent SWE-bench runs with their evaluation reports: `<run>/trajs/<id>/<id>.traj.json`
beside `<run>/logs/<id>/report.json` (the SWE-bench harness's verdict: `resolved`).

Both trajectory formats of mini-swe-agent are read:
- v2 (tool calling): messages carry `tool_calls` and `tool` results; mapped by `real_corpus.map_traj`.
- v1 (text actions, e.g. 1.15): each assistant message holds one ```bash block (the action), the
  environment answers in a `user` message `<returncode>N</returncode><output>…` (a `tool` row here,
  `is_error` when N is not 0, or when the command timed out); harness nudges ("Please always provide
  EXACTLY ONE action…") are `system` rows; the final `user` message after the submit command is the
  submission (the tool result of that command). Stamps: the model response's `created`.

`files` are the run's traj.json and report.json files (globs); a trajectory without a report is
left out. The source's `max_sessions` (default 400) keeps every unresolved run and fills the rest
with resolved ones in sha1(instance id) order, so both outcomes stay represented.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath

BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
RETURNCODE = re.compile(r"^\s*<returncode>(-?\d+)</returncode>")


def _stamp(message):
    created = ((message.get("extra") or {}).get("response") or {}).get("created")
    try:
        return datetime.fromtimestamp(float(created), tz=timezone.utc)
    except (TypeError, ValueError):
        return None


def _map_v1(traj):
    rows, pending, n, seen_task = [], None, 0, False
    for m in traj.get("messages") or []:
        role, text = m.get("role"), m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        stamp = _stamp(m)
        if role == "assistant":
            blocks = BASH.findall(text or "")
            calls = []
            if len(blocks) == 1:
                n += 1
                pending = f"call_{n}"
                calls = [{"id": pending, "name": "bash", "arguments": {"command": blocks[0]}}]
            rows.append({"role": "assistant", "content": {"text": text or "", "tool_calls": calls,
                                                          "finish_reason": "tool_calls" if calls else "stop"},
                         "created_at": stamp})
        elif role == "user" and not seen_task:
            seen_task = True
            rows.append({"role": "user", "content": {"text": text or ""}, "created_at": stamp})
        elif role == "user" and pending:
            code = RETURNCODE.match(text or "")
            timed_out = "timed out" in (text or "")[:300] and not code
            rows.append({"role": "tool", "content": {"tool_call_id": pending, "name": "bash", "output": text or "",
                                                     "is_error": bool(code and code.group(1) != "0") or timed_out},
                         "created_at": stamp})
            pending = None
        else:  # system prompt, format nudges, limits, exit records
            label = "" if role == "system" else f"[{role}] "
            rows.append({"role": "system", "content": {"text": label + (text or "")}, "created_at": stamp})
    return rows


def _fill(rows, start):
    previous = start
    for r in rows:
        t = r.get("created_at")
        if t is None or t < previous:
            t = previous + timedelta(seconds=1)
        r["created_at"] = previous = t


def sessions(read, files, source):
    limit = int(source.get("max_sessions", 400))
    reports, trajs = {}, {}
    for path in files:
        parts = PurePosixPath(path).parts
        if path.endswith("/report.json") and "logs" in parts:
            reports[parts[-2]] = path
        elif path.endswith(".traj.json"):
            trajs[PurePosixPath(path).name.removesuffix(".traj.json")] = path
    chosen = []
    for iid in sorted(set(trajs) & set(reports)):
        text = read(reports[iid])
        if text is None:
            continue
        report = json.loads(text)
        report = report.get(iid, report)
        chosen.append((bool(report.get("resolved")), hashlib.sha1(iid.encode()).hexdigest(), iid, report))
    chosen.sort()  # unresolved first, then by digest
    for resolved, _digest, iid, _report in chosen[:limit]:
        text = read(trajs[iid])
        if text is None:
            continue
        traj = json.loads(text)
        info = traj.get("info") or {}
        model = ((info.get("config") or {}).get("model") or {}).get("model_name")
        if any(m.get("tool_calls") for m in traj.get("messages") or []):
            import real_corpus  # v2 trajectories: the corpus's own mapper
            session, rows = real_corpus.map_traj(text)
            start = session["created_at"]
        else:
            rows = _map_v1(traj)
            start = next((r["created_at"] for r in rows if r["created_at"]), None) or datetime(2025, 1, 1, tzinfo=timezone.utc)
            _fill(rows, start)
        yield {
            "key": iid,
            "path": trajs[iid],
            "session": {"title": iid, "status": "completed" if info.get("exit_status") == "Submitted" else "failed",
                        "goal": None, "model": model, "created_at": start},
            "messages": rows,
            "external": {"outcome": "success" if resolved else "failure", "resolved": resolved,
                         "field": "logs/<instance>/report.json: resolved", "exit_status": info.get("exit_status")},
        }
