"""Before/after comparison of every signature's session rate: intervals, p-values, a
model-adjusted (Mantel–Haenszel) change, Benjamini–Hochberg across the signatures, and a
verdict per signature. Built from one series keyed by (period, model); no database here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from . import stats
from .facts import SessionFacts
from .trends import ERRORED, GROUP, MESSAGES, SESSIONS, Series
from .unexplained import Signature

SCHEMA_VERSION = 1
BEFORE, AFTER = "before", "after"
IMPROVED, REGRESSED, NO_CHANGE, TOO_FEW = "improved", "regressed", "no significant change", "too few sessions"
# a period's `status`: enough sessions for rates, fewer than --min-sessions, or none at all
ENOUGH, FEW, NONE = "ok", "too few", "no sessions"
VERDICTS = (IMPROVED, REGRESSED, NO_CHANGE, TOO_FEW)
DEFAULT_MIN_SESSIONS = 30
GROUPS_COMPARED = 20  # unexplained-failure groups tested, the largest over both periods
MIN_GROUP_SESSIONS = 5  # ... each with at least this many sessions in the two periods together
GREW, SHRANK = "grew", "shrank"
FDR = 0.05  # Benjamini–Hochberg false-discovery rate across the signatures compared


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else _utc(moment).isoformat()


@dataclass(frozen=True)
class Window:
    """Sessions created in [start, end); None is open-ended."""

    start: datetime | None = None
    end: datetime | None = None

    def contains(self, moment: datetime) -> bool:
        moment = _utc(moment)
        return (self.start is None or moment >= _utc(self.start)) and (self.end is None or moment < _utc(self.end))

    def overlaps(self, other: "Window") -> bool:
        far_past = datetime.min.replace(tzinfo=timezone.utc)
        far_future = datetime.max.replace(tzinfo=timezone.utc)
        lo = max(_utc(self.start) if self.start else far_past, _utc(other.start) if other.start else far_past)
        hi = min(_utc(self.end) if self.end else far_future, _utc(other.end) if other.end else far_future)
        return lo < hi

    def describe(self) -> str:
        def show(moment: datetime | None, open_text: str) -> str:
            if moment is None:
                return open_text
            moment = _utc(moment)
            return moment.strftime("%Y-%m-%d" if moment.time() == moment.min.time() else "%Y-%m-%d %H:%M")
        return f"{show(self.start, 'start')} .. {show(self.end, 'now')}"


@dataclass(frozen=True)
class Periods:
    """The bucketing of `compare`: (period, model) for a session in one of the two windows."""

    before: Window
    after: Window

    dimensions = ("period", "model")

    def key(self, facts: SessionFacts) -> tuple[str, str] | None:
        if facts.created_at is None:
            return None
        if self.before.contains(facts.created_at):
            return BEFORE, facts.model
        if self.after.contains(facts.created_at):
            return AFTER, facts.model
        return None

    def bounds(self) -> tuple[datetime | None, datetime | None]:
        """The one span a single scan reads to cover both windows."""
        starts, ends = [self.before.start, self.after.start], [self.before.end, self.after.end]
        since = None if None in starts else min(starts, key=_utc)
        until = None if None in ends else max(ends, key=_utc)
        return since, until


def _rate(n: int, of: int) -> float:
    return n / of if of else 0.0


def _r(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class Comparison:
    """The result: JSON-ready dict in `data`, plus what the regression gate needs."""

    data: dict[str, Any]

    @property
    def signatures(self) -> list[dict[str, Any]]:
        return self.data["signatures"]

    def regressed(self, rules: list[str] | None = None) -> list[str]:
        return [s["rule"] for s in self.signatures
                if s["verdict"] == REGRESSED and (rules is None or s["rule"] in rules)]


def compare(series: Series, *, min_sessions: int = DEFAULT_MIN_SESSIONS, fdr: float = FDR,
            split: dict[str, Any] | None = None) -> Comparison:
    """Compare the before and after periods of `series` (keyed (period, model)) per signature."""
    periods: Periods = series.bucketer
    models = sorted({model for _, model in series.counts})
    cell = {(period, model): series.counts.get((period, model)) for period in (BEFORE, AFTER) for model in models}

    def total(period: str, name: str) -> int:
        return sum(c[name] for (p, _), c in cell.items() if p == period and c is not None)

    n1, n2 = total(BEFORE, SESSIONS), total(AFTER, SESSIONS)
    too_few = min(n1, n2) < min_sessions
    rows = []
    for rule in series.reported_rules:
        rows.append(_signature(rule, models, cell, n1, n2))
    tested = [row for row in rows if not too_few]
    q_values = stats.benjamini_hochberg([row["_p"] for row in tested]) if tested else []
    for row, q in zip(tested, q_values):
        row["q_value"] = _r(q, 8)
    for row in rows:
        row["verdict"], row["reason"] = _verdict(row, too_few, n1, n2, min_sessions, fdr)
        del row["_p"], row["_direction"]
    data = {
        "schema_version": SCHEMA_VERSION,
        "split": split,
        "before": {"from": iso(periods.before.start), "until": iso(periods.before.end),
                   "sessions": n1, "messages": total(BEFORE, MESSAGES), "rule_errors": total(BEFORE, ERRORED),
                   "status": period_status(n1, min_sessions)},
        "after": {"from": iso(periods.after.start), "until": iso(periods.after.end),
                  "sessions": n2, "messages": total(AFTER, MESSAGES), "rule_errors": total(AFTER, ERRORED),
                  "status": period_status(n2, min_sessions)},
        "method": {
            "interval": "Newcombe hybrid score (Wilson), 95%",
            "test": "Fisher's exact, two-sided",
            "adjusted_for": "model",
            "adjusted_test": "Cochran–Mantel–Haenszel, continuity-corrected; Mantel–Haenszel risk difference "
                             "with a Greenland–Robins 95% interval",
            "false_discovery_rate": fdr,
            "min_sessions": min_sessions,
        },
        "models": [
            {"model": model,
             BEFORE: _share(cell[(BEFORE, model)], n1),
             AFTER: _share(cell[(AFTER, model)], n2)}
            for model in sorted(models, key=lambda m: (-(_n(cell[(BEFORE, m)]) + _n(cell[(AFTER, m)])), m))
        ],
        "signatures": rows,
    }
    data["unexplained_groups"] = _groups(series, models, cell, n1, n2, too_few, min_sessions, fdr)
    data["regressions"] = [row["rule"] for row in rows if row["verdict"] == REGRESSED]
    data["improvements"] = [row["rule"] for row in rows if row["verdict"] == IMPROVED]
    return Comparison(data)


def _groups(series: Series, models: list[str], cell: dict, n1: int, n2: int, too_few: bool, min_sessions: int,
            fdr: float) -> list[dict[str, Any]]:
    """The largest unexplained-failure groups, each tested as a signature is (its own
    Benjamini–Hochberg family): `grew` or `shrank` when its share of the sessions changed."""
    totals = {key: sum(c[key] for c in cell.values() if c is not None) for key in series.reported_groups}
    chosen = sorted((k for k, n in totals.items() if n >= MIN_GROUP_SESSIONS), key=lambda k: (-totals[k], k))
    rows = [_signature(key, models, cell, n1, n2) for key in chosen[:GROUPS_COMPARED]]
    if rows and not too_few:
        for row, q in zip(rows, stats.benjamini_hochberg([row["_p"] for row in rows])):
            row["q_value"] = _r(q, 8)
    out = []
    for row in rows:
        verdict, reason = _verdict(row, too_few, n1, n2, min_sessions, fdr)
        signature = Signature.from_key(row.pop("rule")[len(GROUP):])
        del row["_p"], row["_direction"]
        out.append({"group": signature.id, "description": signature.describe(),
                    "verdict": {REGRESSED: GREW, IMPROVED: SHRANK}.get(verdict, verdict), "reason": reason, **row})
    return out


def period_status(sessions: int, min_sessions: int) -> str:
    """`ok`, `too few` (under --min-sessions: counts, but no rates worth reading) or `no sessions`."""
    return NONE if sessions == 0 else FEW if sessions < min_sessions else ENOUGH


def _n(counts) -> int:
    return counts[SESSIONS] if counts is not None else 0


def _share(counts, of: int) -> dict[str, Any]:
    n = _n(counts)
    return {"sessions": n, "share": _r(_rate(n, of))}


def _signature(rule: str, models: list[str], cell: dict, n1: int, n2: int) -> dict[str, Any]:
    a = sum(c[rule] for (p, _), c in cell.items() if p == BEFORE and c is not None)
    c2 = sum(c[rule] for (p, _), c in cell.items() if p == AFTER and c is not None)
    p1, p2 = _rate(a, n1), _rate(c2, n2)
    low, high = stats.newcombe(c2, n2, a, n1) if n1 and n2 else (None, None)
    fisher = stats.fisher_exact(c2, n2 - c2, a, n1 - a)
    strata, by_model = [], []
    for model in models:
        before, after = cell[(BEFORE, model)], cell[(AFTER, model)]
        mb, ma = _n(before), _n(after)
        xb, xa = (before[rule] if before is not None else 0), (after[rule] if after is not None else 0)
        strata.append(stats.Stratum(a=xa, n1=ma, c=xb, n0=mb))
        if xb or xa:
            by_model.append({
                "model": model,
                BEFORE: {"sessions": xb, "of": mb, "rate": _r(_rate(xb, mb))},
                AFTER: {"sessions": xa, "of": ma, "rate": _r(_rate(xa, ma))},
                "change": _r(_rate(xa, ma) - _rate(xb, mb)) if ma and mb else None,
            })
    mh = stats.mantel_haenszel(strata)
    adjusted = len(models) > 1  # with one model the crude test is the within-model test
    direction = (mh.risk_difference if adjusted else p2 - p1) or 0.0
    return {
        "rule": rule,
        BEFORE: {"sessions": a, "rate": _r(p1)},
        AFTER: {"sessions": c2, "rate": _r(p2)},
        "change": _r(p2 - p1),
        "relative_change": _r((p2 - p1) / p1) if p1 else None,
        "interval": [_r(low), _r(high)] if low is not None else None,
        "p_value": _r(fisher, 8),
        "adjusted": {
            "change": _r(mh.risk_difference),
            "interval": [_r(mh.interval[0]), _r(mh.interval[1])] if mh.interval else None,
            "odds_ratio": _r(mh.odds_ratio),
            "p_value": _r(mh.p_value, 8),
            "models": mh.strata,
        },
        "q_value": None,
        "by_model": by_model,
        "_p": mh.p_value if adjusted else fisher,
        "_direction": direction,
        "_adjusted": adjusted,
    }


def _verdict(row: dict[str, Any], too_few: bool, n1: int, n2: int, min_sessions: int, fdr: float) -> tuple[str, str]:
    adjusted = row.pop("_adjusted")
    if too_few:
        return TOO_FEW, f"{n1} sessions before, {n2} after; at least {min_sessions} in each are needed"
    if adjusted and row["adjusted"]["models"] == 0:
        return NO_CHANGE, "no model has sessions in both periods: a change cannot be told from the model mix"
    test = f"model-adjusted CMH over {row['adjusted']['models']} models" if adjusted else "Fisher's exact"
    if row["q_value"] < fdr and row["_direction"] != 0:
        verdict = IMPROVED if row["_direction"] < 0 else REGRESSED
        return verdict, f"{test}: p {row['_p']:.2g}, q {row['q_value']:.2g} < {fdr:g}"
    return NO_CHANGE, f"{test}: p {row['_p']:.2g}, q {row['q_value']:.2g} ≥ {fdr:g}"
