"""JailbreakBench attack artifacts (JailbreakBench/artifacts, NeurIPS 2024 Datasets & Benchmarks):
for each attack method and target model, the 100 JBB-Behaviors with the jailbreak prompt the attack
submitted and the target model's reply, judged by the benchmark's own classifiers.

Files: `attack-artifacts/<method>/<attack_type>/<model>.json`: `parameters` (method, model,
attack_type, evaluation settings) and `jailbreaks`, each with `index, goal, behavior, category,
prompt, response, jailbroken` (the JailbreakBench judge's verdict: true = the reply is a jailbreak,
i.e. harmful and on-task) and `jailbroken_llama_guard1` (Llama Guard's verdict), plus query counts.
Items whose `prompt`/`response` is null (the attack submitted nothing for that behaviour) are left out.

Each item is one session [user jailbreak prompt, assistant reply]; the two verdicts go on the assistant
message as `external`. `max_replies` (default 1500) keeps an even deterministic sample over the items
sorted by (file, index). Fixed start plus 5 s per message.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2024, 3, 1, tzinfo=timezone.utc)
FILE = re.compile(r"attack-artifacts/(?P<method>[^/]+)/(?P<type>[^/]+)/(?P<model>[^/]+)\.json$")
VERDICTS = ("jailbroken", "jailbroken_llama_guard1")


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    items = []
    for path in sorted(files):
        m = FILE.search(path)
        if not m or m.group("method") == "test-artifact":
            continue
        text = read(path)
        if text is None:
            continue
        for j in json.loads(text).get("jailbreaks") or []:
            if j.get("prompt") and j.get("response"):
                items.append((m.group("method"), m.group("type"), m.group("model"), path, j))
    for method, kind, model, path, j in evenly(items, int(source.get("max_replies", 1500))):
        verdicts = {k: j[k] for k in VERDICTS if k in j}
        yield {
            "key": f"{method}:{kind}:{model}:{j['index']:03d}",
            "path": path,
            "session": {"title": f"{method} / {j.get('behavior')}", "model": model, "created_at": START,
                        "status": None, "goal": None,
                        "extra": {"method": method, "attack_type": kind, "category": j.get("category")}},
            "messages": [
                {"role": "user", "content": {"text": j["prompt"]}, "created_at": START},
                {"role": "assistant", "content": {"text": j["response"], "tool_calls": [], "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5),
                 "external": {**verdicts, "by": "JailbreakBench judge and Llama Guard 1 (the benchmark's own)",
                              "field": f"{path}:jailbreaks[index={j['index']}].{'/'.join(verdicts)}"}},
            ],
        }
