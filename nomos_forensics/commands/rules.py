"""`nomos-forensics rules`: every loaded rule with its code, severity, source and summary."""

from __future__ import annotations

import click

from ..clikit import echo, format_option, rule_options, wide_option
from ..render import Format, table, to_json


@click.command("rules")
@rule_options
@wide_option
@format_option(Format.TABLE, Format.JSON, Format.MARKDOWN, default=Format.TABLE)
def rules_command(fmt: Format, selection) -> int:
    """List the rules that would run (after --select/--ignore and plugins)."""
    ruleset = selection.build()
    records = [
        {
            "code": a.rule.code,
            "name": a.rule.name,
            "severity": a.rule.default_severity().label,
            "source": a.spec.source,
            "description": a.rule.summary(),
            "needs": sorted(n.value for n in a.rule.needs),
            "config": dict(a.rule.options),
            "options": {key: option.to_json() for key, option in a.rule.option_specs().items()},
        }
        for a in ruleset.active
    ]
    if fmt == Format.JSON:
        problems = [p.to_json() for p in selection.registry.problems]
        echo(to_json({"schema_version": 1, "rules": records, "errors": problems}))
    else:
        echo(table(
            [[r["code"], r["name"], r["severity"], r["source"], r["description"]] for r in records],
            ["code", "name", "severity", "source", "description"],
            fmt,
        ))
    return 0
