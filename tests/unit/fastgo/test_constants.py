"""fastgo.constants: the board-size range and the planes per encoding in one place, read by the
kernels (constants.pxd) and by Python (constants.py, stdlib only), the two held to each other,
and spelt nowhere else."""
import pathlib
import re

import numpy as np
import pytest

from fastgo import constants
from fastgo.board import Board
from fastgo.features import num_planes
from fastgo.symmetry import transform_planes

ROOT = pathlib.Path(__file__).resolve().parents[3]
# Restatements of the numbers: a literal range, a bound compared against, a product of sides,
# the largest board's point or move count, a plane count keyed by encoding.
RESTATEMENTS = re.compile(
    r"\b2 ?\.\. ?25\b|<= ?25\b|\b25 ?\* ?25\b|min=2, max=25|\bSIZE ?= ?(2|25)\b|\b62[56]\b"
    r"|\b2, ?25\b|from 2 to 25|above 25|[\"']alphazero[\"']: ?17|[\"']liberty[\"']: ?11")


def pxd_constants():
    """NAME -> int of the enum in fastgo/constants.pxd (its `NAME = VALUE` lines)."""
    text = (ROOT / "fastgo" / "constants.pxd").read_text(encoding="utf-8")
    return {name: int(value) for name, value in
            re.findall(r"^\s+([A-Z_]+)\s*=\s*(\d+)\b", text, flags=re.MULTILINE)}


def test_python_view_matches_the_pxd():
    pxd = pxd_constants()
    assert (pxd["MIN_SIZE"], pxd["MAX_SIZE"]) == (constants.MIN_BOARD_SIZE,
                                                  constants.MAX_BOARD_SIZE)
    assert pxd["MAX_POINTS"] == constants.MAX_BOARD_POINTS
    assert pxd["MAX_MOVES"] == constants.MAX_BOARD_POINTS + 1
    assert pxd["PADDED"] == (constants.MAX_BOARD_SIZE + 2) ** 2 + 1
    assert {"alphazero": pxd["AZ_PLANES"], "liberty": pxd["LIB_PLANES"],
            "katago": pxd["KATAGO_PLANES"]} == constants.ENCODING_PLANES


def test_python_view_matches_the_kernels():
    assert (constants.MIN_BOARD_SIZE, constants.MAX_BOARD_SIZE) == (2, 25)
    assert constants.MAX_BOARD_POINTS == 25 * 25
    assert constants.SIZE_RANGE == "2..25"
    for name, planes in constants.ENCODING_PLANES.items():
        assert num_planes(name) == planes
    assert constants.ENCODING_PLANES == {"alphazero": 17, "liberty": 11, "katago": 16}


def test_the_kernels_take_exactly_the_range():
    for size in (constants.MIN_BOARD_SIZE, constants.MAX_BOARD_SIZE):
        assert Board(size).size == size
    for size in (constants.MIN_BOARD_SIZE - 1, constants.MAX_BOARD_SIZE + 1):
        with pytest.raises(ValueError, match="2..25"):
            Board(size)
    with pytest.raises(ValueError, match="above 25"):
        transform_planes(np.zeros((1, 26, 26), np.uint8), 1)


def test_every_kernel_refuses_a_size_outside_the_range_in_one_message():
    # constants.pxd's check_board_size, the one check of every kernel that takes a board size
    from fastgo.mcts import BatchedSearch
    from fastgo.playout_bench import bench_playouts
    from fastgo.policy_play import PolicyPlay
    from fastgo.replay import check_game

    entries = {"Board": lambda n: Board(n), "BatchedSearch": lambda n: BatchedSearch(size=n),
               "PolicyPlay": lambda n: PolicyPlay(size=n),
               "check_game": lambda n: check_game(n, 7.5, np.zeros(0, np.int16)),
               "bench_playouts": lambda n: bench_playouts(n, 0.0)}
    for name, make in entries.items():
        for size in (constants.MIN_BOARD_SIZE - 1, constants.MAX_BOARD_SIZE + 1):
            with pytest.raises(ValueError) as raised:
                make(size)
            assert str(raised.value) == f"board size must be {constants.SIZE_RANGE}, got {size}", name
        make(constants.MIN_BOARD_SIZE)


def test_no_restatement_outside_the_constants_module(project_packages):
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix not in (".py", ".pyx", ".pxd") or \
                    path.relative_to(ROOT).as_posix() in ("fastgo/constants.pxd",
                                                          "fastgo/constants.py"):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if RESTATEMENTS.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "spell these through fastgo.constants:\n" + "\n".join(found)
