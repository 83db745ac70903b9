"""SQuARe (NAVER, ACL 2023): Korean sensitive questions and the replies HyperCLOVA wrote to them, each reply
judged by three crowd workers (acceptable or not, and why). Files: `data/SQuARe/response_*.json` (a JSON
list of {question, question_en, response, response_en, acceptable?, category, question_category}) or the
same with `raw_annotations` under `data/SQuARe/with_raw_annotations/`. In the public snapshot only the
out-of-domain test split (480 replies) is under 4 MiB.

One session per item: the question is the user message, the reply the assistant message (Korean; the
English translations the dataset ships are not used). Labels go on the assistant message, verbatim:
`acceptable` (1 acceptable / 0 non-acceptable, the majority vote), `category` (the reasons: acceptable
"indirect", "objective", "ethically-aware", "inclusive-opinions", "nonpredicitve" [sic], "etc";
non-acceptable "contentious", "predictive", "unethical", "etc"), `question_category`, and, when the file
has them, the three workers' votes `votes` ([acceptable?, reasons] per worker). "indirect" replies decline
to answer or to take a side; none of the labels is a refusal label as such.

Times: none in the data: 2023-05-01T00:00Z plus 5 s per message. Keys: `<file stem>:<index>`.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath

START = datetime(2023, 5, 1, tzinfo=timezone.utc)


def _votes(raw):
    if not isinstance(raw, dict):
        return None
    acc = {v.get("workerID"): v.get("acceptable?") for v in raw.get("Q2: Acceptable or Non-acceptable") or []}
    why = {}
    for key in ("Q3-1: Reasons behind the non-acceptability", "Q3-2: Reasons behind the acceptability"):
        for v in raw.get(key) or []:
            why.setdefault(v.get("workerID"), []).extend(v.get("category") or [])
    return [[acc[w], why.get(w, [])] for w in acc]


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        stem = PurePosixPath(path).stem
        for i, item in enumerate(json.loads(text)):
            at = START + timedelta(minutes=i)
            external = {"acceptable": item.get("acceptable?"), "category": item.get("category"),
                        "question_category": item.get("question_category"), "by": "human (3 crowd workers, majority)",
                        "field": f"{path}: acceptable?, category, question_category"}
            votes = _votes(item.get("raw_annotations"))
            if votes is not None:
                external["votes"] = votes
                external["field"] += ", raw_annotations"
            yield {
                "key": f"{stem}:{i:04d}",
                "path": path,
                "session": {"title": (item.get("question") or "")[:80] or None, "status": None, "goal": None,
                            "model": "HyperCLOVA", "created_at": at},
                "messages": [
                    {"role": "user", "content": {"text": item.get("question") or ""}, "created_at": at},
                    {"role": "assistant", "content": {"text": item.get("response") or "", "tool_calls": [],
                                                      "finish_reason": "stop"},
                     "created_at": at + timedelta(seconds=5), "external": external},
                ],
            }
