"""The dashboard in a real browser (Debian's chromium, headless, driven by selenium through
chromium-driver) against `fastgo dashboard` as a process on a run directory built from tiny real
checkpoints: the page loads, the curve shows the run's points, a self-play game replays, a move
played on the board gets the network's reply and the overlay, and a second tab sees a new
checkpoint arrive without a reload."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

selenium = pytest.importorskip("selenium")
from selenium import webdriver                                     # noqa: E402
from selenium.webdriver.common.by import By                        # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait            # noqa: E402

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="needs Debian's chromium and chromium-driver")]


@pytest.fixture(scope="module")
def server(tmp_path_factory, dashboard_run):
    run = dashboard_run(tmp_path_factory.mktemp("dash") / "run")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "dashboard", run.root,
                             "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://\S+", line).group(0)
        yield run, url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--window-size=1400,1800"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver, predicate, timeout=30):
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: predicate(d))


def test_the_page_in_a_browser(server, browser, dashboard_checkpoint, tmp_path):
    run, url = server
    browser.get(url)
    # the page loads and the curve shows the run's three rated checkpoints
    points = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#curve-time circle[data-player]"))
    assert [p.get_attribute("data-player") for p in points] == ["ckpt-100", "ckpt-200", "ckpt-300"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#curve-games circle[data-player]")) == 3
    assert browser.find_element(By.CSS_SELECTOR, '#status dd[data-key="evals/s"]').text == "1235"
    assert browser.find_element(By.ID, "live").text == "live"
    browser.save_screenshot(str(tmp_path / "page.png"))

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
