"""Hardening, round three: each test reproduces one defect found by attacking the tool as a hostile
database, plugin or operator would, against a real server."""

from __future__ import annotations

import json

import psycopg
import pytest

from .helpers import invoke, probe_plugin

DEMO = "c0a1e5a1"


def _plugin(tmp_path, name: str, body: str, header: str = "") -> str:
    return probe_plugin(tmp_path, name, body, header=header, code_prefix="A")


@pytest.fixture(scope="module")
def writable_dsn(make_db) -> str:
    """A sample database reached as the superuser: a role that COULD write."""
    return make_db(sample=True)


# ------------------------------------------------------------------ a rule query's side effects
SETTINGS = "SELECT current_setting('statement_timeout') AS st, current_setting('lock_timeout') AS lt, " \
           "current_setting('search_path') AS sp, (SELECT count(*) FROM pg_largeobject_metadata) AS lo"


@pytest.mark.parametrize("mode", [["review", DEMO, "--format", "json"], ["scan", "--format", "jsonl"]])
def test_a_rule_query_cannot_change_the_session_for_later_queries(capsys, writable_dsn, tmp_path, mode):
    """set_config(..., false) in ctx.query turned the timeouts off (and moved search_path) for
    every later query of the run, the tool's own included; a large object it made lived on."""
    body = f'''
    ctx.query("SELECT set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false),"
              " set_config('search_path', 'pg_catalog', false), lo_from_bytea(0, 'x')", {{}})
    row = ctx.query({SETTINGS!r}, {{}})[0]
    yield self.finding(f"{{row['st']}} {{row['lt']}} {{row['sp']}} {{row['lo']}}", session.messages[:1])
    '''
    path = _plugin(tmp_path, "settings_changer", body)
    r = invoke(capsys, *mode, "--dsn", writable_dsn, "-p", path, "--select", "settings-changer")
    cards = [json.loads(line) for line in r.out.splitlines()] if mode[0] == "scan" else [json.loads(r.out)]
    seen = {f["message"] for card in cards for f in card["findings"]}
    assert seen == {'30s 2s "$user", public 0'}, seen
    with psycopg.connect(writable_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0] == 0
