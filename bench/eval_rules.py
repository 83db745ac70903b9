"""Recall and false-positive rate of the text rules over the phrase corpus (no database needed).

    .venv/bin/python bench/eval_rules.py                  # all three rules, misses listed
    .venv/bin/python bench/eval_rules.py cant-run -q      # one rule, summary only
    .venv/bin/python bench/eval_rules.py --speed          # + per-message timing of the rules
    .venv/bin/python bench/eval_rules.py --phrases DIR    # another set of <rule>.yaml (a held-out set)

Each item of tests/phrases/<rule>.yaml (`fire`: must produce a finding; `quiet`: must not;
`xfail_fire` / `xfail_quiet`: known misses, which the database test skips but this counts) is
turned into the same two-message session the database test builds (a user message, then the
assistant reply; a bare string is a reply to "please check lxc 105 for me") and the rule's
`check` runs on a `nomos_forensics.model.Session` built in memory.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import yaml
from nomos_forensics_rules.cant_run import CantRun
from nomos_forensics_rules.no_web_tool import NoWebTool
from nomos_forensics_rules.non_english_refusal import NonEnglishRefusal

from nomos_forensics.model import Message, Session, SessionInfo

ROOT = Path(__file__).resolve().parent.parent
PHRASES = ROOT / "tests" / "phrases"
RULES = {"cant-run": CantRun, "no-web-tool": NoWebTool, "non-english-refusal": NonEnglishRefusal}
DEFAULT_USER = "please check lxc 105 for me"  # what tests/test_runbook_rules.py uses


def session_for(user: str, reply: str) -> Session:
    return Session(
        SessionInfo(id="00000000-0000-0000-0000-000000000000"),
        [Message(1, "user", None, text=user), Message(2, "assistant", None, text=reply)],
    )


def items(rule: str, directory: Path | None = None) -> list[tuple[int, str, str]]:
    """(expected findings, user, reply) for every item of the rule's phrase file."""
    data = yaml.safe_load(((directory or PHRASES) / f"{rule}.yaml").read_text(encoding="utf-8"))
    out = []
    # xfail_*: known misses, kept out of the database test but counted here
    for expected, key in ((1, "fire"), (0, "quiet"), (1, "xfail_fire"), (0, "xfail_quiet")):
        for item in data.get(key) or []:
            user, reply = item if isinstance(item, list) else (DEFAULT_USER, item)
            if not (isinstance(user, str) and isinstance(reply, str)):
                raise SystemExit(f"{rule}.yaml {key}: not a string or a [user, reply] pair (quote it?): {item!r}")
            out.append((expected, user, reply))
    return out


def fires(rule_cls, user: str, reply: str) -> bool:
    return any(True for _ in rule_cls().check(session_for(user, reply), None))


def evaluate(rule: str, show_misses: bool = True, directory: Path | None = None) -> tuple[float, float, int, int]:
    rule_cls = RULES[rule]
    fire_n = quiet_n = tp = fp = 0
    misses: list[str] = []
    false_alarms: list[str] = []
    for expected, user, reply in items(rule, directory):
        got = fires(rule_cls, user, reply)
        shown = (f"[{user[:40]!r}] " if user != DEFAULT_USER else "") + repr(reply[:150])
        if expected:
            fire_n += 1
            tp += got
            if not got:
                misses.append(shown)
        else:
            quiet_n += 1
            fp += got
            if got:
                false_alarms.append(shown)
    recall = tp / fire_n if fire_n else 1.0
    fp_rate = fp / quiet_n if quiet_n else 0.0
    print(f"{rule:22} fire={fire_n:4} quiet={quiet_n:4}  recall={recall:.3f}  FP={fp_rate:.3%} ({fp})")
    if show_misses:
        for shown in misses:
            print(f"   MISS  {shown}")
        for shown in false_alarms:
            print(f"   FP    {shown}")
    return recall, fp_rate, fire_n, quiet_n


def _best_time(fn, data, repeat: int = 5) -> float:
    """Best-of-`repeat` seconds per item (the machine may be busy: the minimum is the signal)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for x in data:
            fn(x)
        best = min(best, (time.perf_counter() - t0) / len(data))
    return best


def speed() -> None:
    """Per-message cost of the three rules on English text, and how much of it reaches Lingua."""
    import resource

    from nomos_forensics.text.language import detect

    english = [reply for expected, user, reply in items("non-english-refusal") if not expected]
    english += [reply for _, _, reply in items("cant-run")] + [reply for _, _, reply in items("no-web-tool")]
    english = [t for t in english if (d := detect(t)) is not None and d.language == "en"]
    long_text = "\n\n".join(t for t in english if t.isascii())[:6000]
    detect("ceci est un texte en français pour charger le modèle de langue")  # load Lingua once
    print(f"English replies from the corpus: n={len(english)}, avg {statistics.mean(map(len, english)):.0f} chars")
    print(f"  langid.detect(): {_best_time(detect, english) * 1e6:.1f} µs/message; "
          f"one {len(long_text)}-char ASCII English text: {_best_time(detect, [long_text]) * 1e6:.1f} µs")
    methods: dict[str, int] = {}
    for t in english:
        d = detect(t)
        methods[d.method] = methods.get(d.method, 0) + 1
    print(f"  methods that decided them: {methods} (\"lingua\" = reached the statistical detector)")
    for name, rule_cls in RULES.items():
        rule = rule_cls()
        sessions = [session_for("please check the disk usage on lxc 105", t) for t in english]
        per = _best_time(lambda sess, rule=rule: list(rule.check(sess, None)), sessions, repeat=3)
        print(f"  {name:20} whole rule on a 2-message English session: {per * 1e6:.1f} µs")
    print(f"peak RSS of this process (Lingua low-accuracy models loaded): "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rules", nargs="*", help="rule names (default: all three)")
    parser.add_argument("-q", "--quiet", action="store_true", help="summary lines only")
    parser.add_argument("--speed", action="store_true", help="also time the language detector")
    parser.add_argument("--phrases", type=Path, help="another directory of <rule>.yaml files (e.g. a held-out set)")
    args = parser.parse_args(argv)
    worst_recall, worst_fp = 1.0, 0.0
    unknown = set(args.rules) - set(RULES)
    if unknown:
        parser.error(f"unknown rule(s): {', '.join(sorted(unknown))}")
    for rule in args.rules or list(RULES):
        recall, fp_rate, _, _ = evaluate(rule, show_misses=not args.quiet, directory=args.phrases)
        worst_recall, worst_fp = min(worst_recall, recall), max(worst_fp, fp_rate)
    if args.speed:
        speed()
    return 0 if worst_recall >= 0.97 and worst_fp <= 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
