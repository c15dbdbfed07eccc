"""Command-line errors are one line naming what is wrong, exit status 2, never a traceback; the
command's help and version answer."""
import subprocess
import sys

import pytest
import torch


def fastgo(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *args], capture_output=True,
                          text=True, timeout=timeout)


CASES = [
    (["bench", "server", "--batch", "0"], "--batch"),
    (["bench", "server", "--clients", "0"], "--clients"),
    (["bench", "mcts", "--board", "30"], "--board"),
    (["bench", "selfplay", "--workers", "0"], "--workers"),
    (["bench", "train", "--games", "0"], "--games"),
    (["cluster", "--duration", "forever"], "--duration"),
    (["cluster", "--config", "no/such/file.toml"], "no/such/file.toml"),
    (["bench", "nothing"], "usage: fastgo bench"),
    (["nothing"], "unknown command"),
]
if not torch.cuda.is_available():
    CASES.append((["bench", "server", "--device", "cuda"], "no CUDA device"))


@pytest.mark.parametrize("args, needle", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_one_line_and_status_2(args, needle):
    out = fastgo(*args)
    assert out.returncode == 2, out
    assert "Traceback" not in out.stderr
    assert needle in out.stderr
    first = out.stderr.strip().splitlines()
    assert needle in first[0] or args[0] == "bench" and len(args) == 2 or args == ["nothing"]


def test_version_and_bench_help():
    out = fastgo("--version")
    assert out.returncode == 0 and out.stdout.startswith("fastgo ")
    out = fastgo("bench", "--help")
    assert out.returncode == 0
    for name in ("board", "mcts", "server", "selfplay", "train"):
        assert f"  {name} " in out.stdout


def test_help_shows_defaults():
    out = fastgo("bench", "selfplay", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "(default: 10.0)" in text and "(default: configs/9x9_cpu.toml)" in text
