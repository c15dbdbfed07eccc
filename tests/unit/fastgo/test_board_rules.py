"""The rules (fastgo.rules) and scoring (fastgo.scoring) through fastgo.board.Board, from ASCII
fixtures: captures, suicide, ko, eyes, scoring, setup, errors.

Diagrams: rows top to bottom, '.' empty, 'X' black, 'O' white; move = row * N + col.
"""
import numpy as np
import pytest

from fastgo.board import BLACK, EMPTY, NO_POINT, WHITE, Board, IllegalMoveError, Random


def mv(board, row, col):
    return row * board.size + col


def play_and_check(before, move_rc, after, to_move=BLACK, komi=7.5):
    board = Board.from_ascii(before, komi=komi, to_move=to_move)
    board.play(mv(board, *move_rc))
    assert board.to_ascii() == Board.from_ascii(after).to_ascii()
    return board


# --- captures ----------------------------------------------------------------------------------

def test_single_capture_in_centre():
    board = play_and_check("""
        .....
        ..X..
        .XO..
        ..X..
        .....
        """, (2, 3), """
        .....
        ..X..
        .X.X.
        ..X..
        .....
        """)
    assert board.captures == (1, 0)
    assert board.to_move == WHITE
    assert board.liberties()[1, 2] == 4


def test_multi_group_capture_with_one_move():
    board = play_and_check("""
        .XOX.
        .XO.X
        ..XOX
        ...X.
        .....
        """, (1, 3), """
        .X.X.
        .X.XX
        ..X.X
        ...X.
        .....
        """)
    assert board.captures == (3, 0)


def test_edge_capture():
    play_and_check("""
        .XO..
        ..X..
        .....
        .....
        .....
        """, (0, 3), """
        .X.X.
        ..X..
        .....
        .....
        .....
        """, to_move=BLACK)


def test_corner_capture_by_white():
    board = play_and_check("""
        XO...
        .....
        .....
        .....
        .....
        """, (1, 0), """
        .O...
        O....
        .....
        .....
        .....
        """, to_move=WHITE)
    assert board.captures == (0, 1)


def test_large_group_capture_restores_liberties():
    board = play_and_check("""
        OOOO.
        XXXXO
        .....
        .....
        .....
        """, (0, 4), """
        ....X
        XXXXO
        .....
        .....
        .....
        """)
    assert board.captures == (4, 0)
    libs = board.liberties()
    assert libs[1, 0] == 8       # the black chain: 4 above, 4 below
    assert libs[1, 4] == 1


# --- suicide -----------------------------------------------------------------------------------

def test_single_stone_suicide_is_illegal():
    board = Board.from_ascii("""
        .X...
        X....
        .....
        .....
        .....
        """, to_move=WHITE)
    assert not board.is_legal(0)
    with pytest.raises(IllegalMoveError, match="suicide") as info:
        board.play(0)
    assert info.value.reason == "suicide"
    assert "A5" in str(info.value)


def test_multi_stone_suicide_is_illegal_but_capture_is_not():
    board = Board.from_ascii("""
        .OX..
        OXX..
        XX...
        .....
        .....
        """, to_move=WHITE)
    assert board.illegal_reason(0) == "suicide"      # fills its own last liberty
    board = Board.from_ascii("""
        .OX..
        OOX..
        XX...
        .....
        .....
        """, to_move=BLACK)
    board.play(0)                                     # captures the three white stones
    assert board.to_ascii().splitlines()[:2] == ["X.X..", "..X.."]


# --- ko ----------------------------------------------------------------------------------------

KO = """
    .XO..
    X.XO.
    .XO..
    .....
    .....
    """


def test_ko_recapture_forbidden_then_allowed_after_a_move_elsewhere():
    board = Board.from_ascii(KO, to_move=WHITE)
    board.play(mv(board, 1, 1))                      # White takes the black stone at (1, 2)
    assert board.captures == (0, 1)
    assert board.ko_move == mv(board, 1, 2)
    with pytest.raises(IllegalMoveError, match="ko"):
        board.play(mv(board, 1, 2))
    assert not board.is_legal(mv(board, 1, 2))
    assert board.legal_moves()[mv(board, 1, 2)] == 0
    assert board.features("liberty")[10].sum() == 1
    board.play(mv(board, 4, 4))                      # threat
    board.play(mv(board, 4, 0))                      # answer
    assert board.ko_move == NO_POINT
    board.play(mv(board, 1, 2))                      # Black retakes
    assert board.ko_move == mv(board, 1, 1)


def test_pass_clears_ko():
    board = Board.from_ascii(KO, to_move=WHITE)
    board.play(mv(board, 1, 1))
    board.play(board.pass_move)
    board.play(board.pass_move)
    assert board.passes == 2 and board.is_over()


def test_capturing_two_stones_is_not_ko():
    board = Board.from_ascii("""
        .XXO.
        XOO..
        .....
        .....
        .....
        """, to_move=WHITE)
    board.play(0)                                    # takes two stones, keeps one liberty
    assert board.captures == (0, 2)
    assert board.ko_move == NO_POINT
    assert board.is_legal(1)                         # Black may take back at once


# --- errors and setup --------------------------------------------------------------------------

def test_illegal_moves_name_reason_and_leave_board_unchanged():
    board = Board.from_ascii("""
        X..
        ...
        ...
        """)
    before = (board.to_ascii(), board.hash, board.to_move, board.num_moves)
    for move, reason in ((0, "occupied"), (9 + 1, "off board"), (-1, "off board"),
                         (10 ** 9, "off board")):
        with pytest.raises(IllegalMoveError, match=reason):
            board.play(move)
        assert not board.is_legal(move)
    with pytest.raises(IllegalMoveError, match="off board"):
        board.play("D4")
    assert (board.to_ascii(), board.hash, board.to_move, board.num_moves) == before
    assert isinstance(IllegalMoveError("x"), ValueError)


def test_setup_refuses_bad_points_and_dead_groups_unchanged():
    board = Board(5)
    board.setup(black=[0, 6], white=[1])
    snapshot = board.to_ascii()
    with pytest.raises(ValueError, match="occupied"):
        board.setup(black=[2, 0])
    with pytest.raises(ValueError, match="off board"):
        board.setup(white=[25])
    with pytest.raises(ValueError, match="no liberty"):
        board.setup(black=[2])                       # white stone at 1 left without liberty
    assert board.to_ascii() == snapshot
    assert board.num_moves == 0 and board.to_move == BLACK


def test_ascii_round_trip_and_views():
    text = "X.O\n.XO\n..."
    board = Board.from_ascii(text, komi=0.5, to_move=WHITE)
    assert board.to_ascii() == text
    assert board.size == 3 and board.komi == 0.5 and board.to_move == WHITE
    assert board.stones().tolist() == [[BLACK, EMPTY, WHITE], [EMPTY, BLACK, WHITE],
                                       [EMPTY, EMPTY, EMPTY]]
    assert board.stones().dtype == np.int8 and board.liberties().dtype == np.int16
    assert board.liberties().tolist() == [[2, 0, 2], [0, 3, 2], [0, 0, 0]]
    with pytest.raises(ValueError):
        Board.from_ascii("X.\n...")
    with pytest.raises(ValueError):
        Board.from_ascii("X?\n..")


@pytest.mark.parametrize("size", [1, 26, 0, -3])
def test_bad_sizes_refused(size):
    with pytest.raises(ValueError):
        Board(size)


def test_to_move_setter_flips_hash_but_not_position_hash():
    board = Board(9)
    board.play(40)
    h, ph = board.hash, board.position_hash
    board.to_move = BLACK
    assert board.hash != h and board.position_hash == ph
    with pytest.raises(ValueError):
        board.to_move = 3


# --- eyes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("diagram, point, color, expected", [
    ("""
     .X.
     XX.
     ...""", (0, 0), BLACK, True),                    # corner, own diagonal
    ("""
     .X.
     XO.
     ...""", (0, 0), BLACK, False),                   # corner, enemy diagonal
    ("""
     .O.
     OO.
     ...""", (0, 0), WHITE, True),
    ("""
     .O.
     OO.
     ...""", (0, 0), BLACK, False),                   # the other colour's eye
    ("""
     X.X
     .X.
     ...""", (0, 1), BLACK, True),                    # edge, empty diagonals are safe
    ("""
     X.X
     .X.
     ...""", (1, 1), BLACK, False),                   # occupied
    ("""
     ...
     .X.
     ...""", (0, 0), BLACK, False),                   # an empty neighbour
])
def test_eye_cases(diagram, point, color, expected):
    board = Board.from_ascii(diagram)
    assert board.is_eye(mv(board, *point), color) is expected


def test_eye_off_board_is_false():
    board = Board(5)
    assert not board.is_eye(-1, BLACK) and not board.is_eye(25, BLACK)


def test_false_eye_two_enemy_diagonals_and_edge_false_eye():
    board = Board.from_ascii("""
        .....
        .OXO.
        .X.X.
        ..X..
        .....
        """)
    assert board.is_eye(mv(board, 2, 2), BLACK) is False   # two white diagonals: false eye
    board = Board.from_ascii("""
        .....
        ..XO.
        .X.X.
        ..X..
        .....
        """)
    assert board.is_eye(mv(board, 2, 2), BLACK)             # one enemy diagonal in the centre
    board = Board.from_ascii("""
        X.XO.
        .XX..
        .....
        .....
        .....
        """)
    assert board.is_eye(mv(board, 0, 1), BLACK)
    board = Board.from_ascii("""
        X.X..
        OXX..
        .....
        .....
        .....
        """)
    assert not board.is_eye(mv(board, 0, 1), BLACK)         # edge: one enemy diagonal is false


# --- scoring -----------------------------------------------------------------------------------

def test_score_split_board():
    board = Board.from_ascii("""
        ..XO.
        ..XO.
        ..XO.
        ..XO.
        ..XO.
        """, komi=7.5)
    assert board.score() == 15 - 10 - 7.5


def test_score_dame_and_seki_regions_count_for_nobody():
    board = Board.from_ascii("""
        .X.O.
        XX.OO
        .....
        OO.XX
        .O.X.
        """, komi=0.0)
    # black: 6 stones + (0,0) + (4,4); white: 6 stones + (0,4) + (4,0); the middle is dame
    assert board.score() == 0.0


def test_score_empty_board_is_minus_komi():
    assert Board(9, komi=6.5).score() == -6.5


def test_score_with_captured_space():
    board = Board.from_ascii("""
        .X.
        X.X
        .X.
        """, komi=0.5)
    assert board.score() == 9 - 0.5


# --- game end, random moves, playouts ----------------------------------------------------------

def test_two_passes_end_and_move_cap():
    board = Board(2, komi=0.0)
    assert board.max_moves == 8
    board.play(board.pass_move)
    assert not board.is_over() and board.last_move == board.pass_move
    board.play(board.pass_move)
    assert board.is_over()
    board = Board(9)
    rng = Random(5)
    n = board.playout(rng)
    assert board.is_over() and n == board.num_moves <= board.max_moves


def test_random_move_is_legal_and_not_own_eye_and_uniform():
    board = Board.from_ascii("""
        .X...
        XX...
        .....
        .....
        .....
        """)
    rng = Random(11)
    counts = {}
    for _ in range(4400):
        move = board.random_move(rng)
        counts[move] = counts.get(move, 0) + 1
    assert mv(board, 0, 0) not in counts                 # own eye
    assert set(counts) == set(range(3, 25)) - {5, 6} | {2}
    assert min(counts.values()) > 120 and max(counts.values()) < 280   # 200 expected each


def test_random_move_passes_when_only_eyes_remain():
    board = Board.from_ascii("""
        .X.
        XXX
        .X.
        """)
    rng = Random(1)
    assert board.random_move(rng) == board.pass_move
    assert board.random_move_fast(rng) == board.pass_move


def test_random_generator_helpers():
    rng = Random(7)
    values = [rng.integers(10) for _ in range(200)]
    assert min(values) == 0 and max(values) == 9
    assert all(3 <= rng.integers(3, 5) < 5 for _ in range(50))
    assert 0.0 <= rng.random() < 1.0
    assert [Random(3).integers(1000) for _ in range(2)] == [Random(3).integers(1000)] * 2


def test_pickle_and_copy_keep_the_position():
    import copy
    import pickle

    board = Board.from_ascii(KO, to_move=WHITE)
    board.play(mv(board, 1, 1))
    for clone in (pickle.loads(pickle.dumps(board)), copy.deepcopy(board), board.copy()):
        assert clone.to_ascii() == board.to_ascii()
        assert (clone.hash, clone.ko_move, clone.to_move) == (board.hash, board.ko_move,
                                                              board.to_move)
        assert np.array_equal(clone.features(), board.features())


# --- golden outputs: a change of rules, random stream or hashing shows up here as a diff ------

@pytest.mark.parametrize("size, seed, moves, score, position_hash, captures", [
    (9, 42, 92, -16.5, 0x6CD10A7D2AD0CCA5, (8, 13)),
    (19, 7, 515, 25.5, 0xB02F29EFE11E3F08, (113, 88)),
])
def test_golden_playouts(size, seed, moves, score, position_hash, captures):
    board = Board(size, komi=7.5)
    assert board.playout(Random(seed)) == moves
    assert (board.score(), board.position_hash, board.captures) == (score, position_hash, captures)


def test_golden_uniform_random_moves():
    rng = Random(42)
    board = Board(9)
    assert [board.random_move(rng) for _ in range(5)] == [6, 30, 55, 74, 80]


# --- the benchmark command ---------------------------------------------------------------------

def test_bench_board_command_writes_json(tmp_path, capsys):
    import json

    from fastgo_cli.main import main

    out = tmp_path / "board.json"
    assert main(["bench", "board", "--repeats", "1", "--seconds", "0.05", "--python-seconds", "0.05",
                 "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert set(figures) == {"9", "19"}
    for size in ("9", "19"):
        row = figures[size]
        # Against an independent count of the same work: 20 random playouts from the empty
        # board played here through Board.playout. The rates are compared in
        # tests/system/bench/test_bench_board_rates.py.
        rng = Random(7)
        lengths = [Board(int(size)).playout(rng) for _ in range(20)]
        assert row["moves_per_playout"] == pytest.approx(sum(lengths) / len(lengths), rel=0.2)
        assert row["playouts_per_s"] > 0 and row["python_playouts_per_s"] > 0
        assert row["moves_per_s"] == pytest.approx(row["playouts_per_s"] * row["moves_per_playout"],
                                                   rel=2e-2)
        assert row["runs_playouts_per_s"] == [row["playouts_per_s"]]       # one repeat
        assert row["ratio_vs_python"] == pytest.approx(
            row["playouts_per_s"] / row["python_playouts_per_s"], rel=1e-2)
    assert "playouts/s" in capsys.readouterr().out
    assert main(["bench", "board", "--seconds", "0"]) == 2
