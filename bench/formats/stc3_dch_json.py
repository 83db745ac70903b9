"""NTCIR-14 STC-3 DCH-1: real customer-helpdesk dialogues crawled from Weibo (sakai-lab/stc3-dataset),
Chinese originals (`*_cn.json`) and manual English translations (`*_en.json`).

A file is a list of dialogues `{"id", "turns": [{"sender": "customer"|"helpdesk", "utterances": [...]}],
"annotations"?}`; `annotations` (training files only) is one entry per annotator (19) with
`quality` {"A": task accomplishment, "S": customer satisfaction, "E": dialogue effectiveness}, each
-2..2, and `nugget` (one nugget type per turn). Customer turns are user rows, helpdesk turns
assistant rows (human agents of companies), utterances joined by newlines (an utterance may be an
empty string: the crawl dropped emoji and pictures). When annotations are present the session's
external carries the per-annotator scores, their means and `outcome` from the mean A-score
(> 0 success, < 0 failure, 0 partial). No timestamps: a fixed start plus 5 s a message.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath

START = datetime(2018, 1, 1, tzinfo=timezone.utc)


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        lang = "en" if PurePosixPath(path).stem.endswith("_en") else "zh"
        for dialogue in json.loads(text):
            rows = []
            for turn in dialogue.get("turns") or []:
                said = "\n".join(u for u in turn.get("utterances") or [] if u is not None)
                if turn.get("sender") == "customer":
                    rows.append({"role": "user", "content": {"text": said}})
                else:
                    rows.append({"role": "assistant", "content": {"text": said, "tool_calls": [],
                                                                  "finish_reason": "stop"}})
            for i, r in enumerate(rows):
                r["created_at"] = START + timedelta(seconds=5 * (i + 1))
            item = {
                "key": f"{lang}:{dialogue.get('id')}",
                "path": path,
                "session": {"title": None, "status": None, "goal": None, "model": None, "created_at": START},
                "messages": rows,
            }
            notes = dialogue.get("annotations") or []
            if notes:
                scores = {k: [n.get("quality", {}).get(k) for n in notes] for k in ("A", "S", "E")}
                means = {k: sum(v for v in vs if v is not None) / max(1, sum(v is not None for v in vs))
                         for k, vs in scores.items()}
                item["external"] = {"outcome": "success" if means["A"] > 0 else "failure" if means["A"] < 0 else "partial",
                                    "mean_A": means["A"], "mean_S": means["S"], "mean_E": means["E"],
                                    "quality": scores, "nugget": [n.get("nugget") for n in notes],
                                    "field": "annotations[].quality (A accomplishment, S satisfaction, E effectiveness; -2..2)",
                                    "by": "human"}
            yield item
