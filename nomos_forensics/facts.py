"""Per-session facts the series and the comparison count: when the session was created, its
model, its size and which signatures fired. A card is reduced to these once, as it is made."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .card import Card
from .unexplained import Reading, Signature

UNKNOWN = "(unknown)"  # a NULL model, or a created_at Python cannot hold


@dataclass(frozen=True, slots=True)
class SessionFacts:
    created_at: datetime | None
    model: str
    messages: int
    fired: frozenset[str]  # names of the rules with at least one finding
    errored: bool  # a rule raised on this session
    group: str | None = None  # an unexplained failure's group (unexplained.Signature.key), else None

    @classmethod
    def of(cls, card: Card) -> "SessionFacts":
        info = card.session.info
        return cls(
            created_at=info.created_at,
            model=info.model or UNKNOWN,
            messages=len(card.session.messages),
            fired=frozenset(f.rule for f in card.findings),
            errored=bool(card.errors),
            group=card.unexplained.signature.key if isinstance(card.unexplained, Reading) else None,
        )

    @classmethod
    def of_json(cls, card: dict) -> "SessionFacts":
        """The same facts from a card as `scan --format jsonl` prints it (a shard's line)."""
        session, stats = card.get("session") or {}, card.get("stats") or {}
        try:
            created = datetime.fromisoformat(session["created_at"]) if session.get("created_at") else None
        except (TypeError, ValueError):
            created = None
        return cls(
            created_at=created,
            model=session.get("model") or UNKNOWN,
            messages=int(stats.get("messages") or 0),
            fired=frozenset(f["rule"] for f in card.get("findings") or ()),
            errored=bool(card.get("errors")),
            group=_group_key(card.get("unexplained")),
        )


def _group_key(unexplained) -> str | None:
    """The Signature.key a card line's `unexplained` object names (None when it names none)."""
    if not isinstance(unexplained, dict) or not isinstance(unexplained.get("ending"), str):
        return None
    return Signature(str(unexplained["ending"]), str(unexplained.get("reply") or ""),
                     unexplained.get("tool") or None, unexplained.get("error") or None,
                     unexplained.get("chat") is True).key
