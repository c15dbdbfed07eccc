"""`fastgo bench gtp` with real processes: Leela Zero accepts a weights file the bench writes and
plays from it, the whole bench runs end to end (with Leela Zero where it is installed, fastgo
alone otherwise or on other sizes), and a failing engine is a one-line error. The weights
file's layout is checked in this process by tests/unit/fastgo_cli/test_bench_gtp.py."""
import json
import subprocess
import sys

import pytest

from fastgo_cli.bench.gtp import find_leelaz


@pytest.mark.slow
@pytest.mark.needs("leelaz")
def test_leelaz_plays_from_a_b1c8_weights_file(tmp_path):
    from fastgo import coords
    from fastgo.game import Game
    from fastgo_cli.bench.gtp import leelaz_argv, write_leelaz_weights
    from play.gtp.client import GtpClient

    program = find_leelaz()
    weights = write_leelaz_weights(tmp_path / "b1c8.txt", 1, 8)
    with GtpClient(leelaz_argv(program, weights, visits=8, threads=1), timeout=20) as engine:
        assert engine.send("version").strip() == "0.17"
        move = engine.send("genmove b").strip()
    point = coords.from_gtp(move, 19)
    assert point < 361 and Game(19, 7.5).is_legal(point)


@pytest.mark.slow
def test_bench_end_to_end(tmp_path):
    out = tmp_path / "gtp.json"
    done = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "bench", "gtp", "--net", "b1c8", "--visits", "8",
         "--moves", "2", "--threads", "1", "--backend", "torch-fp32", "--raw-seconds", "0.2",
         "--json", str(out)], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["model"] == "b1c8" and result["board_size"] == 19
    ours = result["fastgo"]
    assert len(ours["move_s"]) == 2 and ours["visits_per_s"] > 0 and ours["raw_evals_per_s"] > 0
    assert ours["backend"] == "torch-fp32" and ours["raw_batch"] == 8
    if find_leelaz() is None:
        assert result["leelaz"] is None and "measuring fastgo alone" in done.stderr
    else:
        lz = result["leelaz"]
        assert lz["version"] == "0.17" and len(lz["move_s"]) == 2
        assert len(lz["root_visits"]) == 2 and min(lz["root_visits"]) >= 8
        assert result["ratio"] == pytest.approx(ours["visits_per_s"] / lz["visits_per_s"], rel=1e-3)
        assert "ratio fastgo / leelaz" in done.stdout


@pytest.mark.slow
def test_other_sizes_measure_fastgo_alone(tmp_path):
    out = tmp_path / "gtp9.json"
    done = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "bench", "gtp", "--size", "9", "--net", "b1c8",
         "--visits", "8", "--moves", "1", "--threads", "1", "--backend", "torch-fp32",
         "--raw-seconds", "0.2", "--json", str(out)],
        check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "19x19 only" in done.stderr
    result = json.loads(out.read_text())
    assert result["leelaz"] is None and result["ratio"] is None
    assert result["fastgo"]["visits_per_s"] > 0


@pytest.mark.slow
def test_a_failing_engine_is_a_one_line_error():
    import shutil

    false = shutil.which("false")
    if false is None:
        pytest.skip("no `false` program")
    done = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "bench", "gtp", "--net", "b1c8", "--visits", "8",
         "--moves", "1", "--threads", "1", "--backend", "torch-fp32", "--raw-seconds", "0",
         "--leelaz", false], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "engine failed" in line]
    assert len(errors) == 1 and "leelaz" in errors[0]
