"""`fastgo cluster --dashboard`: the dashboard starts beside the run as a child, its address is
printed, it serves the run's figures (the supervisor's logs/cluster.status.json among them), and
it is gone when the run stops (SIGTERM, once the figures were seen)."""
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

CLUSTER = """
[cluster]
workers = 1
evaluate = false
status_interval_s = 0.5
shutdown_s = 10
"""


@pytest.mark.slow
def test_cluster_starts_and_stops_its_dashboard(tmp_path, free_endpoint, wait_for,
                                                write_tiny_config):
    config = write_tiny_config(tmp_path / "c.toml", games=16, visits=8, shard_games=8,
                               endpoint=free_endpoint(), extra=CLUSTER)
    log = tmp_path / "cluster.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "cluster", "--config",
                                 config, "--run-dir", str(tmp_path / "run"), "--duration", "120s",
                                 "--dashboard", "--dashboard-port", "0"],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: re.search(r"dashboard at (http://127\.0\.0\.1:\d+/)", log.read_text()),
                 60, what="the dashboard's address")
        url = re.search(r"dashboard at (http://127\.0\.0\.1:\d+/)", log.read_text()).group(1)

        def figures():
            with urllib.request.urlopen(url + "api/snapshot", timeout=10) as response:
                status = json.load(response)["status"]
            return status if status["evals_per_s"] is not None else None
        status = wait_for(figures, 60, interval_s=0.5, what="the supervisor's figures")
        assert status["evals_per_s"] >= 0 and status["line"].startswith("0:")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "api/snapshot", timeout=5)
