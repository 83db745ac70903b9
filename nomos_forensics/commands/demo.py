"""`nomos-forensics demo`: the whole job on an embedded Postgres loaded with the sample sessions."""

from __future__ import annotations

import click

from ..clikit import echo, invoke
from ..devdb import DEMO_DB_PREFIX, apply_migrations, create_database, embedded_server, load_sample

# the sample session the demo reviews: a failing one (see sql/sample/README.md)
DEMO_SESSION = "c0a1e5a1"


@click.command()
@click.option("--keep", is_flag=True, help="Leave the server running and print its DSN.")
def demo(keep: bool) -> int:
    """Start an embedded Postgres, load the Nomos schema and sample data, list and review sessions."""
    server: dict = {}
    group = click.get_current_context().find_root().command  # the demo runs its sibling commands
    with embedded_server(keep=keep, info=server) as admin:
        dsn = create_database(admin, prefix=DEMO_DB_PREFIX)
        apply_migrations(dsn)
        load_sample(dsn)
        echo(click.style("$ nomos-forensics sessions --limit 12", bold=True))
        code = invoke(group, ["sessions", "--dsn", dsn, "--limit", "12"])
        echo()
        echo(click.style(f"$ nomos-forensics review {DEMO_SESSION}", bold=True))
        code = max(code, invoke(group, ["review", "--dsn", dsn, DEMO_SESSION]))
        if keep:
            echo(f"\nserver left running: --dsn '{dsn}'")
            echo(f"to stop it and remove its data: kill -INT {server['pid']} && sleep 2 && rm -rf {server['base']}")
    return 0 if code in (0, 1) else code
