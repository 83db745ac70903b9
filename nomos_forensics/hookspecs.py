"""The plugin hooks of nomos-forensics. Each hook's docstring is its contract."""

from __future__ import annotations

import pluggy

PROJECT = "nomos_forensics"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def nomos_forensics_rules() -> list[type]:
    """Return the rule classes this plugin provides (subclasses of `nomos_forensics.Rule`).

    Called once when plugins load. Every implementation is called and the results are
    concatenated; two rules with the same code or name are a load error.
    """


@hookspec
def nomos_forensics_card(card, session) -> None:
    """Inspect or amend a finished review card before it is rendered.

    Receives the `Card` and the normalised `Session` it was built from. Called for every
    card, after all rules ran and the outcome was decided; the return value is ignored.
    An exception here is reported in the card's errors like a rule error.
    """
