"""Series buckets in memory: labels, parsing --by, merging partitions, CSV."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

import pytest

from nomos_forensics.facts import UNKNOWN, SessionFacts
from nomos_forensics.trends import Series, TimeBuckets, bucket_label, parse_by


def facts(when, model="gemini-2.5-flash", fired=()):
    return SessionFacts(when, model, 4, frozenset(fired), False)


def test_labels_are_utc_and_iso_weeks():
    late = datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=5)))  # 2025-12-31 20:30 UTC
    assert bucket_label("day", facts(late)) == "2025-12-31"
    assert bucket_label("month", facts(late)) == "2025-12"
    assert bucket_label("week", facts(late)) == "2026-W01"  # ISO week of Wednesday 31 Dec 2025
    assert bucket_label("week", facts(None)) == UNKNOWN
    assert bucket_label("model", facts(late, model=UNKNOWN)) == UNKNOWN


@pytest.mark.parametrize("value,expected", [("week", ("week",)), (" Week , model ", ("week", "model")),
                                            ("model,day", ("model", "day"))])
def test_parse_by(value, expected):
    assert parse_by(value) == expected


@pytest.mark.parametrize("value", ["", "hour", "week,week", "day,month"])
def test_parse_by_refuses(value):
    with pytest.raises(ValueError):
        parse_by(value)


def test_merged_partitions_equal_one_pass():
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    items = [facts(start + timedelta(hours=7 * i), model=("a", "b", "=cmd")[i % 3],
                   fired=("empty-response",) if i % 4 == 0 else ()) for i in range(200)]
    whole = Series(TimeBuckets(("week", "model")), rules=["empty-response", "cant-run"])
    for item in items:
        whole.add_facts(item)
    left, right = whole.empty(), whole.empty()
    for i, item in enumerate(items):
        (left if i % 2 else right).add_facts(item)
    left.merge(right)
    assert left.to_json() == whole.to_json()
    doc = whole.to_json()
    assert sum(b["sessions"] for b in doc["buckets"]) == 200
    assert sum(b["signatures"]["empty-response"]["sessions"] for b in doc["buckets"]) == 50
    assert all(b["signatures"]["cant-run"] == {"sessions": 0, "rate": 0.0} for b in doc["buckets"])
    rows = list(csv.DictReader(io.StringIO(whole.to_csv())))
    assert len(rows) == 2 * len(doc["buckets"])
    assert "'=cmd" in {row["model"] for row in rows}  # no spreadsheet formula from a model name
