"""tools/device_check.py, the GPU check, where no GPU is: its step runner and table on fake
steps (one that passes with a figure and its ceiling, one that fails, one that runs out of
time, one whose JSON lacks the figure), the real steps' limits within the 8 minutes, and the
refusal without a CUDA device (one line, exit 2, before anything long)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("device_check", ROOT / "tools" / "device_check.py")
device_check = importlib.util.module_from_spec(SPEC)
sys.modules["device_check"] = device_check         # its dataclasses look their module up
SPEC.loader.exec_module(device_check)


def script(code):
    return [sys.executable, "-c", code]


def test_rows_of_a_passing_a_failing_and_a_slow_step(tmp_path):
    write = "import json,sys; json.dump({'evals_per_s': 300.0, 'raw_evals_per_s': 400.0}, open(sys.argv[1], 'w'))"
    ok = device_check.Step("bench", script(write) + ["{json}"], 20, device_check._selfplay)
    bad = device_check.Step("broken", script("import sys; print('boom', file=sys.stderr); sys.exit(3)"), 20)
    slow = device_check.Step("slow", script("import time; time.sleep(30)"), 0.5)
    empty = device_check.Step("no figure", script("import json,sys; json.dump({}, open(sys.argv[1], 'w'))")
                              + ["{json}"], 20, device_check._train)
    rows = [device_check.run_step(s, cwd=tmp_path) for s in (ok, bad, slow, empty)]
    assert (rows[0].status, rows[0].figure, rows[0].ceiling, rows[0].ratio) == ("ok", 300.0, 400.0, 0.75)
    assert rows[1].status == "failed" and rows[1].detail == "exit 3: boom"
    assert rows[2].status == "timeout" and 0.5 <= rows[2].seconds < 10
    assert rows[3].status == "failed" and "no figure" in rows[3].detail
    table = device_check.format_table(rows, "Test GPU")
    lines = table.splitlines()
    assert lines[0] == "fastgo GPU check: Test GPU"
    assert "300 evals/s" in lines[3] and "0.750" in lines[3]
    assert lines[-1].startswith("4 steps, 3 not ok")


def test_the_steps_fit_the_eight_minutes_and_cover_what_the_check_promises():
    steps = device_check.steps()
    assert sum(s.limit_s for s in steps) <= 8 * 60
    names = " ".join(s.name for s in steps)
    for part in ("CUDA tests", "bench server 9x9_gpu", "bench server 19x19_gpu",
                 "bench selfplay 9x9_gpu", "bench selfplay 19x19_gpu", "bench train",
                 "learning run"):
        assert part in names


def test_without_cuda_it_refuses_in_one_line():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "device_check.py")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    import torch
    if torch.cuda.is_available():            # a GPU machine runs the check for real elsewhere
        return
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("device_check: no CUDA device (torch.cuda.is_available() is "
                                   "false): nothing to check here")
