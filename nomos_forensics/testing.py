"""Public helpers to test rules against a real Postgres: load a case, review it, compare.

A *case* is a dict (usually from YAML) describing one session:

    name: cant-run/plain-english
    expect: {cant-run: 1, empty-response: 0}   # findings per rule name
    outcome: failed                            # optional: the card's Outcome
    session: {title: ..., status: completed, goal: ..., model: ...}
    messages:
      - user: "restart nginx on lxc 105"
      - assistant: "I can't run commands on that host."
      - assistant: {text: "", tool_calls: [{name: run, arguments: {command: "uptime"}}]}
      - tool: {name: run, output: "up 3 days"}
      - raw: {role: assistant, content: "a bare string"}   # any JSON value as content
      - {repeat: 31, assistant: {text: "", tool_calls: [{name: run}]}}   # the same message 31 times
      - {repeat: 12, assistant: {tool_calls: [{name: run, arguments: {target: "lxc/{i}"}}]}}  # {i}: 1..12
    audit_log: [{action: run, outcome: blocked, target: lxc/105, risk_class: destructive}]
    plans: [{status: proposed, steps: [{seq: 1, status: pending, generation: 1}]}]
    executions: [{tool: run, status: pending_approval, command: "rm -rf /tmp/x"}]

`insert_case` writes the case into a database that has the Nomos schema (a throwaway test
database, never a production one) and returns the session id; `review_case` reviews it
exactly as `nomos-forensics review` would. `review_in_memory` reviews a case without a
database, for the text rules (a case with lifecycle rows needs the database): the built-in
cases run both ways, and tests/test_cases.py checks that the two agree.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from .card import Card
from .config import Config
from .db import ConnectionSettings, Database
from .engine import build_ruleset, load_session, review, session_info_from_row
from .model import Session, ToolCall, message_from_row
from .plugins import load as load_plugins
from .rule import Need
from .schema import reflect

BASE_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
ROLE_KEYS = ("user", "assistant", "tool", "system")


def _message_content(role: str, value: Any) -> Any:
    if role in ("user", "system"):
        return {"text": value} if isinstance(value, str) else value
    if role == "assistant":
        return {"text": value, "tool_calls": [], "finish_reason": "stop"} if isinstance(value, str) else value
    if role == "tool":
        return value
    raise ValueError(role)


def _numbered(value: Any, number: int) -> Any:
    """A repeated message's value with `{i}` in its strings replaced by the repetition's number."""
    if isinstance(value, str):
        return value.replace("{i}", str(number))
    if isinstance(value, list):
        return [_numbered(v, number) for v in value]
    if isinstance(value, dict):
        return {k: _numbered(v, number) for k, v in value.items()}
    return value


def _messages(case: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for item in case.get("messages", []):
        if "raw" in item:
            raw = item["raw"]
            out.append((raw["role"], raw.get("content")))
            continue
        item = dict(item)
        repeat = int(item.pop("repeat", 1))
        (role, value), = item.items()
        if role not in ROLE_KEYS:
            raise ValueError(f"unknown message key {role!r}")
        for number in range(1, repeat + 1):
            content = _message_content(role, _numbered(value, number) if repeat > 1 else copy.deepcopy(value))
            if role == "assistant" and isinstance(content, dict):
                for call in content.get("tool_calls") or []:
                    if isinstance(call, dict):
                        call.setdefault("id", f"call_{uuid.uuid4().hex[:8]}")
            out.append((role, content))
    return out


def insert_case(conninfo: str, case: Mapping[str, Any], session_id: str | None = None) -> str:
    """Insert one case (session, messages, lifecycle rows); returns the session id."""
    sid = session_id or case.get("id") or str(uuid.uuid4())
    meta = dict(case.get("session") or {})
    created = meta.pop("created_at", None) or BASE_TIME
    with psycopg.connect(conninfo, autocommit=False) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, status, goal, model, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (sid, meta.get("title", case.get("name")), meta.get("status"), meta.get("goal"),
             meta.get("model"), created, meta.get("updated_at")),
        )
        content_type = _content_type(conn)
        for i, (role, content) in enumerate(_messages(case)):
            value = json.dumps(content) if content_type == "json" else Jsonb(content)
            conn.execute(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (%s, %s, %s, %s)",
                (sid, role, value, created + timedelta(seconds=i)),
            )
        _insert_lifecycle(conn, sid, case, created)
        conn.commit()
    return sid


def _content_type(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
        " WHERE attrelid = 'messages'::regclass AND attname = 'content'"
    ).fetchone()
    return row[0] if row else "jsonb"


def _insert_lifecycle(conn: psycopg.Connection, sid: str, case: Mapping[str, Any], created: datetime) -> None:
    for i, row in enumerate(case.get("audit_log") or []):
        conn.execute(
            "INSERT INTO audit_log (session_id, actor, action, target, risk_class, outcome, detail, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (sid, row.get("actor", "agent"), row.get("action"), row.get("target"), row.get("risk_class"),
             row.get("outcome"), Jsonb(row.get("detail")) if row.get("detail") is not None else None,
             created + timedelta(seconds=i)),
        )
    for p, plan in enumerate(case.get("plans") or []):
        plan_id = plan.get("id") or str(uuid.uuid4())
        conn.execute(
            "INSERT INTO nomos_plans (id, session_id, goal, status, created_at) VALUES (%s, %s, %s, %s, %s)",
            (plan_id, sid, plan.get("goal"), plan.get("status"), created + timedelta(seconds=p)),
        )
        has_generation = conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = 'nomos_plan_steps'::regclass"
            " AND attname = 'generation' AND NOT attisdropped"
        ).fetchone()
        for step in plan.get("steps") or []:
            columns = ["plan_id", "seq", "title", "tool", "args", "risk_class", "status"]
            values = [plan_id, step["seq"], step.get("title"), step.get("tool"),
                      Jsonb(step["args"]) if step.get("args") is not None else None,
                      step.get("risk_class"), step.get("status")]
            if has_generation:
                columns.append("generation")
                values.append(step.get("generation", plan.get("generation", 1)))
            placeholders = ", ".join(["%s"] * len(values))
            conn.execute(f"INSERT INTO nomos_plan_steps ({', '.join(columns)}) VALUES ({placeholders})", values)
    for i, row in enumerate(case.get("executions") or []):
        conn.execute(
            "INSERT INTO nomos_plan_executions (session_id, plan_id, step_id, tool, command, status,"
            " requested_at, decided_at, error) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (sid, row.get("plan_id"), row.get("step_id"), row.get("tool", "run"), row.get("command"),
             row.get("status"), created + timedelta(seconds=i), row.get("decided_at"), row.get("error")),
        )


def review_case(
    conninfo: str,
    session_id: str,
    *,
    select: Sequence[str] = (),
    plugins: Sequence[str] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Card:
    """Review a session exactly as the CLI does (plugins, schema check, read-only connection)."""
    database = Database(ConnectionSettings.resolve(conninfo))
    try:
        registry = load_plugins(plugins)
        with database.connect("reviewing a test case") as conn:
            schema = reflect(conn, database)
            ruleset = build_ruleset(
                registry, Config(rules={k: dict(v) for k, v in (options or {}).items()}),
                select=select, schema=schema,
            )
            session = load_session(
                database, conn, session_id, needs=ruleset.needs, schema=schema,
                logical_floor=ruleset.logical_floor,
            )
            return review(session, ruleset, query=database.rule_query(conn), schema=schema,
                          manager=registry.manager)
    finally:
        database.dispose()


LIFECYCLE_KEYS = ("audit_log", "plans", "executions")


def session_from_case(case: Mapping[str, Any], session_id: str | None = None, *, full_content: bool = True) -> Session:
    """The Session `insert_case` + `load_session` would give, built in memory (messages only).

    Without `full_content`, messages are slim as the database ships them to rules that do not
    ask for `Need.CONTENT`: tool calls carry their names only, and no content is kept."""
    if any(case.get(key) for key in LIFECYCLE_KEYS):
        raise ValueError(f"case {case.get('name')!r} has lifecycle rows: review it on a database")
    meta = dict(case.get("session") or {})
    created = meta.pop("created_at", None) or BASE_TIME
    info = session_info_from_row({
        "id": session_id or case.get("id") or str(uuid.uuid4()), "title": meta.get("title", case.get("name")),
        "status": meta.get("status"), "goal": meta.get("goal"), "model": meta.get("model"),
        "created_at": created, "updated_at": meta.get("updated_at"),
    })
    messages = []
    for i, (role, content) in enumerate(_messages(case)):
        stored = json.loads(json.dumps(content))  # what jsonb hands back
        size = len(json.dumps(stored, ensure_ascii=False).encode("utf-8"))
        message = message_from_row(
            (i + 1, role, created + timedelta(seconds=i), True, stored, None, None, 0, None, 0, None, None, None,
             None, size, size),
            keep_content=full_content,
        )
        if not full_content:
            message.tool_calls = tuple(ToolCall(name=call.name, digest=call.digest) for call in message.tool_calls)
        messages.append(message)
    return Session(info, messages)


def review_in_memory(
    case: Mapping[str, Any],
    *,
    select: Sequence[str] = (),
    plugins: Sequence[str] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Card:
    """Review a case without a database, with the same rules and options as `review_case`."""
    registry = load_plugins(plugins)
    ruleset = build_ruleset(registry, Config(rules={k: dict(v) for k, v in (options or {}).items()}), select=select)
    session = session_from_case(case, full_content=Need.CONTENT in ruleset.needs)
    return review(session, ruleset, manager=registry.manager)


def findings_by_rule(card: Card) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in card.findings:
        counts[finding.rule] = counts.get(finding.rule, 0) + 1
    return counts


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    """Cases from a YAML file (a list of cases) or every *.yaml file in a folder."""
    import yaml

    path = Path(path)
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    cases: list[dict[str, Any]] = []
    for file in files:
        for case in yaml.safe_load(file.read_text(encoding="utf-8")) or []:
            case.setdefault("name", file.stem)
            case["source"] = str(file)
            cases.append(case)
    return cases
