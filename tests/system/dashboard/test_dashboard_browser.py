"""The dashboard in a real browser (Debian's chromium, headless, driven by selenium through
chromium-driver) against `fastgo dashboard` as a process on a run directory built from tiny real
checkpoints: the page loads, the curve shows the run's points, a self-play game replays, a move
played on the board gets the network's reply and the overlay, and a second tab sees a new
checkpoint arrive without a reload; a finished run's page says it ended, names the anchors its
evaluator skipped with the command that adds each, folds the unrated checkpoints and plays a
reference player; no request of the page fails (the browser's console)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

try:
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:        # the `needs` mark skips every test (fails them under CI)
    pass

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.slow, pytest.mark.needs("selenium", "chromium", "chromedriver")]


@contextlib.contextmanager
def dashboard(root, **env):
    """`fastgo dashboard ROOT` as a process (with `env` added to its environment): its URL."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", **env)
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "dashboard", root,
                             "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        yield re.search(r"http://\S+", line).group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def server(tmp_path_factory, dashboard_run):
    run = dashboard_run(tmp_path_factory.mktemp("dash") / "run")
    with dashboard(run.root) as url:
        yield run, url


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--window-size=1400,1800"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})    # the console, read back
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver, predicate, timeout=30):
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: predicate(d))


def failed_requests(driver):
    """The console's lines of requests that failed (a 404 or any other error status)."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" or re.search(r"\b[45]\d\d\b", entry["message"])]


def test_the_page_in_a_browser(server, browser, dashboard_checkpoint, tmp_path):
    run, url = server
    browser.get(url)
    # the page loads and the curve shows the run's three rated checkpoints
    points = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#curve-time circle[data-player]"))
    assert [p.get_attribute("data-player") for p in points] == ["ckpt-100", "ckpt-200", "ckpt-300"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#curve-games circle[data-player]")) == 3
    assert browser.find_element(By.CSS_SELECTOR, '#status dd[data-key="evals/s"]').text == "1235"
    assert browser.find_element(By.ID, "live").text == "live"
    assert "from the run's games against it" in browser.find_element(By.ID, "scale-note").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#skipped li")
    browser.save_screenshot(str(tmp_path / "page.png"))
    assert failed_requests(browser) == []

    # a self-play game replays move by move
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#games li"))[0].click()
    wait(browser, lambda d: d.find_element(By.ID, "replay-info").get_attribute("data-move") == "0")
    browser.find_element(By.ID, "replay-next").click()
    browser.find_element(By.ID, "replay-next").click()
    wait(browser, lambda d: d.find_element(By.ID, "replay-info").get_attribute("data-move") == "2")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-board circle.stone")) == 2
    assert "value" in browser.find_element(By.ID, "replay-info").text

    # a move on the board: the network's reply and the overlay
    browser.find_element(By.ID, "play-amount").clear()
    browser.find_element(By.ID, "play-amount").send_keys("16")
    browser.find_element(By.ID, "play-start").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#play-board rect.point"), 90)
    browser.find_element(By.CSS_SELECTOR, '#play-board rect.point[data-vertex="E5"]').click()
    wait(browser, lambda d: d.find_element(By.ID, "play-info").get_attribute("data-moves") == "2", 90)
    stones = browser.find_elements(By.CSS_SELECTOR, "#play-board circle.stone")
    assert sorted(s.get_attribute("data-colour") for s in stones) == ["B", "W"]
    assert browser.find_elements(By.CSS_SELECTOR, "#play-board circle.overlay-move")
    assert browser.find_elements(By.CSS_SELECTOR, "#play-board rect.own")
    assert browser.find_elements(By.CSS_SELECTOR, "#play-moves tbody tr")

    # a second tab sees a new checkpoint arrive live
    browser.switch_to.new_window("tab")
    browser.get(url)
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#curve-time circle[data-player]")) == 3)
    dashboard_checkpoint(run.root, 400)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#checkpoints tr[data-name="ckpt-400"]'))
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#curve-time circle[data-player="ckpt-400"]'))


def test_a_finished_run_in_a_browser(tmp_path, browser, dashboard_run, dashboard_checkpoint,
                                     reference_folder):
    from dashboard.run_view import RUNNING_S
    from fastgo.reference_players import REFERENCES_ENV
    from rundata.rundir import status_path

    run = dashboard_run(tmp_path / "run")
    dashboard_checkpoint(run.root, 50, rate=False)              # one checkpoint never rated
    skipped = [{"what": "GNU Go", "anchors": ["gnugo:1", "gnugo:5"], "why": "not installed",
                "command": "apt-get install gnugo"},
               {"what": "KataGo", "anchors": ["katago:1"], "why": "not found",
                "command": "fastgo katago fetch"}]
    with open(status_path(run, "evaluate"), "w") as handle:
        json.dump({"cpu_share": 0.1, "cpu_budget": 0.2, "skipped_anchors": skipped}, handle)
    ended = time.time() - RUNNING_S - 600                       # the run stopped 10 minutes ago
    for name in os.listdir(run.logs):
        os.utime(os.path.join(run.logs, name), (ended, ended))
    refs = reference_folder(tmp_path / "refs", [("low", 4)])
    with dashboard(run.root, **{REFERENCES_ENV: str(refs)}) as url:
        browser.switch_to.new_window("tab")
        browser.get(url)
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#curve-time circle[data-player]"))
        assert wait(browser, lambda d: d.find_element(By.ID, "live").text == "ended")
        lines = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#skipped li")]
        assert len(lines) == 2 and "gnugo:1, gnugo:5" in lines[0]
        assert lines[0].endswith("add them with: apt-get install gnugo")
        assert lines[1].endswith("add it with: fastgo katago fetch")
        # the rated checkpoints in the table, the unrated one folded below it
        rows = browser.find_elements(By.CSS_SELECTOR, "#checkpoints tbody tr")
        assert [r.get_attribute("data-name") for r in rows] == ["ckpt-300", "ckpt-200", "ckpt-100"]
        assert browser.find_element(By.ID, "unrated-summary").text == "1 checkpoint not rated"
        folded = browser.find_element(By.CSS_SELECTOR, "#unrated-checkpoints tbody tr")
        assert not folded.is_displayed()
        browser.find_element(By.ID, "unrated-summary").click()
        assert folded.get_attribute("data-name") == "ckpt-50" and folded.is_displayed()
        # a reference player is played at its own visits
        option = browser.find_element(By.CSS_SELECTOR, '#play-checkpoint option[value="ref:low"]')
        assert option.text == "ref:low (4 visits a move)"
        option.click()
        browser.find_element(By.ID, "play-start").click()
        wait(browser, lambda d: "ref:low; you play B" in d.find_element(By.ID, "play-info").text,
             120)
        browser.find_element(By.CSS_SELECTOR, '#play-board rect.point[data-vertex="E5"]').click()
        wait(browser, lambda d: d.find_element(By.ID, "play-info").get_attribute("data-moves")
             == "2", 90)
        assert failed_requests(browser) == []
