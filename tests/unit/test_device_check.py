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
    write = ("import json,sys; "
             "json.dump({'evals_per_s': 300.0, 'raw_evals_per_s': 400.0}, open(sys.argv[1], 'w'))")
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


def test_cython_is_asked_for_only_where_the_kernels_must_be_built(monkeypatch, capsys):
    """Cython builds the kernels; it is no runtime module. Without it and without CUDA the one
    line is still 'no CUDA device' (a fresh virtual environment has no Cython); with a device
    and built kernels the build step is left out; with a device and no built kernels the line
    names Cython."""
    real = device_check.importlib.util.find_spec
    monkeypatch.setattr(device_check.importlib.util, "find_spec",
                        lambda name, *a: None if name == "Cython" else real(name, *a))
    assert "Cython" not in device_check.MODULES and device_check.missing_modules() == []
    monkeypatch.setattr(device_check, "cuda_device", lambda: None)
    assert device_check.main([]) == 2
    assert capsys.readouterr().err.startswith("device_check: no CUDA device")

    monkeypatch.setattr(device_check, "cuda_device", lambda: "Test GPU")
    monkeypatch.setattr(device_check, "kernels_built", lambda: False)
    assert device_check.main([]) == 2
    assert capsys.readouterr().err.strip() == ("device_check: missing Python module: Cython (the "
                                               "kernels are not built, and building them needs it)")

    ran = []
    monkeypatch.setattr(device_check, "kernels_built", lambda: True)
    monkeypatch.setattr(device_check, "steps", lambda: [
        device_check.Step("build kernels", script("raise SystemExit(1)"), 20),
        device_check.Step("tests", script("print('1 passed')"), 20)])
    monkeypatch.setattr(device_check, "run_step",
                        lambda step: ran.append(step.name) or device_check.Row(step.name))
    assert device_check.main([]) == 0 and ran == ["tests"]
    assert "already built; no Cython to rebuild" in capsys.readouterr().out


def test_the_kernels_count_as_built_only_when_each_has_its_compiled_module(tmp_path):
    (tmp_path / "fastgo").mkdir()
    assert not device_check.kernels_built(tmp_path)
    (tmp_path / "fastgo" / "board.pyx").write_text("")
    assert not device_check.kernels_built(tmp_path)
    suffix = device_check.importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "fastgo" / f"board{suffix}").write_bytes(b"")
    assert device_check.kernels_built(tmp_path)
