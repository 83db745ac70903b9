"""`nomos-forensics report`: one offline HTML file made in the scan's single pass (collect),
with the worst sessions' tool outputs read afterwards for those sessions only (outputs), laid
out by Jinja templates with uPlot charts inline (page)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .collect import DEFAULT_LISTED, DEFAULT_TRANSCRIPTS, ReportSummary, message_entry, session_key, transcript_of
from .outputs import REVIEW_CUT, add_outputs
from .page import report_html, script_json, session_html, wilson

REVIEW_TEXT = 20_000  # characters of a message on one session's page (head and tail)
# messages on one session's page: a longer session shows its first and last REVIEW_EDGE and the
# messages around its findings' evidence, the rest as counted gaps
REVIEW_MESSAGES, REVIEW_EDGE = 2000, 800


def generated_at() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def session_page(db, conn, card) -> str:
    """One session's page (`review SESSION --format html`): its card and transcript (up to
    REVIEW_MESSAGES messages)."""
    messages = transcript_of(card, limit=REVIEW_MESSAGES, keep=REVIEW_TEXT, edge=REVIEW_EDGE)
    add_outputs(db, conn, {card.session.id: messages}, cut=REVIEW_CUT)
    return session_html(card.to_json(), messages, generated_at())


def report_page(db, conn, summary: ReportSummary, filters: dict[str, Any], notice: str | None = None,
                period: str | None = None, examples=()) -> str:
    """The report, once the pass is done: tool outputs of the carried transcripts, then the page
    (`notice`: a line for its header, such as what an empty selection missed; `period`: the
    chart's day, week or month, None to choose it from the span; `examples`: the cards of the
    unexplained-failure groups' example sessions, reviewed again after the pass)."""
    transcripts = summary.transcript_map()
    cards = {}
    for card in examples:
        cards[card.session.id] = card.to_json()
        transcripts.setdefault(card.session.id, transcript_of(card))
    add_outputs(db, conn, transcripts)
    return report_html(summary, transcripts, filters, generated_at(), notice, period, examples=cards)


__all__ = [
    "DEFAULT_LISTED", "DEFAULT_TRANSCRIPTS", "ReportSummary", "add_outputs", "generated_at", "message_entry",
    "report_html", "report_page", "script_json", "session_html", "session_key", "session_page", "transcript_of", "wilson",
]
