"""Tool outputs and call arguments for the transcripts the report carries.

The scan's pass never ships a tool output (large outputs stay on the server); the report needs
the head and tail of each, for its N worst sessions only. They are read once, after the pass,
by primary key, in batches (sql/queries/report_outputs.sql cuts them on the server): this is
the one read of `messages` besides the pass, and it touches only the messages the report shows.
"""

from __future__ import annotations

from typing import Any

BATCH = 2000  # message ids per query
REPORT_CUT = (400, 200, 400)  # characters of output head, output tail and arguments, in the report
REVIEW_CUT = (3000, 1500, 2000)  # ... and on one session's page


def add_outputs(db, conn, transcripts: dict[str, list[dict[str, Any]]], cut: tuple[int, int, int] = REPORT_CUT) -> None:
    """Fill in each message's `output` (chars, head, tail) and `arguments`, in place."""
    by_id = {m["id"]: m for messages in transcripts.values() for m in messages if "id" in m}
    ids = sorted(by_id)
    head, tail, arguments = cut
    for start in range(0, len(ids), BATCH):
        params = {"message_ids": ids[start:start + BATCH], "head": head, "tail": tail, "arguments": arguments}
        rows = db.query(conn, "report_outputs", params, purpose="reading tool outputs for the report's transcripts")
        for row in rows:
            message = by_id.get(int(row.id))
            if message is None:
                continue
            if row.output_head is not None:
                message["output"] = {"chars": row.output_chars, "head": row.output_head, "tail": row.output_tail}
            if row.arguments is not None:
                message["arguments"] = row.arguments
