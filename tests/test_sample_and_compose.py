"""The sample dataset and docker-compose.yml: the compose init scripts build the same database
as the dev tooling, and every session in sql/sample/README.md shows exactly the signatures the
README promises (checked with plain SQL facts, independent of the rules)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psycopg
import pytest
import yaml
from click.testing import CliRunner

from nomos_forensics import devdb
from nomos_forensics.cli import cli
from nomos_forensics.model import fields_from_content
from nomos_forensics.schema import CONTRACT, CONTRACT_MIGRATION

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
SAMPLE = ROOT / "sql" / "sample"
INITDB = "/docker-entrypoint-initdb.d"
DEMO_PREFIX = "c0a1e5a1"
SIGNATURES = (
    "cant-run", "no-web-tool", "empty-response", "non-english-refusal", "tool-fanout",
    "oversized-message", "orphaned-approval", "plan-step-order", "stale-plan-steps",
    "retired-tool", "blocked-action", "user-frustration", "unfinished-session",
)
OVERSIZED_BYTES = 50 * 1024


# ------------------------------------------------------------------ the README's table
def readme_sessions() -> list[dict[str, object]]:
    """Rows of the "Sessions" table in sql/sample/README.md."""
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    section = text.split("## Sessions", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = re.match(r"^\|\s*`([0-9a-f]{8})`\s*\|", line)
        if not match:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        signatures = [] if cells[4] == "none" else [s.strip() for s in cells[4].split(",")]
        rows.append({"prefix": match.group(1), "title": cells[1], "signatures": signatures,
                     "outcome": cells[5]})
    return rows


README = readme_sessions()


def test_readme_lists_every_signature_and_one_demo_session():
    assert len(README) >= 30
    assert len({r["prefix"] for r in README}) == len(README)
    named = {s for r in README for s in r["signatures"]}
    assert named == set(SIGNATURES), f"unknown or missing: {named ^ set(SIGNATURES)}"
    assert [r["prefix"] for r in README if r["prefix"] == DEMO_PREFIX] == [DEMO_PREFIX]
    demo = next(r for r in README if r["prefix"] == DEMO_PREFIX)
    assert demo["signatures"] and "failed" in str(demo["outcome"])
    assert sum(1 for r in README if not r["signatures"]) >= 5, "several clean sessions"


def test_generated_files_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(SAMPLE / "generate_sample.py"), "--check"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------ docker-compose.yml
def compose_init_files() -> list[tuple[str, Path]]:
    """(name inside /docker-entrypoint-initdb.d, host file) for every init mount of the postgres service."""
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    service = compose["services"]["postgres"]
    mounts = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            source, target = volume["source"], volume["target"]
        else:
            source, target = volume.split(":")[:2]
        if target.startswith(INITDB + "/"):
            mounts.append((target[len(INITDB) + 1:], (COMPOSE.parent / source).resolve()))
    # the image's entrypoint runs `for f in /docker-entrypoint-initdb.d/*`: glob order
    return sorted(mounts, key=lambda m: m[0])


def test_compose_service_shape():
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    service = compose["services"]["postgres"]
    assert re.fullmatch(r"postgres:16(\.\d+)?(-\w+)?", service["image"])
    env = service["environment"]
    env = env if isinstance(env, dict) else dict(item.split("=", 1) for item in env)
    assert env["POSTGRES_DB"] == "nomos" and env.get("POSTGRES_PASSWORD")
    assert "pg_isready" in " ".join(service["healthcheck"]["test"])
    assert any(str(p).startswith("5433:5432") for p in service["ports"])


def test_compose_mounts_every_migration_then_the_sample_last():
    mounts = compose_init_files()
    names = [name for name, _ in mounts]
    # glibc locales sort ignoring punctuation first; the order must not depend on the locale
    assert names == sorted(names, key=lambda n: re.sub(r"[^0-9a-z]", "", n.lower()))
    assert all(name.endswith(".sql") for name in names)
    for _, source in mounts:
        assert source.is_file(), f"compose mounts a missing file: {source}"
    migrations = sorted((ROOT / "sql" / "migrations").glob("*.sql"), key=lambda p: int(p.name.split("_")[0]))
    assert [source for _, source in mounts[:-1]] == [p.resolve() for p in migrations]
    assert mounts[-1][1] == (SAMPLE / "sample.sql").resolve()


def _replay_with_psycopg(dsn: str, files: list[Path]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for path in files:
            conn.execute(path.read_text(encoding="utf-8"))


def _replay_with_psql(dsn: str, files: list[Path]) -> None:
    # what the postgres image's entrypoint does for *.sql
    for path in files:
        subprocess.run(
            ["psql", "-v", "ON_ERROR_STOP=1", "--no-psqlrc", "--quiet", "--dbname", dsn, "-f", str(path)],
            check=True, capture_output=True, text=True,
        )


@pytest.mark.parametrize("client", ["psycopg", "psql"])
def test_compose_init_scripts_build_the_sample_database(admin_dsn, client):
    if client == "psql" and shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    files = [source for _, source in compose_init_files()]
    dsn = devdb.create_database(admin_dsn)
    try:
        (_replay_with_psql if client == "psql" else _replay_with_psycopg)(dsn, files)
        with psycopg.connect(dsn) as conn:
            tables = {r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
            assert set(CONTRACT) <= tables
            assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == CONTRACT_MIGRATION
            assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == len(README)
            demo = conn.execute("SELECT id::text FROM sessions WHERE id::text LIKE %s",
                                (DEMO_PREFIX + "%",)).fetchall()
            assert len(demo) == 1
            assert conn.execute("SELECT count(*) FROM messages WHERE session_id::text LIKE %s",
                                (DEMO_PREFIX + "%",)).fetchone()[0] > 5
            big = conn.execute("SELECT max(octet_length(content::text)) FROM messages").fetchone()[0]
            assert big > OVERSIZED_BYTES
    finally:
        devdb.drop_database(admin_dsn, dsn)


# ------------------------------------------------------------------ the CLI on the sample
def test_sessions_command_lists_the_sample(sample_dsn):
    result = CliRunner().invoke(cli, ["sessions", "--dsn", sample_dsn, "--format", "json", "--limit", "500"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)["sessions"]
    assert len(listed) == len(README)
    assert {s["id"][:8] for s in listed} == {r["prefix"] for r in README}
    by_prefix = {s["id"][:8]: s for s in listed}
    assert by_prefix[DEMO_PREFIX]["status"] == "failed"
    assert [s["created_at"] for s in listed] == sorted((s["created_at"] for s in listed), reverse=True)
    assert all(s["created_at"].startswith("2026-11-") for s in listed)


# ------------------------------------------------------------------ the signatures, as SQL facts
class Facts:
    """Everything the sample database says about one session, decoded with the project's normaliser."""

    def __init__(self, conn: psycopg.Connection, session_id: str) -> None:
        rows = conn.execute(
            "SELECT role, content, octet_length(content::text) FROM messages WHERE session_id = %s"
            " ORDER BY created_at, id", (session_id,)).fetchall()
        self.messages = []
        for role, content, size in rows:
            fields, shape, _ = fields_from_content(content)
            self.messages.append({"role": role, "fields": fields, "shape": shape, "size": size})
        self.turns: list[list[dict]] = []
        for m in self.messages:
            if m["role"] == "user":
                self.turns.append([])
            if self.turns:
                self.turns[-1].append(m)
        self.audit = conn.execute("SELECT action, outcome FROM audit_log WHERE session_id = %s",
                                  (session_id,)).fetchall()
        # (status, seq, started_at), in the order the executions started (not-started ones last)
        self.executions = conn.execute(
            "SELECT e.status, s.seq, e.started_at FROM nomos_plan_executions e"
            " LEFT JOIN nomos_plan_steps s ON s.id = e.step_id"
            " WHERE e.session_id = %s ORDER BY e.started_at NULLS LAST, e.id",
            (session_id,)).fetchall()
        # (plan, generation, seq, status, newest generation of the session)
        self.steps = conn.execute(
            "SELECT s.plan_id, s.generation, s.seq, s.status,"
            " max(s.generation) OVER (PARTITION BY p.session_id)"
            " FROM nomos_plan_steps s JOIN nomos_plans p ON p.id = s.plan_id WHERE p.session_id = %s",
            (session_id,)).fetchall()

    def texts(self, role: str) -> list[str]:
        return [m["fields"].text or "" for m in self.messages if m["role"] == role]

    def calls(self) -> list[str | None]:
        return [c.name for m in self.messages for c in m["fields"].tool_calls]

    def signatures(self) -> set[str]:
        found = set()
        assistant = " ".join(self.texts("assistant"))
        users = " ".join(self.texts("user"))
        if re.search(r"\b(can't|cannot|unable to) run\b|无法|不能|no puedo|не могу", assistant, re.I):
            found.add("cant-run")
        if re.search(r"no local knowledge", assistant, re.I) and "http_get" not in self.calls():
            found.add("no-web-tool")
        if any(m["role"] == "assistant" and not (m["fields"].text or "").strip()
               and not m["fields"].tool_calls and not m["fields"].tool_results for m in self.messages):
            found.add("empty-response")
        if re.search(r"抱歉|Lo siento|Извините", assistant) and users.isascii():
            found.add("non-english-refusal")
        for turn in self.turns:
            names = Counter(c.name for m in turn for c in m["fields"].tool_calls)
            if sum(names.values()) > 30 and names.most_common(1)[0][1] > 30:
                found.add("tool-fanout")
        if any(m["size"] > OVERSIZED_BYTES for m in self.messages):
            found.add("oversized-message")
        if "complete_task" in self.calls() and any(e[0] == "pending_approval" for e in self.executions):
            found.add("orphaned-approval")
        seqs = [seq for _, seq, started in self.executions if seq is not None and started is not None]
        ran_ahead = any(
            status in ("running", "done", "failed") and any(
                (p2, g2) == (plan, generation) and s2 < seq and st2 in ("pending", "approved")
                for p2, g2, s2, st2, _ in self.steps)
            for plan, generation, seq, status, _ in self.steps)
        if seqs != sorted(seqs) or ran_ahead:
            found.add("plan-step-order")
        if any(status == "pending" and generation < newest for _, generation, _, status, newest in self.steps):
            found.add("stale-plan-steps")
        if "request_execution" in self.calls():
            found.add("retired-tool")
        if any(outcome in ("blocked", "denied") for _, outcome in self.audit):
            found.add("blocked-action")
        if re.search(r"\bno, i said\b|not what i asked", users, re.I):
            found.add("user-frustration")
        conversation = [m for m in self.messages if m["role"] in ("user", "assistant", "tool")]
        last = conversation[-1]["fields"] if conversation else None
        if conversation and (
            conversation[-1]["role"] in ("user", "tool") or last.error or last.tool_calls
            or not ((last.text or "").strip() or last.tool_results)
        ):
            found.add("unfinished-session")  # no answer: a tool result, a user message, a blank or an error card
        return found


@pytest.fixture(scope="module")
def sample_ids(sample_dsn) -> dict[str, str]:
    with psycopg.connect(sample_dsn) as conn:
        return {r[0][:8]: r[0] for r in conn.execute("SELECT id::text FROM sessions")}


@pytest.mark.parametrize("row", README, ids=[f"{r['prefix']}-{'+'.join(r['signatures']) or 'clean'}" for r in README])
def test_session_shows_exactly_its_signatures(sample_dsn, sample_ids, row):
    with psycopg.connect(sample_dsn) as conn:
        facts = Facts(conn, sample_ids[row["prefix"]])
    assert facts.signatures() == set(row["signatures"])


def test_sample_has_every_messy_shape(sample_dsn):
    checks = {
        "double-encoded content": "jsonb_typeof(content) = 'string' AND left(content #>> '{}', 1) = '{'",
        "bare string content": "jsonb_typeof(content) = 'string' AND left(content #>> '{}', 1) <> '{'",
        "JSON null content": "jsonb_typeof(content) = 'null'",
        "array content": "jsonb_typeof(content) = 'array'",
        "text missing": "role = 'assistant' AND jsonb_typeof(content) = 'object' AND NOT content ? 'text'",
        "text null": "jsonb_typeof(content -> 'text') = 'null'",
        "tool_calls missing": "role = 'assistant' AND jsonb_typeof(content) = 'object' AND NOT content ? 'tool_calls'",
        "tool_calls null": "jsonb_typeof(content -> 'tool_calls') = 'null'",
        "tool_calls empty": "content -> 'tool_calls' = '[]'::jsonb",
        "arguments as a JSON string": "jsonb_path_exists(content, '$.tool_calls[*].arguments ? (@.type() == \"string\")')",
        "tool call without a name": "jsonb_path_exists(content, '$.tool_calls[*] ? (!exists(@.name))')",
        "legacy tool_results": "role = 'assistant' AND content ? 'tool_results'",
        "role=tool result rows": "role = 'tool' AND content ?& array['tool_call_id', 'name', 'output', 'is_error']",
        "tool output as an object": "role = 'tool' AND jsonb_typeof(content -> 'output') = 'object'",
        "error card": "role = 'assistant' AND content ? 'error'",
        "non-Latin script": "content::text ~ '[\u3040-\u30ff\u4e00-\u9fff\u0400-\u04ff]'",
        "over 50 KB on disk": f"pg_column_size(content) > {OVERSIZED_BYTES}",
        "over 50 KB as text": f"octet_length(content::text) > {OVERSIZED_BYTES}",
    }
    session_checks = {
        "NULL title": "title IS NULL", "empty title": "title = ''", "NULL status": "status IS NULL",
        "NULL model": "model IS NULL", "NULL updated_at": "updated_at IS NULL",
    }
    with psycopg.connect(sample_dsn) as conn:
        missing = [name for name, where in checks.items()
                   if not conn.execute(f"SELECT EXISTS (SELECT 1 FROM messages WHERE {where})").fetchone()[0]]
        missing += [name for name, where in session_checks.items()
                    if not conn.execute(f"SELECT EXISTS (SELECT 1 FROM sessions WHERE {where})").fetchone()[0]]
        facts = conn.execute("""
            SELECT (SELECT count(DISTINCT model) FROM sessions),
                   (SELECT count(*) FROM audit_log WHERE session_id IS NULL),
                   (SELECT max(generation) FROM nomos_plan_steps),
                   (SELECT count(*) FROM nomos_plan_steps WHERE status = 'replaced'),
                   (SELECT count(*) FROM nomos_plan_executions WHERE step_id IS NULL AND plan_id IS NULL),
                   (SELECT count(*) FROM nomos_plan_executions e
                      WHERE e.step_id IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM nomos_plan_steps s WHERE s.id = e.step_id)),
                   (SELECT count(*) FROM nomos_plans p
                      WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = p.session_id)),
                   (SELECT count(*) FROM sessions
                      WHERE created_at < '2026-11-01' OR created_at >= '2026-12-01')
        """).fetchone()
    assert not missing, f"the sample lacks: {missing}"
    models, outside_chat, max_generation, replaced, ad_hoc, dangling_steps, dangling_plans, outside_nov = facts
    assert models >= 4
    assert outside_chat >= 1
    assert max_generation >= 2 and replaced >= 1
    assert ad_hoc >= 1
    assert dangling_steps == 0 and dangling_plans == 0
    assert outside_nov == 0


def test_demo_session_is_a_rich_failure(sample_dsn, sample_ids):
    with psycopg.connect(sample_dsn) as conn:
        facts = Facts(conn, sample_ids[DEMO_PREFIX])
        status, model = conn.execute("SELECT status, model FROM sessions WHERE id = %s",
                                     (sample_ids[DEMO_PREFIX],)).fetchone()
    assert status == "failed" and model
    assert {"cant-run", "user-frustration", "empty-response"} <= facts.signatures()
    assert facts.messages[-1]["role"] == "assistant"
    assert "nginx" in facts.texts("user")[0] and "105" in facts.texts("user")[0]
