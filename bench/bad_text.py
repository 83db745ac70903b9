"""What hostile text costs the text rules, beside an ordinary reply, measured side by side in one
run (issue 31: "each is classified or skipped in bounded time").

    .venv/bin/python bench/bad_text.py [--repeat 5]

Each input is one assistant reply in a four-message session, reviewed in memory with the text
rules only (cant-run, no-web-tool, policy-refusal, non-english-refusal, user-frustration,
unfinished-session); the figure is the median over --repeat runs, and the ratio is to the same
session with an ordinary one-line reply. Lone surrogates go through the read boundary first
(decode.scrub_surrogates), as they do from the database.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_text_bounds import HOSTILE, TEXT_RULES

from nomos_forensics.decode import scrub_surrogates
from nomos_forensics.testing import review_in_memory

ORDINARY = "I restarted nginx on lxc 105; the site answers again."


def _case(reply: str) -> dict:
    return {"name": "bench", "messages": [
        {"user": "Please restart nginx on lxc 105."}, {"assistant": scrub_surrogates(reply)},
        {"user": "Thanks. Also, can you reboot lxc 106?"},
        {"assistant": "I'm sorry, but I can't run commands inside containers."}]}


def timed(reply: str, repeat: int) -> float:
    case = _case(reply)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        card = review_in_memory(case, select=TEXT_RULES)
        runs.append(time.perf_counter() - start)
        assert not card.errors, card.errors
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    review_in_memory(_case(ORDINARY), select=TEXT_RULES)  # load the models and lexicons once
    base = timed(ORDINARY, args.repeat)
    print(f"{'input':<18} {'chars':>10} {'ms':>9} {'x ordinary':>11}")
    print(f"{'ordinary':<18} {len(ORDINARY):>10,} {base * 1000:>9.1f} {1.0:>11.1f}")
    for name in sorted(HOSTILE):
        seconds = timed(HOSTILE[name], args.repeat)
        print(f"{name:<18} {len(HOSTILE[name]):>10,} {seconds * 1000:>9.1f} {seconds / base:>11.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
