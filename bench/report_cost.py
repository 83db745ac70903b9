#!/usr/bin/env python3
"""What `report` costs next to `scan`, side by side on one database (issue 13).

    .venv/bin/python bench/report_cost.py --dsn postgresql://postgres@127.0.0.1:5432/nomos_forensics_bench \
        [--repeat 3] [--jobs 1] [--transcripts 200]

Runs, alternating (so drift on a shared machine hits both alike), after one untimed warm-up of each:
  scan    `nomos-forensics scan --dsn DB --format jsonl > /dev/null`
  report  `nomos-forensics report --dsn DB -o OUT.html`
and prints each median wall time and client CPU time (user + system of the process: steadier
than wall time on a busy machine), the ratio report/scan (target <= 1.2), the file's size
(target <= 10 MB on the 1M-message bench DB) and how much of it the transcripts take.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("nomos-forensics")
RATIO_TARGET, SIZE_TARGET = 1.2, 10_000_000


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], stdout) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) of one run of the CLI."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run([str(SCRIPT), *args], stdout=stdout, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(args[:1])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, _cpu() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True, help="the database to scan (e.g. the 1M-message bench DB)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--transcripts", type=int, default=200)
    ap.add_argument("--no-warmup", action="store_true")
    opts = ap.parse_args()

    out_dir = Path(tempfile.mkdtemp(prefix="nomos-forensics-report-cost-"))
    html = out_dir / "report.html"
    jobs = ["--jobs", str(opts.jobs)]
    scan = ["scan", "--dsn", opts.dsn, "--format", "jsonl", *jobs]
    report = ["report", "--dsn", opts.dsn, "-o", str(html), "--transcripts", str(opts.transcripts), *jobs]
    walls: dict[str, list[float]] = {"scan": [], "report": []}
    cpus: dict[str, list[float]] = {"scan": [], "report": []}
    with open(os.devnull, "w") as devnull:
        if not opts.no_warmup:
            timed(scan, devnull)
            timed(report, devnull)
        for i in range(opts.repeat):
            order = (("scan", scan), ("report", report)) if i % 2 == 0 else (("report", report), ("scan", scan))
            for name, args in order:
                wall, cpu = timed(args, devnull)
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"  run {i + 1} {name:6s} {wall:7.2f} s wall, {cpu:7.2f} s CPU", file=sys.stderr)
    scan_s, report_s = statistics.median(walls["scan"]), statistics.median(walls["report"])
    text = html.read_text(encoding="utf-8")
    size = len(text.encode("utf-8"))
    transcripts = sum(len(m.encode("utf-8")) for m in re.findall(r'<ol class="transcript">.*?</ol>', text, re.S))
    ratio = report_s / scan_s
    carried, pages = text.count('<ol class="transcript">'), text.count('<section class="session"')
    cpu_ratio = statistics.median(cpus["report"]) / statistics.median(cpus["scan"])
    print(f"{'':10s}{'wall s':>10s}{'CPU s':>10s}   wall of each run")
    for name in ("scan", "report"):
        print(f"{name:10s}{statistics.median(walls[name]):10.2f}{statistics.median(cpus[name]):10.2f}   "
              + " ".join(f"{w:.2f}" for w in walls[name]))
    print(f"ratio report/scan: {ratio:.2f}x wall (target <= {RATIO_TARGET}x) {'ok' if ratio <= RATIO_TARGET else 'OVER'}, "
          f"{cpu_ratio:.2f}x client CPU")
    print(f"report size: {size / 1e6:.1f} MB (target <= {SIZE_TARGET / 1e6:.0f} MB) "
          f"{'ok' if size <= SIZE_TARGET else 'OVER'}; transcripts {transcripts / 1e6:.1f} MB, "
          f"{carried} of {pages} session pages")
    print(json.dumps({"scan_s": round(scan_s, 3), "report_s": round(report_s, 3), "ratio": round(ratio, 3),
                      "cpu_ratio": round(cpu_ratio, 3),
                      "bytes": size, "transcript_bytes": transcripts, "jobs": opts.jobs, "repeat": opts.repeat}))
    html.unlink()
    out_dir.rmdir()
    return 0 if ratio <= RATIO_TARGET and size <= SIZE_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
