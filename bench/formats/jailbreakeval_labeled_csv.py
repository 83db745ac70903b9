"""Labelled jailbreak attempts shipped with JailbreakEval (ThuCCSLab/JailbreakEval, Ran et al. 2024)
to measure evaluators against human annotation.

Files: `data/<name>.csv` with columns `question` (the harmful question), `answer` (the model's reply)
and `label` (the manual annotation: 1 = a successful jailbreak, 0 = not), plus, in JAILJUDGEmini,
`hazard_cate_llamaguard3`, `prompt_complexity_cate` and `language`. JAILJUDGEmini is a 1,000-item
sample of the JAILJUDGE test set (human-annotated, usail-hkust); Safe-RLHFmini is a 4,000-item sample
of PKU-SafeRLHF (Alpaca-7B replies with human safety labels). `data/example.csv` and `tiny.csv` are
left out (example.csv is adapted from the JailbreakBench artifacts, another family).

Each row is one session [user question, assistant reply]; the label columns go on the assistant
message as `external`. `max_replies` (default 1500) keeps an even deterministic sample over the rows
of each file in file order. Fixed start plus 5 s per message.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

START = datetime(2024, 6, 1, tzinfo=timezone.utc)
LABELS = ("label", "hazard_cate_llamaguard3", "prompt_complexity_cate", "language")


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        name = path.rsplit("/", 1)[-1].removesuffix(".csv")
        rows = list(enumerate(csv.DictReader(io.StringIO(text))))
        for n, row in evenly(rows, int(source.get("max_replies", 1500))):
            labels = {k: (int(row[k]) if k == "label" else row[k]) for k in LABELS if k in row}
            yield {
                "key": f"{name}:{n:04d}",
                "path": path,
                "session": {"title": f"{name} #{n}", "model": None, "created_at": START, "status": None, "goal": None},
                "messages": [
                    {"role": "user", "content": {"text": row.get("question") or ""}, "created_at": START},
                    {"role": "assistant", "content": {"text": row.get("answer") or "", "tool_calls": [],
                                                      "finish_reason": "stop"},
                     "created_at": START + timedelta(seconds=5),
                     "external": {**labels, "by": "human (label); the other columns are item metadata",
                                  "field": f"{path}:row {n}"}},
                ],
            }
