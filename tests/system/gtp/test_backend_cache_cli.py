"""`fastgo gtp --model` (backend auto) with a hostile backend cache in $XDG_CACHE_HOME: it
answers, says at most one line about the cache on stderr, never a traceback, and nothing from
ONNX Runtime's telemetry."""
import json
import os
import subprocess
import sys

import pytest

KEY_TABLE_LIST = {"choice": "torch-fp32", "table": []}


def _table_list(path, key):
    path.write_text(json.dumps({key: KEY_TABLE_LIST}))


# One case of each way the process meets a cache (each is a `fastgo gtp` that measures the
# backends again: about 7 CPU-s): one it reads and refuses, one it cannot open as a file (and
# must not block on), a folder it cannot write. The reader's fourteen hostile files, each one
# line at most, are tests/unit/network/test_backend_cache.py's, in one process.
CASES = {
    "table is a list": _table_list,
    "a FIFO": lambda path, key: os.mkfifo(path),
    "XDG_CACHE_HOME is a file": None,
}


@pytest.fixture(scope="module")
def model_and_key(tmp_path_factory):
    """A small checkpoint, and the cache key `fastgo gtp --model` looks it up under (read from
    the cache a first run writes)."""
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    root = tmp_path_factory.mktemp("cache")
    path = root / "tiny.ckpt"
    from network.loading import training_record
    # a checkpoint as the trainer writes it (komi and rules recorded: no notice about them)
    save_checkpoint(path, build_model(ModelConfig(blocks=1, channels=8, board_size=9), seed=0),
                    step=1, extra=training_record(7.5))
    out = gtp(path, root / "first")
    assert out.returncode == 0, out.stderr
    keys = list(json.loads((root / "first" / "fastgo" / "backends.json").read_text()))
    assert len(keys) == 1
    return path, keys[0]


def gtp(model, xdg):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", "gtp", "--model", str(model),
                           "--visits", "2"], input="name\nquit\n", capture_output=True, text=True,
                          env=dict(os.environ, XDG_CACHE_HOME=str(xdg)), timeout=300)


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_a_hostile_cache_costs_one_line_at_most(tmp_path, model_and_key, case):
    model, key = model_and_key
    if CASES[case] is None:
        xdg = tmp_path / "a-file"
        xdg.write_text("x")
    else:
        xdg = tmp_path / "xdg"
        (xdg / "fastgo").mkdir(parents=True)
        CASES[case](xdg / "fastgo" / "backends.json", key)
    out = gtp(model, xdg)
    assert out.returncode == 0 and "= fastgo" in out.stdout, out.stderr[-3000:]
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert "Traceback" not in out.stderr and "telemetry" not in out.stderr, lines
    assert len(lines) <= 1, lines
