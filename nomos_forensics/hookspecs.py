"""The plugin hooks of nomos-forensics. Each hook's docstring is its contract."""

from __future__ import annotations

import pluggy

PROJECT = "nomos_forensics"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def nomos_forensics_rules() -> list[type]:
    """Return the rule classes this plugin provides (subclasses of `nomos_forensics.Rule`).

    Called once when plugins load, each plugin on its own and in pluggy's order (`tryfirst`
    first), so an implementation that raises is reported as that plugin's load problem while
    the other plugins' rules still load. The results are concatenated; two rules with the
    same code or name are a load error.
    """


@hookspec
def nomos_forensics_card(card, session) -> None:
    """Inspect or amend a finished review card before it is rendered.

    Receives the `Card` and the normalised `Session` it was built from (take only the
    arguments you need). Called once per card through pluggy, after all rules ran and the
    outcome was decided; the return value is ignored; a `wrapper=True` implementation runs
    around the others. An exception ends the call, as in pluggy (implementations after it do
    not run for that card), and is reported in the card's errors under the raising plugin's name.
    Items of another type left in the card's `findings`, `errors` or `skipped` (a string among
    the findings, a finding whose severity is a string) are dropped, with a card error.
    """
