"""`nomos-forensics sessions`: list sessions, newest first, in one query."""

from __future__ import annotations

from datetime import timezone

import click

from ..clikit import MAX_COUNT, App, connection_options, echo, format_option, pass_app, since_option, warn, wide_option
from ..render import Format, table, to_json
from ..scan import session_span
from .review import require_compatible


def like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@click.command()
@connection_options
@click.option("--limit", type=click.IntRange(min=1, max=MAX_COUNT), default=20, show_default=True)
@since_option()
@click.option("--search", default=None, metavar="TEXT", help="Substring of the title, goal or id.")
@wide_option
@format_option(Format.TABLE, Format.JSON, default=Format.TABLE)
@pass_app
def sessions(app: App, limit: int, since, search: str | None, fmt: Format) -> int:
    """List sessions with message and tool-call counts."""
    db = app.db
    with db.connect("listing sessions") as conn:
        require_compatible(app.schema(conn))
        rows = db.query(
            conn,
            "list_sessions",
            {"limit": limit, "since": since, "search": like_pattern(search) if search else None},
            purpose="listing sessions",
        )
    records = [
        {
            "id": r.id,
            "title": r.title,
            "created_at": r.created_at.isoformat() if r.created_at else None,
            "status": r.status,
            "messages": int(r.messages or 0),
            "tool_calls": int(r.tool_calls or 0),
        }
        for r in rows
    ]
    if not records:
        asked = []
        if since is not None:
            asked.append(f"created since {since.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
        if search:
            asked.append(f"matching {search!r}")
        with db.connect("reading which days the sessions cover") as conn:
            span = session_span(db, conn)
        warn(f"no sessions match ({', '.join(asked) or 'no filter'}); {span.describe()}")
    if fmt == Format.JSON:
        echo(to_json({"schema_version": 1, "sessions": records}))
        return 0
    if not records:
        echo("no sessions found")
        return 0
    echo(table(
        [
            [
                r["id"][:8],
                _truncate(r["title"], 50),
                (r["created_at"] or "")[:16].replace("T", " "),
                r["status"] or "",
                r["messages"],
                r["tool_calls"],
            ]
            for r in records
        ],
        ["id", "title", "created", "status", "msgs", "tools"],
    ))
    return 0


def _truncate(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
