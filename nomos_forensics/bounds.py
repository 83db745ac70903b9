"""What one card may hold: the bounds every finding is held to where it leaves a rule (built-in
or plugin), so that one session's card, review and report entry stay small whatever the
session or the plugin (docs/exit-codes.md, "Bounds"), and nothing a rule yields can stop a scan.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from typing import Any

from .decode import SURROGATE, scrub_surrogates
from .rule import Finding

INT_LIMIT = 2**63  # integers in `data` stay within 64 bits (JSON readers lose what is beyond)


@dataclass(frozen=True)
class Bounds:
    """Per-card bounds (config table `[bounds]`, keys with dashes). With the defaults a card's
    JSON stays under 1 MB whatever the session's length and whatever a plugin yields."""

    findings_per_rule: int = 20
    findings_per_card: int = 50
    evidence_per_finding: int = 20
    evidence_per_card: int = 100
    excerpt_chars: int = 200  # as the card's JSON schema says
    message_chars: int = 500  # a finding's message and blocker line
    fix_chars: int = 2000  # a finding's fix and root cause
    data_bytes: int = 8192  # a finding's data, as JSON
    data_depth: int = 32
    notes: int = 20

    @classmethod
    def keys(cls) -> dict[str, str]:
        """Config key (`evidence-per-finding`) -> field name."""
        return {f.name.replace("_", "-"): f.name for f in fields(cls)}


DEFAULT_BOUNDS = Bounds()


def data_problem(data: dict[str, Any], bounds: Bounds) -> str | None:
    """Why a finding's `data` cannot go into a card (not JSON: a key that is not a string, a
    cycle, nesting beyond the bound, an integer beyond 64 bits, NaN or infinity; or too big),
    or None."""
    problem = _shape_problem(data, bounds.data_depth, set())
    if problem:
        return problem
    try:
        size = len(json.dumps(data, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8", "replace"))
    except (TypeError, ValueError, RecursionError) as error:
        return f"cannot be written as JSON ({type(error).__name__}: {str(error)[:80]})"
    if size > bounds.data_bytes:
        return f"is {size:,} bytes of JSON, over the bound of {bounds.data_bytes:,}"
    return None


def _shape_problem(value: Any, depth: int, path: set[int]) -> str | None:
    if value is None or isinstance(value, (str, bool)):
        return None
    if isinstance(value, int):
        return None if -INT_LIMIT < value < INT_LIMIT else "holds an integer beyond 64 bits"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"holds {value!r}, which JSON cannot represent"
    if isinstance(value, (dict, list, tuple)):
        if depth <= 0:
            return "is nested deeper than the bound"
        if id(value) in path:
            return "holds a circular reference"
        path.add(id(value))
        try:
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        return f"has a key that is {type(key).__name__} {key!r:.40}, not a string"
                    problem = _shape_problem(item, depth - 1, path)
                    if problem:
                        return problem
            else:
                for item in value:
                    problem = _shape_problem(item, depth - 1, path)
                    if problem:
                        return problem
        finally:
            path.discard(id(value))
    return None  # other types are written as their str(), as they always were


def bound_finding(finding: Finding, bounds: Bounds) -> None:
    """Cut what a valid finding carries to the bounds, in place: its texts, its evidence (the
    ones left out are counted in `evidence_omitted`) and lone surrogates (as U+FFFD)."""
    finding.message = _cut(finding.message, bounds.message_chars)
    finding.fix = _cut(finding.fix, bounds.fix_chars)
    finding.root_cause = _cut(finding.root_cause, bounds.fix_chars)
    if finding.blocker is not None:
        finding.blocker = _cut(finding.blocker, bounds.message_chars)
    if len(finding.evidence) > bounds.evidence_per_finding:
        finding.evidence_omitted += len(finding.evidence) - bounds.evidence_per_finding
        finding.evidence = finding.evidence[:bounds.evidence_per_finding]
    for index, item in enumerate(finding.evidence):
        cut = _cut(item.excerpt, bounds.excerpt_chars)
        if cut is not item.excerpt:
            finding.evidence[index] = replace(item, excerpt=cut)
    if finding.data and SURROGATE.search(json.dumps(finding.data, ensure_ascii=False, default=str)):
        finding.data = scrub_surrogates(finding.data)


def bound_card_evidence(findings: list[Finding], bounds: Bounds) -> None:
    """At most `evidence_per_card` evidence items over the card's findings (worst first)."""
    left = bounds.evidence_per_card
    for finding in findings:
        if len(finding.evidence) > left:
            finding.evidence_omitted += len(finding.evidence) - left
            finding.evidence = finding.evidence[:left]
        left -= len(finding.evidence)


def _cut(text: str, limit: int) -> str:
    """`text` with lone surrogates replaced and at most `limit` characters (… at the cut)."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text.isascii() and SURROGATE.search(text):
        text = SURROGATE.sub("\ufffd", text)
    return text


def bounded_notes(notes: list[str], bounds: Bounds) -> list[str]:
    if len(notes) <= bounds.notes:
        return notes
    return [*notes[:bounds.notes], f"and {len(notes) - bounds.notes:,} more like these"]

