"""`nomos-forensics sizes`: where the database's bytes are and what truncating tool outputs would save."""

from __future__ import annotations

import click

from .. import config as config_mod
from .. import sizes as sizes_mod
from ..clikit import MAX_COUNT, App, FiniteFloatRange, connection_options, echo, format_option, pass_app, wide_option
from ..render import Format


@click.command()
@connection_options
@click.option("--exact", is_flag=True,
              help="Measure every message, not a block sample (reads the whole table and its TOAST).")
@click.option("--limit-kb", type=FiniteFloatRange(min=0, min_open=True), default=None, metavar="KB",
              help="Oversized above this many KiB of JSON text; default: oversized-message's max_kb.")
@click.option("--truncate-at", "truncate_at_kb", type=FiniteFloatRange(min=0), metavar="KB",
              default=sizes_mod.DEFAULT_TRUNCATE_AT_KB, show_default=True,
              help="Estimate the savings if tool outputs were cut to this many KiB.")
@click.option("--top", type=click.IntRange(min=1, max=MAX_COUNT), default=sizes_mod.DEFAULT_TOP, show_default=True,
              help="How many messages and sessions to list.")
@click.option("--sample-percent", type=FiniteFloatRange(min=0, max=100, min_open=True), default=None,
              metavar="PCT", help="Percent of messages blocks to sample (default: about "
              f"{sizes_mod.TARGET_SAMPLE_ROWS:,} rows).")
@click.option("--seed", type=int, default=sizes_mod.DEFAULT_SEED, show_default=True,
              help="TABLESAMPLE REPEATABLE seed: the same seed reads the same blocks.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="TOML config to read rules.oversized-message.max_kb from (default: as `review`).")
@wide_option
@format_option(Format.TABLE, Format.JSON, Format.MARKDOWN, default=Format.TABLE)
@pass_app
def sizes(app: App, exact: bool, limit_kb: float | None, truncate_at_kb: float, top: int,
          sample_percent: float | None, seed: int, config_path: str | None, fmt: Format) -> int:
    """Database, table and message sizes; oversized messages; truncation savings; bloat and indexes.

    Catalog figures first, a repeatable block sample of messages second, full scans only with
    --exact. A figure whose statement times out or waits too long for a lock is shown as not
    available and the rest still prints (exit 0).
    """
    options = sizes_mod.SizesOptions(
        limit=sizes_mod.oversized_limit(config_mod.load(config_path), limit_kb),
        exact=exact,
        truncate_at_kb=truncate_at_kb,
        top=top,
        sample_percent=sample_percent,
        seed=seed,
    )
    db = app.db
    with db.connect("measuring sizes") as conn:
        report = sizes_mod.measure(db, conn, app.schema(conn), options)
    echo(sizes_mod.render(report, fmt))
    return 0
