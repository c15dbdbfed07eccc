"""`fastgo bench gtp`, in this process: the Leela Zero weights file has the layout Leela Zero 0.17
reads (line count and values per line from its loader's rules, written out here independently
of the writer), and bad arguments are one-line errors. Leela Zero playing from one and the whole
bench run end to end are in tests/system/bench/test_bench_gtp_process.py."""
import math

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
