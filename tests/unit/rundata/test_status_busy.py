"""A role's heartbeat through a long step that beats nothing (StatusFile.busy): kept fresh with
"busy" while the step runs, within its limit; silent past the limit, so a hang is still found."""
import json
import os
import time

from rundata.rundir import StatusFile, open_run_dir


def _wait_for(predicate, timeout_s=10.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def test_busy_keeps_the_heartbeat_fresh_and_then_drops_its_mark(tmp_path):
    status = StatusFile(open_run_dir(tmp_path / "run"), "train", interval_s=0.05)
    status.beat(lambda: {"step": 7}, force=True)
    first = os.path.getmtime(status.path)
    seen = []
    with status.busy("compiling the training step", limit_s=60):
        # the body itself writes nothing: every rewrite is the busy thread's
        assert _wait_for(lambda: (_read(status.path) or {}).get("busy") ==
                         "compiling the training step")
        for _ in range(3):
            before = os.stat(status.path).st_mtime_ns
            assert _wait_for(lambda: os.stat(status.path).st_mtime_ns != before)
            seen.append(_read(status.path))
    after = _read(status.path)
    assert all(s is None or s["step"] == 7 for s in seen)
    assert os.path.getmtime(status.path) >= first
    assert after == {"step": 7}                   # the last figures, without the busy mark


def test_busy_falls_silent_past_its_limit(tmp_path):
    status = StatusFile(open_run_dir(tmp_path / "run"), "train", interval_s=0.02)
    status.beat(lambda: {"step": 1}, force=True)
    with status.busy("a step that hangs", limit_s=0.2):
        time.sleep(0.4)                            # past the limit: no more rewrites
        frozen = os.stat(status.path).st_mtime_ns
        time.sleep(0.3)
        assert os.stat(status.path).st_mtime_ns == frozen
        assert _read(status.path)["busy"] == "a step that hangs"
