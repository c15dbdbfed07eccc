"""`fastgo bench gtp`: the Leela Zero weights file has the layout Leela Zero 0.17 reads (line
count and values per line from its loader's rules, written out here independently of the
writer), Leela Zero accepts one and plays from it, and the whole bench runs end to end."""
import json
import math
import subprocess
import sys

import pytest

from fastgo_cli.bench.gtp import find_leelaz, leelaz_weight_lines
from fastgo_cli.main import main


def expected_values_per_line(blocks, channels):
    """Leela Zero's v1 layout (src/Network.cpp load_v1_network), 19x19, 18 input planes:
    version line; 4 lines per 3x3 convolution (weights out*in*9, biases, BN means, BN variances)
    for the input layer (in = 18) and 2 per residual block (in = channels); policy head: 1x1
    conv to 2 filters (2*channels, 2, 2, 2), fc 2*361 -> 362 (261,364 and 362); value head: 1x1
    conv to 1 filter (channels, 1, 1, 1), fc 361 -> 256 (92,416 and 256), fc 256 -> 1 (256, 1)."""
    c = channels
    counts = [1]
    counts += [c * 18 * 9, c, c, c]
    counts += [c * c * 9, c, c, c] * (2 * blocks)
    counts += [2 * c, 2, 2, 2, 2 * 361 * 362, 362]
    counts += [c, 1, 1, 1, 361 * 256, 256, 256, 1]
    return counts


@pytest.mark.parametrize("blocks, channels, lines", [(1, 8, 27), (6, 64, 67)])
def test_weights_file_has_leela_zeros_layout(blocks, channels, lines):
    # lines = 1 version + 4 input conv + 8 per block + 14 head lines: b1c8 1+4+8+14 = 27,
    # b6c64 1+4+48+14 = 67
    text = list(leelaz_weight_lines(blocks, channels, seed=3))
    assert text[0] == "1"
    assert len(text) == lines
    values = [[float(x) for x in line.split()] for line in text[1:]]
    assert [1] + [len(v) for v in values] == expected_values_per_line(blocks, channels)
    # the loader's own inference: channels from the biases line (file line 3), blocks from the
    # line count, (lines - (1 + 4 + 14)) / 8
    assert len(text[2].split()) == channels
    assert (len(text) - 19) / 8 == blocks
    # batch-norm variances (every 4th line of the convolutions, then the two heads' BN lines)
    conv_lines = 4 * (1 + 2 * blocks)
    variances = [values[i] for i in range(3, conv_lines, 4)]
    variances += [values[conv_lines + 3], values[conv_lines + 6 + 3]]
    assert all(v > 0 for line in variances for v in line)
    assert all(math.isfinite(v) and abs(v) < 10 for line in values for v in line)


def test_weights_are_seeded():
    assert list(leelaz_weight_lines(1, 8, seed=1)) == list(leelaz_weight_lines(1, 8, seed=1))
    assert list(leelaz_weight_lines(1, 8, seed=1))[1] != list(leelaz_weight_lines(1, 8, seed=2))[1]


def test_explicit_missing_leelaz_and_bad_net_are_one_line_errors(capsys):
    assert main(["bench", "gtp", "--leelaz", "/nonexistent/leelaz"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not an executable" in err[0]
    assert main(["bench", "gtp", "--net", "b6"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bBLOCKScCHANNELS" in err[0]
    assert find_leelaz("/nonexistent/leelaz") is None


@pytest.mark.slow
def test_leelaz_plays_from_a_b1c8_weights_file(tmp_path):
    from fastgo import coords
    from fastgo.game import Game
    from fastgo_cli.bench.gtp import leelaz_argv, write_leelaz_weights
    from play.gtp_client import GtpClient

    program = find_leelaz()
    if program is None:
        pytest.skip("Leela Zero is not installed (leelaz on PATH or /usr/games/leelaz)")
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
