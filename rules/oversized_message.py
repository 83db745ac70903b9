"""oversized-message: a message stored far larger than any UI or model needs."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import Evidence, Finding, Option, Rule, Severity, hookimpl, human_bytes


class OversizedMessage(Rule):
    """A message whose stored content is larger than 50 KB.

    Detects: a message whose logical size, the byte length of its JSON content as text
    (`octet_length(content::text)`), exceeds `max_kb` KiB (default 50 = 51,200 bytes). Both the
    logical and the on-disk size (`pg_column_size`, after TOAST compression) are reported. The
    logical size is computed in SQL for every message whose uncompressed jsonb size is at
    least half the limit (JSON text is never less than half its jsonb size), so the check is
    exact however well a value compresses, and cheap for the small messages that are most.
    Root cause: raw tool results are persisted verbatim.
    Fix: truncate tool outputs before persisting them in `store.go` (keep head and tail, store the full blob elsewhere).

    """

    code = "NF006"
    name = "oversized-message"
    severity = Severity.COSMETIC
    config = {"max_kb": Option(50, "the size limit in KiB of a message's content as JSON text", kind=float,
                               minimum=0.001)}

    @property
    def limit_bytes(self) -> int:
        return int(self.options["max_kb"] * 1024)

    def logical_size_floor(self) -> int:
        return max(1, self.limit_bytes // 2)

    def check(self, session, ctx) -> Iterator[Finding]:
        limit = self.limit_bytes
        big = [
            m for m in session.messages
            if (m.logical_bytes or 0) > limit or (m.logical_bytes is None and (m.disk_bytes or 0) > limit)
        ]
        if not big:
            return
        big.sort(key=lambda m: -(m.logical_bytes or m.disk_bytes or 0))
        evidence = []
        for m in big:
            what = m.tool_name or (m.tool_calls[0].display_name if m.tool_calls else None)
            evidence.append(Evidence(
                m.id, m.turn,
                f"{m.role}{' ' + what if what else ''}: {human_bytes(m.logical_bytes)} logical, "
                f"{human_bytes(m.disk_bytes)} on disk",
            ))
        largest = big[0]
        yield self.finding(
            f"{len(big)} message{'s' if len(big) > 1 else ''} over {self.options['max_kb']:g} KB "
            f"(largest {human_bytes(largest.logical_bytes or largest.disk_bytes)} logical, "
            f"{human_bytes(largest.disk_bytes)} on disk)",
            evidence,
            data={"messages": [
                {"message_id": m.id, "logical_bytes": m.logical_bytes, "disk_bytes": m.disk_bytes}
                for m in big
            ]},
        )


@hookimpl
def nomos_forensics_rules():
    return [OversizedMessage]
