"""Differential test of the rules against GNU Go through GTP.

Our random player plays whole games in a fastgo Game; every move is also played in GNU Go.
After each move the stones (list_stones), the capture counts and the legal points of the side
to move agree exactly with our Board (simple ko, as GNU Go uses by default); our Game may refuse
a few more points, and only by positional superko; against GNU Go run with
--positional-superko, our Game's legal points agree exactly. GNU Go's `all_legal` gives the
legal points in one command; `is_legal` is asked point by point (pipelined) on a sample of
positions to check that both say the same.

Every third game of 9x9 and 19x19 starts from fixed handicap stones (setup, White first).
One GNU Go process per board size, `clear_board` between games. FASTGO_GNUGO_GAMES=N plays N
games of 9x9 and N // 3 of 19x19 (default N = 20: 20 and 6), plus small boards (5x5, 7x7;
3x3, 5x5 and 9x9 under positional superko).
"""
import os
import subprocess
import sys

import pytest

from fastgo import coords
from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from play.gtp.client import GtpClient
from play.gtp.engine import handicap_points
from play.players import RandomPlayer

pytestmark = pytest.mark.gnugo


GAMES = int(os.environ.get("FASTGO_GNUGO_GAMES", "20"))
# (board size, games, ask is_legal point by point every this many moves)
PLAN = [(5, GAMES, 3), (7, max(1, GAMES // 2), 5), (9, GAMES, 7), (19, max(1, GAMES // 3), 40)]
# GNU Go with --positional-superko against our Game's own legality: small boards, where
# positions repeat most often.
SUPERKO_PLAN = [(3, 3 * GAMES), (5, 3 * GAMES), (9, GAMES)]


@pytest.fixture(scope="module")
def gnugo_engines(gnugo_path):
    """gnugo_engines(size, superko=False) -> GNU Go's GtpClient on a size x size board (run with
    --positional-superko when superko): one process per (size, superko), started on first use."""
    engines = {}

    def engine(size, superko=False):
        key = (size, superko)
        if key not in engines:
            argv = [gnugo_path, "--mode", "gtp", "--level", "0"]
            if superko:
                argv.append("--positional-superko")
            client = GtpClient(argv, timeout=60)
            client.send(f"boardsize {size}")
            engines[key] = client
        return engines[key]

    try:
        yield engine
    finally:
        for client in engines.values():
            client.close()


def _ours(game, size):
    stones = game.board.stones().ravel()
    black = {coords.to_gtp(m, size) for m in range(size * size) if stones[m] == BLACK}
    white = {coords.to_gtp(m, size) for m in range(size * size) if stones[m] == WHITE}
    return black, white


def _names(moves, size):
    return sorted(coords.to_gtp(m, size) for m in moves)


def _check_position(gnugo, game, size, point_by_point, where, superko=False):
    board = game.board
    color = "black" if board.to_move == BLACK else "white"
    answers = gnugo.send_many(["list_stones black", "list_stones white", "captures black",
                               "captures white", f"all_legal {color}"])
    their_black, their_white = set(answers[0][1].split()), set(answers[1][1].split())
    our_black, our_white = _ours(game, size)
    assert (our_black, our_white) == (their_black, their_white), f"stones differ {where}"
    assert board.captures == (int(answers[2][1]), int(answers[3][1])), f"captures differ {where}"

    their_legal = {coords.from_gtp(v, size) for v in answers[4][1].split()}
    board_mask = board.legal_moves()
    game_over = game.is_over()
    game_mask = game.legal_moves() if not game_over else board_mask
    mask = game_mask if superko else board_mask
    our_legal = {m for m in range(size * size) if mask[m]}
    assert our_legal == their_legal, (
        f"legal points differ {where} for {color}: only ours {_names(our_legal - their_legal, size)}"
        f", only GNU Go's {_names(their_legal - our_legal, size)}\n{board.to_ascii()}")
    assert all(board.is_legal(m) == bool(board_mask[m]) for m in range(size * size))
    if not game_over:
        assert all(game.is_legal(m) == bool(game_mask[m]) for m in range(size * size))
    for m in range(size * size):
        if game_mask[m] != board_mask[m]:
            # Only positional superko may refuse more than the board's simple ko.
            assert not game_mask[m] and board.hash_after(m) in game.hash_history, where

    if point_by_point:
        points = range(size * size)      # occupied points too: is_legal must say 0
        answers = gnugo.send_many([f"is_legal {color} {coords.to_gtp(m, size)}" for m in points])
        for m, (_, text) in zip(points, answers):
            assert (text == "1") == (m in their_legal), f"is_legal and all_legal differ at {m} {where}"


def _play_one_game(gnugo, size, seed, sample_every, superko=False, handicap=0):
    """Plays one random game in both (after `handicap` fixed stones, White first); returns
    (moves, positions where superko refused a point)."""
    assert gnugo.send("clear_board") == ""
    game = Game(size=size, komi=7.5, superko=True)
    if handicap:
        points = handicap_points(size, handicap)
        assert set(gnugo.send(f"fixed_handicap {handicap}").split()) == \
            {coords.to_gtp(m, size) for m in points}
        game.setup(black=points)
        game.to_move = WHITE
    player = RandomPlayer(seed=seed)
    _check_position(gnugo, game, size, True, f"at the start (size {size}, seed {seed})", superko)
    superko_points = 0
    while not game.is_over():
        color = "b" if game.to_move == BLACK else "w"
        move = player.genmove(game)
        game.play(move)
        vertex = coords.to_gtp(move, size)
        assert gnugo.send(f"play {color} {vertex}") == "", f"GNU Go refused {color} {vertex}"
        number = len(game.moves)
        _check_position(gnugo, game, size, number % sample_every == 0,
                        f"after move {number} {color} {vertex} (size {size}, seed {seed})", superko)
        if not game.is_over():
            superko_points += int((game.legal_moves() != game.board.legal_moves()).sum())
    return len(game.moves), superko_points


@pytest.mark.parametrize("size, games, sample_every", PLAN, ids=[f"{p[0]}x{p[0]}" for p in PLAN])
def test_random_games_agree_with_gnugo(gnugo_engines, size, games, sample_every):
    gnugo = gnugo_engines(size)
    total = 0
    for index in range(games):
        handicap = (2 + index % 8) if size >= 9 and index % 3 == 2 else 0
        total += _play_one_game(gnugo, size, 1000 * size + index, sample_every, handicap=handicap)[0]
    assert total >= games * size     # games are not trivially short


@pytest.mark.parametrize("size, games", SUPERKO_PLAN, ids=[f"{p[0]}x{p[0]}" for p in SUPERKO_PLAN])
def test_superko_agrees_with_gnugo_positional_superko(gnugo_engines, size, games):
    gnugo = gnugo_engines(size, superko=True)
    refused = 0
    for index in range(games):
        refused += _play_one_game(gnugo, size, 7000 * size + index, 10 ** 9, superko=True)[1]
    if size <= 5 and games >= 30:
        assert refused > 0, "no position where superko mattered: the test lost its teeth"


def test_fastgo_engine_plays_a_game_against_gnugo(gnugo_path):
    """Both engines over GTP, as the arena will drive them: moves cross over, boards agree."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    ours = GtpClient([sys.executable, "-m", "fastgo_cli.main", "gtp", "--seed", "5"], timeout=60,
                     cwd=root, stderr=subprocess.DEVNULL)
    theirs = GtpClient([gnugo_path, "--mode", "gtp", "--level", "0"], timeout=60)
    try:
        for client in (ours, theirs):
            client.send("boardsize 9")
            client.send("clear_board")
            client.send("komi 7.5")
        players = {"b": ours, "w": theirs}
        color, passes, moves = "b", 0, 0
        while passes < 2 and moves < 150:
            vertex = players[color].send(f"genmove {color}")
            if vertex.lower() == "resign":
                break
            other = theirs if players[color] is ours else ours
            other.send(f"play {color} {vertex}")
            passes = passes + 1 if vertex.lower() == "pass" else 0
            moves += 1
            color = "w" if color == "b" else "b"
        for which in ("black", "white"):
            assert set(ours.send(f"list_stones {which}").split()) == \
                set(theirs.send(f"list_stones {which}").split())
        assert moves > 10
    finally:
        assert ours.close() == 0
        theirs.close()


def test_fixed_handicap_matches_gnugo(gnugo_path):
    from fastgo.gtp import GtpError

    with GtpClient([gnugo_path, "--mode", "gtp"], timeout=60) as gnugo:
        for size in (7, 8, 9, 10, 13, 19):
            gnugo.send(f"boardsize {size}")
            for count in range(1, 11):
                gnugo.send("clear_board")
                ok, text = gnugo.send_many([f"fixed_handicap {count}"], check=False)[0]
                try:
                    ours = {coords.to_gtp(m, size) for m in handicap_points(size, count)}
                except GtpError:
                    ours = None
                assert ours == (set(text.split()) if ok else None), (size, count, text)
