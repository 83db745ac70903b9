"""MAIA-DQE: real customer-support chats with human quality, emotion and task-success annotations
(johndmendonca/MAIA-DQE; Mendonça et al., GEM 2023).

A file is a list of dialogues `{"id", "turns", "dialog"}`. `dialog` holds the annotators'
`"Task Sucess"` (sic; 1-5, was the customer's problem solved) and `"Dropped conversation"` (0/1).
A turn is one side's message as a list of sentences: `floor` `inbound` is the customer, whose own
words (German or Portuguese) are `text_src` and the English machine translation the agent read is
`text_mt`; `outbound` is the agent, who wrote English (`text_src`) that the customer read machine
-translated (`text_mt`). Sentence-level labels: `Emotion` (an index into Emotion/data/maia/labels.txt),
`Correctness`, `Templated`, `Engagement`; turn-level on agent turns: `Understanding`,
`Sensibleness`, `Politeness`, `IQ` (interaction quality 1-5).

Mapped as the customer saw the chat: user rows are the customer's `text_src`, assistant rows the
agent's `text_mt` (the agent's English original is kept in the row's `external.source_text_en`).
The same dialogue id in two files is mapped once (the first file listed wins). The date in the id
is the session's start; 5 s per message after it (the source has no times).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

# Emotion/data/maia/labels.txt, in order: the index the `Emotion` lists hold
EMOTIONS = ["empathy", "happiness", "neutral", "disappointment", "confusion", "frustration", "anger", "anxiety"]
DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")


def _label(i):
    return EMOTIONS[i] if isinstance(i, int) and 0 <= i < len(EMOTIONS) else i


def _outcome(success):
    if not isinstance(success, (int, float)):
        return None
    return "success" if success >= 4 else "partial" if success >= 3 else "failure"


def sessions(read, files, source):
    seen = set()
    for path in files:
        text = read(path)
        if text is None:
            continue
        for dialogue in json.loads(text):
            did = dialogue.get("id")
            if did in seen:
                continue
            seen.add(did)
            found = DATE.search(did or "")
            start = (datetime(int(found.group(1)), int(found.group(2)), int(found.group(3)), 9, tzinfo=timezone.utc)
                     if found else datetime(2021, 1, 1, tzinfo=timezone.utc))
            rows = []
            for turn in dialogue.get("turns") or []:
                if turn.get("floor") == "inbound":
                    emotions = turn.get("Emotion") or []
                    rows.append({"role": "user", "content": {"text": "\n".join(turn.get("text_src") or [])},
                                 "external": {"emotion": [_label(e) for e in emotions], "field": "turns[].Emotion",
                                              "by": "human"}})
                else:
                    labels = {k: turn.get(k) for k in ("IQ", "Understanding", "Sensibleness", "Politeness",
                                                       "Correctness", "Templated", "Engagement")}
                    rows.append({"role": "assistant",
                                 "content": {"text": "\n".join(turn.get("text_mt") or []), "tool_calls": [],
                                             "finish_reason": "stop"},
                                 "external": {**labels, "field": "turns[]", "by": "human",
                                              "source_text_en": "\n".join(turn.get("text_src") or [])}})
            for i, r in enumerate(rows):
                r["created_at"] = start + timedelta(seconds=5 * (i + 1))
            labels = dialogue.get("dialog") or {}
            success = labels.get("Task Sucess")
            success = int(success) if isinstance(success, float) else success
            dropped = labels.get("Dropped conversation")
            yield {
                "key": did,
                "path": path,
                "session": {"title": None, "status": None, "goal": None, "model": None, "created_at": start},
                "messages": rows,
                "external": {"outcome": _outcome(success), "task_success": success,
                             "dropped": int(dropped) if isinstance(dropped, (int, float)) else dropped,
                             "field": "dialog.Task Sucess (1-5; outcome: >=4 success, 3 partial, <=2 failure)",
                             "by": "human"},
            }
