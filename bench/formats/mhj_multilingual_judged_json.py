"""Multilingual multi-turn jailbreak dialogues with Apertus-70B's replies, judged by three
StrongREJECT judge conditions (hyunjun1121/Judge-Capacity-Beats-Template-Language, "Judge capacity vs.
template language in multilingual LLM safety evaluation", 2025).

382 multi-turn jailbreak dialogues (human-written, translated into 16 languages), replayed turn by
turn against Apertus-70B (`llm_response` per turn, with `response_timestamp`). Files per language
(`<iso639-3>.<Script>`, e.g. `cmn.Hani`, `rus.Cyrl`):
- `data/evaluation_results/final_results/<L>_complete.json`: `turns` and `evaluation` by Apertus-70B
  with the English StrongREJECT rubric;
- `data/evaluation_results/gpt_english_eval/<L>_gpt_english_eval.json`: `gpt_english_evaluation`,
  GPT-4.1 with the English rubric;
- `data/evaluation_results/gpt_translated_eval/<L>_gpt_translated_eval.json`:
  `gpt_translated_evaluation`, GPT-4.1 with the rubric translated into the language.
Each evaluation: `refused` (0/1), `convincing_score` and `specific_score` (1-5), `strongreject_score`
(0-1) and `raw_response` (the judge's reasoning, not kept). The judges score the dialogue as a whole.
Some GPT files of some languages are 4 MiB or more and absent from the snapshot; those dialogues
carry the verdicts that could be read.

Each dialogue is one session (user turn, assistant reply, ...); the verdicts go on the LAST assistant
message as `external` (one entry per judge condition, verbatim with its file and field). The source's
`every` (default 9; an int, or a map from language tag to int with a `default`) keeps the dialogues
whose `entry_index % every == 0`. Apertus often answers in English: about a third of the replies to
non-English dialogues are English.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2025, 9, 26, tzinfo=timezone.utc)
FILE = re.compile(r"(?P<dir>final_results|gpt_english_eval|gpt_translated_eval)/(?P<lang>[a-z]{3}\.[A-Za-z]{4})_(?:complete|gpt_english_eval|gpt_translated_eval)\.json$")
FIELD = {"final_results": "evaluation", "gpt_english_eval": "gpt_english_evaluation",
         "gpt_translated_eval": "gpt_translated_evaluation"}
JUDGE = {"final_results": "apertus70b_english_rubric", "gpt_english_eval": "gpt41_english_rubric",
         "gpt_translated_eval": "gpt41_native_rubric"}


def _stamp(value):
    try:
        return datetime.strptime(value, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return None


def sessions(read, files, source):
    every = source.get("every", 9)
    step = (lambda lang: int(every.get(lang, every.get("default", 9)))) if isinstance(every, dict) else (lambda lang: int(every))
    data: dict[str, dict[str, tuple[str, dict[int, dict]]]] = {}
    for path in sorted(files):
        m = FILE.search(path)
        if not m:
            continue
        text = read(path)
        if text is None:
            continue
        entries = {e["entry_index"]: e for e in json.loads(text)}
        data.setdefault(m.group("lang"), {})[m.group("dir")] = (path, entries)
    for lang in sorted(data):
        if "final_results" not in data[lang]:
            continue
        path, entries = data[lang]["final_results"]
        for idx in sorted(entries):
            if idx % step(lang):
                continue
            e = entries[idx]
            rows = []
            first = next((_stamp(t.get("response_timestamp")) for t in e.get("turns") or []
                          if _stamp(t.get("response_timestamp"))), None)
            clock = first - timedelta(seconds=5) if first else START
            for t in e.get("turns") or []:
                rows.append({"role": "user", "content": {"text": t.get("content") or ""}, "created_at": clock})
                stamp = _stamp(t.get("response_timestamp"))
                clock = stamp if stamp and stamp > clock else clock + timedelta(seconds=5)
                rows.append({"role": "assistant", "content": {"text": t.get("llm_response") or "", "tool_calls": [],
                                                              "finish_reason": "stop"}, "created_at": clock})
                clock = clock + timedelta(seconds=5)
            if not rows:
                continue
            external = {}
            for d, field in FIELD.items():
                if d not in data[lang]:
                    continue
                p, ents = data[lang][d]
                ev = (ents.get(idx) or {}).get(field)
                if ev:
                    external[JUDGE[d]] = {**{k: v for k, v in ev.items() if k != "raw_response"},
                                          "field": f"{p}:[entry_index={idx}].{field}"}
            external["by"] = "StrongREJECT rubric judges of the study (Apertus-70B, GPT-4.1); dialogue-level"
            rows[-1]["external"] = external
            yield {
                "key": f"{lang}:{idx:03d}",
                "path": path,
                "session": {"title": f"multi-turn jailbreak #{idx} ({lang})", "model": "Apertus-70B",
                            "created_at": rows[0]["created_at"], "status": None, "goal": None,
                            "extra": {"language": lang}},
                "messages": rows,
            }
