"""Every sample session gets exactly the findings and outcome sql/sample/README.md documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nomos_forensics.db import ConnectionSettings, Database
from nomos_forensics.testing import review_case

README = Path(__file__).parent.parent / "sql" / "sample" / "README.md"
ROW = re.compile(r"^\| `(?P<prefix>[0-9a-f]{8})` \|.*?\| (?P<signatures>[a-z, -]+) \| \S+ (?P<outcome>achieved|failed|partial|unknown) \|")


def documented() -> list[tuple[str, set[str], str]]:
    rows = []
    for line in README.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            sigs = {s.strip() for s in match.group("signatures").split(",")} - {"none"}
            rows.append((match.group("prefix"), sigs, match.group("outcome")))
    return rows


SESSIONS = documented()


def test_readme_lists_the_sample():
    assert len(SESSIONS) >= 30


@pytest.fixture(scope="module")
def full_ids(sample_dsn) -> dict[str, str]:
    db = Database(ConnectionSettings.resolve(sample_dsn))
    with db.connect() as conn:
        ids = [r[0] for r in conn.exec_driver_sql("SELECT id::text FROM sessions")]
    db.dispose()
    return {i[:8]: i for i in ids}


@pytest.mark.parametrize("prefix,signatures,outcome", SESSIONS, ids=[s[0] for s in SESSIONS])
def test_sample_session(sample_dsn, full_ids, prefix, signatures, outcome):
    card = review_case(sample_dsn, full_ids[prefix])
    assert not card.errors
    assert {f.rule for f in card.findings} == signatures, [f.message for f in card.findings]
    assert card.outcome == outcome
