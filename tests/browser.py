"""Headless Chromium for the report's tests (Debian's chromium + chromium-driver, via selenium):
a fresh profile, no network of its own, and the performance log to see every request."""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import contextmanager

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver", "chromium-driver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not any(shutil.which(b) for b in CHROMIUM):
        return "no Chromium (apt-get install chromium chromium-driver)"
    if not any(shutil.which(d) for d in DRIVER):
        return "no chromedriver (apt-get install chromium-driver)"
    return None


@contextmanager
def chromium(width: int = 1400, height: int = 1000, javascript: bool = True):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="nomos-forensics-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = next(shutil.which(b) for b in CHROMIUM if shutil.which(b))
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    if not javascript:
        options.add_argument("--blink-settings=scriptEnabled=false")
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=next(shutil.which(d) for d in DRIVER if shutil.which(d)))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def requests(driver) -> list[str]:
    """URLs of every network request the page made since the last call (CDP performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
