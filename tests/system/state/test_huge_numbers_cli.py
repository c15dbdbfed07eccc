"""Huge numbers given to `--set` on the commands that load a config (cluster, serve, selfplay,
train, compare --set-a): exit status 2 and one line naming the key, never a traceback."""
import subprocess
import sys

import pytest

HUGE = "1" + "0" * 400                # past float's range
DIGITS = "9" * 5000                   # past Python's int-string limit (4300 digits)
VALUES = [("selfplay.komi", HUGE), ("cluster.server_resources", f"{{CPU={HUGE}}}"),
          ("trainer.batch_size", DIGITS)]


def command(name, run_dir):
    if name == "compare":
        return ["compare", "quickstart", "quickstart", "--duration", "1m", "--out",
                str(run_dir), "--set-a"]
    if name == "serve":
        return ["serve", "--config", "quickstart", "--set"]
    return [name, "--config", "quickstart", "--run-dir", str(run_dir), "--set"]


@pytest.mark.parametrize("key, value", VALUES, ids=[k for k, _ in VALUES])
@pytest.mark.parametrize("name", ["cluster", "serve", "selfplay", "train", "compare"])
def test_huge_number_is_one_line_naming_the_key(tmp_path, name, key, value):
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main",
                          *command(name, tmp_path / "run"), f"{key}={value}"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and key in lines[0] and len(lines[0]) < 300, lines
