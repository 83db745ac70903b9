#!/usr/bin/env python3
"""The README's screenshot of `nomos-forensics report` (docs/report.png), in headless Chromium.

    .venv/bin/python bench/generate.py --dsn postgresql://postgres@127.0.0.1:5432/postgres \\
        --dbname nomos_forensics_report_small --messages 60000 --sessions 2100
    .venv/bin/python bench/report_screenshot.py \\
        --dsn postgresql://postgres@127.0.0.1:5432/nomos_forensics_report_small -o docs/report.png

Needs chromium and chromium-driver (apt) and selenium (the test extra), as the browser tests do.
With --session it shoots the worst session's page instead of the overview.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.browser import chromium, console_errors, missing  # noqa: E402

SCRIPT = Path(sys.executable).with_name("nomos-forensics")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "report.png")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--session", action="store_true", help="the worst session's page, not the overview")
    opts = ap.parse_args()
    if missing():
        sys.exit(f"report_screenshot: {missing()}")
    work = Path(tempfile.mkdtemp(prefix="nomos-forensics-shot-"))
    page = work / "report.html"
    subprocess.run([str(SCRIPT), "report", "--dsn", opts.dsn, "-o", str(page)], check=False)
    with chromium(opts.width, opts.height) as driver:
        driver.get(page.as_uri())
        time.sleep(0.5)
        if opts.session:
            driver.find_element("css selector", "#table-worst tbody tr[data-id] a").click()
            time.sleep(0.3)
        errors = console_errors(driver)
        if errors:
            sys.exit(f"report_screenshot: console errors: {errors}")
        driver.save_screenshot(str(opts.output))
    shutil.rmtree(work, ignore_errors=True)
    for command in (["pngquant", "--force", "--ext", ".png", "--quality", "60-90", str(opts.output)],
                    ["optipng", "-quiet", str(opts.output)]):
        if shutil.which(command[0]):
            subprocess.run(command, check=False)
            break
    print(f"{opts.output}: {opts.output.stat().st_size / 1000:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
