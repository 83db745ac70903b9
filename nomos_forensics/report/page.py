"""The report as one HTML file: the aggregates turned into tables (rendered here, so they read
with JavaScript off), chart data as escaped JSON, the session pages, and the inline assets
under a Content-Security-Policy that lets nothing load.

Message text is untrusted: Jinja escapes every value (autoescape), and every string also has
its control characters and bidirectional overrides made visible (render.neutralise) first.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from datetime import date, datetime, timedelta, timezone
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from ..card import Outcome
from ..render import card_fields, human_bytes, neutralise
from ..scan import ranked
from .collect import ReportSummary

PERIODS = ("day", "week", "month")
DAILY_UP_TO_DAYS = 62  # the chart's period, from the span the sessions cover: per day up to this,
WEEKLY_UP_TO_DAYS = 366  # per week up to this, per month beyond
COMBINED_UP_TO = 4  # signatures drawn on one chart; more get a small chart each (small multiples)
MAX_MODELS = 12  # models in the per-model chart (the table lists them all)
PREVIEW_LINES = (5, 3)  # first and last lines of a long tool output shown collapsed
PREVIEW_CHARS = (400, 200)  # ... and at most this many characters of each
SHORT_OUTPUT = 1200  # an output up to this long, in few lines, is shown whole
FINDINGS_SHOWN = 10  # findings of one rule listed on a session page (the rest are counted)
TOP_GROUPS = 5  # unexplained-failure groups shown, each with its examples' pages


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (95% by default), as proportions."""
    if n <= 0:
        return 0.0, 0.0
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def script_json(value: Any) -> str:
    """JSON safe inside <script type="application/json">: no `<`, `>` or `&` (so no `</script>`
    or `<!--`), and no U+2028/U+2029 (line terminators for older JavaScript parsers)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def bucket_of(day: str, unit: str) -> str:
    """The chart bucket of an ISO day: the day itself, the Monday of its week, or the first of its month."""
    if unit == "day":
        return day
    d = date.fromisoformat(day)
    if unit == "month":
        return d.replace(day=1).isoformat()
    return (d - timedelta(days=d.weekday())).isoformat()


def chart_period(first: str | None, last: str | None) -> str:
    """day, week or month: whichever keeps the chart between a few and a few dozen points over
    the span the sessions cover (first and last ISO day)."""
    if first is None or last is None:
        return "day"
    span = (date.fromisoformat(last) - date.fromisoformat(first)).days
    return "day" if span <= DAILY_UP_TO_DAYS else "week" if span <= WEEKLY_UP_TO_DAYS else "month"


def _next_bucket(bucket: str, unit: str) -> str:
    d = date.fromisoformat(bucket)
    if unit == "day":
        return (d + timedelta(days=1)).isoformat()
    if unit == "week":
        return (d + timedelta(days=7)).isoformat()
    return (d.replace(year=d.year + 1, month=1) if d.month == 12 else d.replace(month=d.month + 1)).isoformat()


def _epoch(day: str) -> int:
    return int(datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp())


def _pct(n: int, of: int) -> str:
    return f"{100 * n / of:.1f}%" if of else "0.0%"


def _static(name: str) -> str:
    return resources.files("nomos_forensics.report").joinpath("static", name).read_text(encoding="utf-8")


def _csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return neutralise(value)
    return value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("nomos_forensics.report", "templates"),
    autoescape=True, finalize=_finalize, trim_blocks=True, lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
_ENV.filters["bytes"] = human_bytes
_ENV.filters["symbol"] = lambda outcome: Outcome.SYMBOL.get(outcome, "")
_ENV.filters["breakable"] = lambda text: Markup("-<wbr>").join(Markup.escape(neutralise(part)) for part in text.split("-"))


def time_series(s: ReportSummary, rules: list[str], period: str | None = None) -> dict[str, Any]:
    """Each signature's share of sessions per day, week or month (`period`; None: chosen from the
    span, `chart_period`), on a real time axis: every period from the first to the last, those
    without sessions included with no rate (the chart leaves a gap there, never a line across).
    Each rate has its 95% Wilson interval and the number of sessions it is out of."""
    days = sorted(s.days)
    unit = period or chart_period(days[0] if days else None, days[-1] if days else None)
    sessions: dict[str, int] = {}
    hits: dict[tuple[str, str], int] = {}
    for day in days:
        b = bucket_of(day, unit)
        sessions[b] = sessions.get(b, 0) + s.days[day]
    for (day, rule), n in s.day_rules.items():
        key = (bucket_of(day, unit), rule)
        hits[key] = hits.get(key, 0) + n
    buckets: list[str] = []
    if sessions:
        bucket, last = min(sessions), max(sessions)
        while bucket <= last:
            buckets.append(bucket)
            bucket = _next_bucket(bucket, unit)
    counts = [sessions.get(b, 0) for b in buckets]
    series = []
    for rule in rules:
        ks = [hits.get((b, rule), 0) for b in buckets]
        bands = [wilson(k, n) if n else None for k, n in zip(ks, counts)]
        series.append({
            "rule": rule, "sessions": ks,
            "rates": [round(100 * k / n, 2) if n else None for k, n in zip(ks, counts)],
            "lo": [round(100 * b[0], 2) if b else None for b in bands],
            "hi": [round(100 * b[1], 2) if b else None for b in bands],
        })
    return {
        "unit": unit, "chosen": period is None, "buckets": buckets, "x": [_epoch(b) for b in buckets],
        "sessions": counts, "empty": sum(1 for n in counts if not n), "series": series,
        "multiples": len(rules) > COMBINED_UP_TO,
    }


def model_rates(s: ReportSummary, rules: list[str]) -> list[dict[str, Any]]:
    """Per model: sessions, and each signature's rate with its Wilson 95% interval (in %)."""
    out = []
    for model, counts in sorted(s.models.items(), key=lambda kv: (-kv[1]["sessions"], kv[0])):
        n = counts["sessions"]
        cells = []
        for rule in rules:
            lo, hi = wilson(counts[rule], n)
            cells.append({"rule": rule, "k": counts[rule], "rate": round(100 * counts[rule] / n, 2) if n else 0.0,
                          "lo": round(100 * lo, 2), "hi": round(100 * hi, 2)})
        out.append({"model": model, "sessions": n, "cells": cells})
    return out


def overview(s: ReportSummary, filters: dict[str, Any], period: str | None = None,
             notice: str | None = None) -> dict[str, Any]:
    """Everything the overview shows, as plain data."""
    rules = [rule for rule, _ in ranked(s.by_rule)]
    series = time_series(s, rules, period)
    unit = series["unit"]
    models = model_rates(s, rules)
    outcomes = [(Outcome.SYMBOL[o], o, s.outcomes[o], _pct(s.outcomes[o], s.sessions))
                for o in Outcome.ALL]
    worst = []
    for row, card in [*s.worst_sessions(), *((row, None) for row in s.bucket_sessions())]:
        day = row["day"]
        worst.append({**row, "bucket": bucket_of(day, unit) if day else "", "card": card})
    saved = sorted(s.truncation.items(), key=lambda kv: (-kv[1][1], kv[0]))
    return {
        "filters": filters, "notice": notice,
        "period": (s.first[:10] if s.first else None, s.last[:10] if s.last else None),
        "sessions": s.sessions, "messages": s.messages, "outcomes": outcomes,
        "blocker": s.by_severity["blocker"], "blocker_share": _pct(s.by_severity["blocker"], s.sessions),
        "with_findings": s.sessions_with_findings, "with_findings_share": _pct(s.sessions_with_findings, s.sessions),
        "signatures": [{"rule": r, "sessions": s.by_rule[r], "rate": _pct(s.by_rule[r], s.sessions)} for r in rules],
        "series": series, "models": models,
        "tools": [{"name": n, "calls": c, "sessions": s.tool_sessions[n], "fanout": s.fanout.get(n, {})}
                  for n, c in ranked(s.tool_calls)[:15]],
        "fanout": [{"tool": t, **e} for t, e in sorted(s.fanout.items(), key=lambda kv: (-kv[1]["turns"], kv[0]))],
        "biggest": s.biggest, "truncation": saved, "truncate_total": sum(v[1] for _, v in saved),
        "truncate_count": sum(v[0] for _, v in saved), "rule_errors": ranked(s.rule_errors),
        "worst": worst, "severities": ["blocker", "friction", "cosmetic"],
        "outcome_names": list(Outcome.ALL),
        "model_names": sorted(s.models),
    }


def chart_data(view: dict[str, Any]) -> dict[str, Any]:
    """What the charts draw: the only JSON in the page."""
    shown = view["models"][:MAX_MODELS]
    return {
        "time": view["series"],
        "models": {
            "rules": [sig["rule"] for sig in view["signatures"]],
            "models": [{"model": m["model"], "sessions": m["sessions"], "rates": [c["rate"] for c in m["cells"]],
                        "lo": [c["lo"] for c in m["cells"]], "hi": [c["hi"] for c in m["cells"]]} for m in shown],
        },
    }


def unexplained_view(s: ReportSummary, examples: dict[str, dict[str, Any]], top: int = TOP_GROUPS
                     ) -> dict[str, Any] | None:
    """The unexplained-failure groups the report shows: the scan's JSON of its `top` groups, each
    example with its card when it was reviewed again (None: no page for it)."""
    if s.unexplained is None:
        return None
    data = s.unexplained.to_json(top=top)
    for group in data["groups"]:
        group["examples"] = [{**e, "card": examples.get(e["id"]),
                              "error_message": (e.get("error") or {}).get("message")} for e in group["examples"]]
    return data


def session_view(card: dict[str, Any], messages: list[dict[str, Any]] | None,
                 marks: dict[int, list[str]] | None = None) -> dict[str, Any]:
    """A session page: the card, and its transcript with the messages findings (and `marks`,
    message id -> labels) point at."""
    hits: dict[int, list[str]] = {key: list(labels) for key, labels in (marks or {}).items()}
    for finding in card["findings"]:
        for evidence in finding["evidence"]:
            if evidence.get("message_id") is not None:
                hits.setdefault(evidence["message_id"], [])
                if finding["rule"] not in hits[evidence["message_id"]]:
                    hits[evidence["message_id"]].append(finding["rule"])
    transcript = None
    if messages is not None:
        transcript = [m if "gap" in m else {**m, "hits": hits.get(m["id"], []), "preview": _preview(m.get("output"))}
                      for m in messages]
    kept = {m["id"] for m in messages or () if "id" in m}
    return {"card": card, "id": card["session"]["id"], "transcript": transcript, "groups": finding_groups(card),
            "kept": kept, "fields": card_fields(card)}


def finding_groups(card: dict[str, Any], shown: int = FINDINGS_SHOWN) -> list[dict[str, Any]]:
    """The card's findings by rule, worst first: root cause and fix once, then each finding's
    message and evidence (the first `shown`; how many more)."""
    groups: dict[str, dict[str, Any]] = {}
    for finding in card["findings"]:
        group = groups.setdefault(finding["rule"], {
            "rule": finding["rule"], "code": finding["code"], "severity": finding["severity"],
            "root_cause": finding["root_cause"], "fixes": [], "entries": [], "more": 0,
        })
        if finding["fix"] and finding["fix"] not in group["fixes"]:
            group["fixes"].append(finding["fix"])
        if len(group["entries"]) < shown:
            group["entries"].append(finding)
        else:
            group["more"] += 1
    rank = {"blocker": 3, "friction": 2, "cosmetic": 1}
    return sorted(groups.values(), key=lambda g: -rank.get(g["severity"], 0))


def _preview(output: dict[str, Any] | None) -> dict[str, Any] | None:
    """A long tool output collapsed: its first and last lines, and whether there is more."""
    if not output:
        return None
    head_lines = output["head"].splitlines()
    tail_lines = (output["tail"] or "").splitlines()
    first, last = PREVIEW_LINES
    short = output["tail"] is None and len(head_lines) <= first + last and output["chars"] <= SHORT_OUTPUT
    if short:
        return {"short": True, "first": output["head"], "last": "", "chars": output["chars"]}
    if output["tail"] is None and len(head_lines) > first + last:
        tail_lines, head_lines = head_lines[-last:], head_lines[:-last]
    start, end = "\n".join(head_lines[:first]), "\n".join(tail_lines[-last:])
    cut_start, cut_end = PREVIEW_CHARS
    if len(start) > cut_start:
        start = start[:cut_start] + " …"
    if len(end) > cut_end:
        end = "… " + end[-cut_end:]
    return {"short": False, "first": start, "last": end, "chars": output["chars"]}


def render_page(template: str, **context: Any) -> str:
    """One self-contained page: inline uPlot, our script and style, and a CSP that loads nothing."""
    scripts = [_static("uPlot.iife.min.js"), _static("report.js")]
    csp = "; ".join([
        "default-src 'none'", "script-src " + " ".join(_csp_hash(s) for s in scripts),
        "style-src 'unsafe-inline'", "img-src data:", "font-src 'none'", "connect-src 'none'",
        "base-uri 'none'", "form-action 'none'",
    ])
    return _ENV.get_template(template).render(
        csp=Markup(csp), scripts=[Markup(s) for s in scripts],  # our own text: no quote to escape
        style=Markup(_static("uPlot.min.css") + "\n" + _static("report.css")), **context,
    )


def report_html(s: ReportSummary, transcripts: dict[str, list[dict[str, Any]]], filters: dict[str, Any],
                generated: str, notice: str | None = None, period: str | None = None,
                examples: dict[str, dict[str, Any]] | None = None) -> str:
    view = overview(s, filters, period, notice)
    view["unexplained"] = unexplained_view(s, examples or {})
    sessions = [session_view(w["card"], transcripts.get(w["id"])) for w in view["worst"] if w["card"] is not None]
    shown = {w["id"] for w in view["worst"] if w["card"] is not None}
    for group in (view["unexplained"] or {}).get("groups", ()):
        for example in group["examples"]:
            card = example["card"]
            if card is not None and example["id"] not in shown:
                shown.add(example["id"])
                marks = {m: [f"unexplained {group['id']}"] for m in (example["message"], example["error_message"])
                         if m is not None}
                sessions.append(session_view(card, transcripts.get(example["id"]), marks))
    return render_page("report.html.j2", view=view, sessions=sessions, generated=generated,
                       data=Markup(script_json(chart_data(view))), single=False)


def session_html(card: dict[str, Any], messages: list[dict[str, Any]], generated: str) -> str:
    """`review SESSION --format html`: one session's page, open."""
    return render_page("session_page.html.j2", sessions=[session_view(card, messages)], generated=generated,
                       data=Markup(script_json({})), single=True)
