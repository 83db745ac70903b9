"""The report in a real browser (headless Chromium through selenium): it loads from file://
with no console error and no request, the charts draw what the data holds, the worst-sessions
table filters, a session opens on its highlighted transcript, hostile content stays text, and
the static parts read with JavaScript off. Every run saves screenshots (in its tmp dir)."""

from __future__ import annotations

import sys
import time

import psycopg
import pytest

from .browser import chromium, console_errors, missing, requests
from .helpers import invoke
from .report_fixtures import (
    HOSTILE_ID,
    HOSTILE_MODEL,
    HOSTILE_TITLE,
    HOSTILE_USER,
    LONG_ID,
    add_hostile_session,
    add_long_session,
)

REASON = missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")


@pytest.fixture(scope="module")
def report_db(make_db) -> str:
    dsn = make_db(sample=True)
    add_hostile_session(dsn)
    add_long_session(dsn)
    return dsn


@pytest.fixture(scope="module")
def report_file(report_db, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    from nomos_forensics.cli import run

    assert run(["report", "--dsn", report_db, "-o", str(path)]) in (0, 1)
    return path


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


def _open(driver, path, fragment: str = ""):
    driver.get("about:blank")
    driver.get_log("performance")
    driver.get_log("browser")
    url = path.as_uri() + fragment
    driver.get(url)
    for _ in range(50):
        if driver.execute_script("return window.nfReady === true"):
            break
        time.sleep(0.1)
    return url


def _visible(driver, css: str) -> list:
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def test_loads_offline_with_no_error_and_no_request(browser, report_file, shots):
    url = _open(browser, report_file)
    assert browser.execute_script("return window.nfReady") is True
    assert console_errors(browser) == []
    assert [u for u in requests(browser) if u != url] == [], "the page asked for something"
    browser.save_screenshot(str(shots / "overview.png"))
    assert (shots / "overview.png").stat().st_size > 10_000


def test_charts_draw_every_series_and_point(browser, report_file, report_db):
    """Many signatures: one small chart each (small multiples) on one time axis, a point per day
    from the first to the last, a gap (null) for every day without a session, and the strip of
    sessions per day; the per-model chart has a series per model."""
    _open(browser, report_file)
    with psycopg.connect(report_db) as conn:
        first, last, days = conn.execute(
            "SELECT min((created_at AT TIME ZONE 'UTC')::date), max((created_at AT TIME ZONE 'UTC')::date),"
            " count(DISTINCT (created_at AT TIME ZONE 'UTC')::date) FROM sessions").fetchone()
        models = conn.execute("SELECT count(DISTINCT coalesce(model, '')) FROM sessions").fetchone()[0]
    span = (last - first).days + 1
    rules = [a.text for a in browser.find_elements("css selector", "#table-signatures a.pick-rule")]
    assert len(rules) >= 5
    for rule in rules:
        shape = browser.execute_script(
            "var u = nfCharts['time:' + arguments[0]]; return [u.series.length, u.data[0].length,"
            " u.data[1].filter(function (v) { return v != null; }).length, u.series[1].label]", rule)
        assert shape == [2, span, days, rule]
    weights = browser.execute_script("return nfCharts.weight.data[1]")
    assert len(weights) == span and sum(weights) > 0 and weights.count(0) == span - days
    model_chart = browser.execute_script(
        "var u = nfCharts.models; return [u.series.length,"
        " u.data.slice(1).map(function (s) { return s.filter(function (v) { return v != null; }).length; })]")
    assert model_chart[0] == 1 + min(models, 12)
    assert model_chart[1] == [len(rules)] * min(models, 12)
    painted = browser.execute_script(
        "return Object.keys(nfCharts).map(function (k) { var c = nfCharts[k].ctx.canvas;"
        " var px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;"
        " for (var i = 3; i < px.length; i += 4) if (px[i]) n++; return n; })")
    assert all(n > 500 for n in painted), painted


def test_filtering_by_rule_leaves_only_its_sessions(browser, report_file):
    from selenium.webdriver.support.ui import Select

    _open(browser, report_file)
    rows = browser.find_elements("css selector", "#table-worst tbody tr[data-id]")
    for rule in ("cant-run", "tool-fanout"):
        Select(browser.find_element("id", "f-rule")).select_by_value(rule)
        shown = [r for r in rows if r.is_displayed()]
        expected = [r for r in rows if f" {rule} " in r.get_attribute("data-rules")]
        assert shown and len(shown) == len(expected) < len(rows)
        for row in shown:
            sid = row.get_attribute("data-id")
            rules = browser.execute_script(
                "return Array.prototype.map.call(document.querySelectorAll('#s-' + arguments[0] + ' li.finding'),"
                " function (li) { return li.dataset.rule; })", sid)
            assert rule in rules
        assert browser.find_element("id", "f-count").text == f"{len(shown)} of {len(rows)} sessions"
    Select(browser.find_element("id", "f-rule")).select_by_value("")
    assert all(r.is_displayed() for r in rows)


def test_clicking_the_chart_lists_that_days_sessions(browser, report_file):
    _open(browser, report_file)
    bucket, rule = browser.execute_script(
        "var u = nfCharts.time, t = JSON.parse(document.getElementById('nf-data').textContent).time;"
        " for (var i = 0; i < t.x.length; i++) for (var s = 0; s < t.series.length; s++)"
        "   if (t.series[s].rates[i] > 0) { nfPick({rule: t.series[s].rule, bucket: t.buckets[i]});"
        "     return [t.buckets[i], t.series[s].rule]; }")
    shown = _visible(browser, "#table-worst tbody tr[data-id]")
    assert shown
    for row in shown:
        assert row.get_attribute("data-bucket") == bucket and f" {rule} " in row.get_attribute("data-rules")


def test_every_point_of_the_chart_lists_sessions(browser, known_rates_dsn, tmp_path, shots):
    """A report listing one session with its card: a click on any point of the rate chart
    still lists that day's sessions of the signature (rows without card, with a review hint)."""
    from nomos_forensics.cli import run

    path = tmp_path / "few.html"
    assert run(["report", "--dsn", known_rates_dsn, "-o", str(path), "--sessions", "1", "--transcripts", "1"]) in (0, 1)
    _open(browser, path)
    points = browser.execute_script(
        "var t = JSON.parse(document.getElementById('nf-data').textContent).time, out = [];"
        " for (var i = 0; i < t.x.length; i++) for (var s = 0; s < t.series.length; s++)"
        "   if (t.series[s].rates[i] > 0) out.push([t.buckets[i], t.series[s].rule]);"
        " return out;")
    assert len(points) > 20
    # one round trip a point (WebDriver calls per row made this the suite's slowest test);
    # the first point is also read through WebDriver's own visibility test, to keep this one honest
    pick_and_read = (
        "nfPick({rule: arguments[0], bucket: arguments[1]});"
        " return Array.from(document.querySelectorAll('#table-worst tbody tr[data-id]'))"
        "   .filter(function (r) { return r.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}); })"
        "   .map(function (r) { return [r.getAttribute('data-bucket'), r.getAttribute('data-rules')]; });")
    for n, (bucket, rule) in enumerate(points):
        shown = browser.execute_script(pick_and_read, rule, bucket)
        assert shown, (bucket, rule)
        assert all(b == bucket and f" {rule} " in rules for b, rules in shown), (bucket, rule)
        if n == 0:
            seen = _visible(browser, "#table-worst tbody tr[data-id]")
            assert [[r.get_attribute("data-bucket"), r.get_attribute("data-rules")] for r in seen] == shown
    assert "(no card here:" in browser.find_element("id", "table-worst").text
    browser.save_screenshot(str(shots / "report-point-without-card.png"))


def test_opening_a_session_shows_its_highlighted_transcript(browser, report_file, shots):
    _open(browser, report_file)
    first = browser.find_element("css selector", "#table-worst tbody tr[data-id] a")
    sid = first.find_element("xpath", "./ancestor::tr").get_attribute("data-id")
    first.click()
    section = browser.find_element("id", f"s-{sid}")
    assert section.is_displayed() and not browser.find_element("id", "overview").is_displayed()
    messages = section.find_elements("css selector", "ol.transcript > li.msg")
    assert messages and all(m.is_displayed() for m in messages)
    links = section.find_elements("css selector", "a.ev")
    assert links
    for link in links:
        target = browser.find_element("id", link.get_attribute("href").split("#", 1)[1])
        assert "hit" in target.get_attribute("class").split()
        assert target.value_of_css_property("background-color") == "rgba(255, 243, 196, 1)"
    links[-1].click()
    assert section.is_displayed(), "following a finding's link stays on the session page"
    assert browser.execute_script("return document.querySelector(':target').id") == links[-1].get_attribute("href").split("#")[1]
    browser.save_screenshot(str(shots / "session.png"))
    assert console_errors(browser) == []


def test_hostile_content_renders_as_text(browser, report_file, shots):
    url = _open(browser, report_file, f"#s-{HOSTILE_ID}")
    section = browser.find_element("id", f"s-{HOSTILE_ID}")
    assert section.is_displayed()
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert browser.execute_script("return document.images.length") == 0
    assert browser.execute_script("return document.scripts.length") == 3  # the data, uPlot, ours
    text = section.text
    assert HOSTILE_TITLE.split(" restart")[0] in text and "<U+202E>" in text
    assert HOSTILE_USER.split(" please")[0] in text and "onerror=window.pwned=4>" in text
    assert "first line <script>window.pwned=5</script>" in text and "last line" in text
    assert len(browser.page_source) < 1_500_000
    assert HOSTILE_MODEL in browser.find_element("id", "table-models").get_attribute("textContent")
    labels = browser.execute_script("return nfCharts.models.series.map(function (s) { return s.label; })")
    assert any(label.startswith(HOSTILE_MODEL) for label in labels)
    assert console_errors(browser) == [] and [u for u in requests(browser) if u.split("#")[0] != url.split("#")[0]] == []
    browser.save_screenshot(str(shots / "hostile.png"))


def test_static_parts_read_with_javascript_off(report_file):
    with chromium(javascript=False) as driver:
        driver.get(report_file.as_uri())
        assert driver.find_element("id", "n-sessions").text.strip()
        assert _visible(driver, "#table-signatures tbody tr")
        rows = _visible(driver, "#table-worst tbody tr[data-id]")
        assert len(rows) > 5
        assert not driver.find_element("id", "filters").is_displayed()
        rows[0].find_element("css selector", "a").click()  # the session page is CSS (:target) only
        assert _visible(driver, "section.session") and not driver.find_element("id", "overview").is_displayed()


def test_review_html_opens_on_its_own(report_db, tmp_path, capsys, browser):
    out = invoke(capsys, "review", HOSTILE_ID, "--dsn", report_db, "--format", "html").out
    page = tmp_path / "session.html"
    page.write_text(out, encoding="utf-8")
    url = _open(browser, page)
    assert browser.find_element("css selector", "section.session").is_displayed()
    assert len(_visible(browser, "li.msg")) == 4 and len(_visible(browser, "li.msg.hit")) >= 1
    assert console_errors(browser) == [] and [u for u in requests(browser) if u != url] == []


def test_overview_screenshot_at_readme_size(report_file, shots):
    """The overview as the README shows it (bench/report_screenshot.py writes docs/report.png)."""
    with chromium(width=1280, height=1000) as driver:
        _open(driver, report_file)
        driver.save_screenshot(str(shots / "readme.png"))
        assert console_errors(driver) == []
    assert (shots / "readme.png").stat().st_size > 10_000
    print(f"screenshots in {shots}", file=sys.stderr)


def test_every_evidence_link_lands_on_a_shown_message(browser, report_file):
    _open(browser, report_file)
    broken = browser.execute_script(
        "return Array.prototype.filter.call(document.querySelectorAll('a.ev'), function (a) {"
        " return !document.getElementById(a.getAttribute('href').slice(1)); }).length")
    assert broken == 0


def test_a_long_transcript_links_only_to_messages_it_shows(browser, report_file):
    _open(browser, report_file, f"#s-{LONG_ID}")
    section = browser.find_element("id", f"s-{LONG_ID}")
    assert section.is_displayed()
    shown = section.find_elements("css selector", "ol.transcript > li.msg")
    assert 20 < len(shown) <= 60 and section.find_elements("css selector", "li.gap-msgs")
    links = section.find_elements("css selector", "a.ev")
    hits = {m.get_attribute("id") for m in section.find_elements("css selector", "li.msg.hit")}
    assert links and {a.get_attribute("href").split("#")[1] for a in links} == hits
    links[0].click()
    assert section.is_displayed()


# ------------------------------------------------------------------ shapes of data, two widths
@pytest.fixture(scope="module")
def shape_reports(make_db, tmp_path_factory) -> dict:
    """The report of a sparse six-month database, of a dense one, and of an empty selection."""
    from nomos_forensics.cli import run

    from .report_shapes import build_dense, build_sparse

    folder = tmp_path_factory.mktemp("shapes")
    sparse, dense = build_sparse(make_db), build_dense(make_db)
    reports = {}
    for name, dsn, args in (("sparse", sparse, []), ("dense", dense, []), ("empty", dense, ["--since", "2030-01-01"])):
        reports[name] = folder / f"{name}.html"
        assert run(["report", "--dsn", dsn, "-o", str(reports[name]), *args]) in (0, 1)
    return reports


TABLES_FIT = """
return Array.prototype.map.call(document.querySelectorAll('#overview table.data'), function (t) {
  var section = t.closest('section').getBoundingClientRect(), box = t.getBoundingClientRect();
  var scroller = t.closest('.scroll');
  return [t.id || t.tHead.textContent.trim().slice(0, 40), Math.round(box.right - section.right),
          scroller ? scroller.scrollWidth - scroller.clientWidth : 0];
});"""

# the middle of the longest run of periods without a session, and the coloured (not grey)
# pixels of a chart's plot in that column: a line or band across the gap would show there
GAP_PIXELS = """
var u = arguments[0] ? nfCharts[arguments[0]] : null, t = JSON.parse(document.getElementById('nf-data').textContent).time;
var best = [0, -1, -1], run = 0;
for (var i = 0; i < t.sessions.length; i++) {
  run = t.sessions[i] ? 0 : run + 1;
  if (run > best[0]) best = [run, i - run + 1, i];
}
if (best[0] < 2) return null;
var out = {};
Object.keys(nfCharts).filter(function (k) { return k.indexOf('time') === 0; }).forEach(function (k) {
  var u = nfCharts[k], mid = (t.x[best[1]] + t.x[best[2]]) / 2, x = Math.round(u.valToPos(mid, 'x', true));
  var px = u.ctx.getImageData(x - 1, u.bbox.top, 3, u.bbox.height).data, n = 0;
  for (var j = 0; j < px.length; j += 4) {
    var hi = Math.max(px[j], px[j + 1], px[j + 2]), lo = Math.min(px[j], px[j + 1], px[j + 2]);
    if (px[j + 3] > 40 && hi - lo > 40) n++;
  }
  out[k] = n;
});
return out;"""


@pytest.mark.parametrize("width", [1280, 1920])
@pytest.mark.parametrize("shape", ["sparse", "dense", "empty"])
def test_every_shape_reads_at_two_widths(shape_reports, shots, shape, width):
    """No table cut off (each fits its card, with no scrolling needed), no page wider than the
    window, no line or band across a period without sessions; a screenshot of each."""
    with chromium(width=width, height=1200) as driver:
        _open(driver, shape_reports[shape])
        assert console_errors(driver) == []
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        for table, overflow, scroll in driver.execute_script(TABLES_FIT):
            assert overflow <= 1 and scroll <= 1, (shape, width, table, overflow, scroll)
        data = driver.execute_script("return JSON.parse(document.getElementById('nf-data').textContent).time")
        if shape == "empty":
            notice = driver.find_element("id", "notice").text
            assert notice.startswith("No sessions match (created since 2030-01-01 00:00 UTC); the database holds 720")
            assert driver.execute_script("return Object.keys(nfCharts).length") == 0
        else:
            assert data["unit"] == {"sparse": "week", "dense": "day"}[shape]
            assert driver.execute_script("return Object.keys(nfCharts).indexOf('weight') >= 0")
            for series in data["series"]:  # a gap in the data wherever a period has no session
                assert [r is None for r in series["rates"]] == [n == 0 for n in data["sessions"]]
            crossing = driver.execute_script(GAP_PIXELS, None)
            if shape == "sparse":
                assert crossing and set(crossing.values()) == {0}, crossing
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(width, min(height + 140, 7000))
        driver.save_screenshot(str(shots / f"{shape}-{width}.png"))
    print(f"screenshot: {shots / f'{shape}-{width}.png'}", file=sys.stderr)


@pytest.fixture(scope="module")
def unexplained_report(make_db, tmp_path_factory):
    """Four sessions that fail the same way, and that no rule explains: one unexplained group."""
    from nomos_forensics.testing import insert_case

    dsn = make_db()
    for n in range(4):
        insert_case(dsn, {"name": f"restart {n} <b>bold</b>", "session": {"status": "failed"}, "messages": [
            {"user": f"restart nginx on lxc 10{n}"},
            {"assistant": {"text": "", "tool_calls": [{"id": "c1", "name": "run", "arguments": {"cmd": f"r {n}"}}]}},
            {"tool": {"tool_call_id": "c1", "name": "run", "is_error": True,
                      "output": f"Error: permission denied (publickey) for 10.0.5.{n}"}},
            {"assistant": "I could not restart nginx: permission denied <script>alert(1)</script>."}]})
    path = tmp_path_factory.mktemp("unexplained") / "report.html"
    from nomos_forensics.cli import run

    assert run(["report", "--dsn", dsn, "-o", str(path)]) in (0, 1)
    return path


def test_unexplained_groups_open_on_their_examples(browser, unexplained_report, shots):
    """Issue 34: the section lists the group, its details show the quotes that make the examples
    alike and the rule skeleton, and an example opens on its transcript with the messages marked."""
    _open(browser, unexplained_report)
    section = browser.find_element("id", "unexplained")
    assert section.is_displayed()
    rows = section.find_elements("css selector", "#table-unexplained tbody tr")
    assert len(rows) == 1 and "errored with" in rows[0].text and "4" in rows[0].text
    group = section.find_element("css selector", "details.group")
    group.find_element("tag name", "summary").click()
    quotes = [q for q in group.find_elements("css selector", "blockquote.quote") if q.is_displayed()]
    assert len(quotes) == 6 and any("permission denied" in q.text for q in quotes)
    assert "<script>" in group.text  # hostile text stays text
    assert group.find_element("css selector", "pre.skeleton").is_displayed()
    browser.save_screenshot(str(shots / "unexplained.png"))
    link = group.find_element("css selector", "ul.examples a")
    sid = link.get_attribute("href").split("#s-", 1)[1]
    link.click()
    page = browser.find_element("id", f"s-{sid}")
    assert page.is_displayed() and not browser.find_element("id", "overview").is_displayed()
    marked = page.find_elements("css selector", "ol.transcript > li.msg.hit")
    assert len(marked) == 2 and all("unexplained" in m.text for m in marked)
    assert console_errors(browser) == [] and browser.execute_script("return window.alerted === undefined")
