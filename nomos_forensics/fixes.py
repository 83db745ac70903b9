"""Fix texts beyond the rules' own: which Nomos-only names a fix relies on (so that a card can
say the fix is written for Nomos), and an operator's own fix text per rule (`[fixes]` in the
config), which replaces the rule's on every finding of that rule."""

from __future__ import annotations

import re

# Names only a Nomos deployment has: its agent prompt file, its MCP tools and its tables. A fix
# that names one is written for Nomos; elsewhere (aider, Claude Code) it says what to look for.
NOMOS_NAMES = {
    "SOUL.md": r"\bSOUL\.md\b",
    "run tool": r"`run[` ]|\brun \{",
    "list_lxcs": r"\blist_lxcs\b",
    "complete_task": r"\bcomplete_task\b",
    "propose_plan": r"\bpropose_plan\b",
    "request_execution": r"\brequest_execution\b",
    "upsert_knowledge": r"\bupsert_knowledge\b",
    "http_get": r"\bhttp_get\b",
    "Nomos MCP tools": r"\bMCP tool\b",
    "Nomos plans": r"\bnomos_plan\w*|\bpending_approval\b",
}
_PATTERN = re.compile("|".join(f"(?P<n{i}>{p})" for i, p in enumerate(NOMOS_NAMES.values())))
_LABELS = list(NOMOS_NAMES)


def nomos_names(fix: str) -> list[str]:
    """The Nomos-only names `fix` relies on, in NOMOS_NAMES order (empty for a general fix)."""
    if not fix:
        return []
    found = {int(name[1:]) for match in _PATTERN.finditer(fix) for name, value in match.groupdict().items() if value}
    return [_LABELS[i] for i in sorted(found)]
