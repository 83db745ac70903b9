"""`measure`: every figure of the `sizes` report, in the report's order, as a JSON-ready dict."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..db import Database
from ..schema import SchemaReport
from .catalog import CatalogFigures
from .contents import ContentFigures
from .figures import EXACT, SAMPLE, SCHEMA_VERSION, Runner
from .largest import largest_sessions
from .options import SizesOptions


def measure(db: Database, conn: sa.Connection, schema: SchemaReport,
            options: SizesOptions) -> dict[str, Any]:
    """Every figure of the `sizes` report, as a JSON-ready dict (schema_version 1)."""
    return _Measure(Runner(db, conn), schema, options, target=db.settings.describe()).run()


class _Measure:
    def __init__(self, runner: Runner, schema: SchemaReport, options: SizesOptions,
                 target: str) -> None:
        self.sql = runner
        self.schema = schema
        self.options = options
        self.notes: list[str] = []
        self.catalog = CatalogFigures(runner, schema, self.notes)
        self.contents = ContentFigures(runner, schema, options, self.catalog)
        self.report: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "target": target,
            "mode": EXACT if options.exact else SAMPLE,
            "settings": {
                "limit_kb": options.limit.kb,
                "limit_bytes": options.limit.bytes,
                "limit_compares": "logical bytes: octet_length(content::text)",
                "limit_origin": options.limit.origin,
                "truncate_at_kb": options.truncate_at_kb,
                "top": options.top,
                "exact": options.exact,
            },
        }

    def run(self) -> dict[str, Any]:
        r, catalog = self.report, self.catalog
        r["node"] = catalog.node()
        r["database"] = catalog.database()
        r["tables"] = catalog.tables()
        r["messages"] = self.contents.messages()
        r["sessions"] = largest_sessions(self.sql, self.schema, self.options.top, self.contents.tally,
                                         r["messages"])
        r["maintenance"] = catalog.maintenance()
        r["indexes"] = catalog.indexes()
        r["notes"] = self.notes
        return r
