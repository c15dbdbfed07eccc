"""gnugo:LEVEL (play.specs) runs GNU Go as CGOS runs it: in a position where GNU Go with its
default settings passes and leaves a dead stone of ours on the board (which Tromp-Taylor then
counts for us), the spec's GNU Go captures it before it passes. Real GNU Go processes; every
move is played on our own board, which scores the end."""
import pytest

from fastgo import coords
from fastgo.board import BLACK, WHITE
from fastgo.game import Game
from fastgo.player_spec import parse_spec
from play.gtp.client import GtpClient
from play.specs import make_spec_side

pytestmark = pytest.mark.gnugo

SIZE, KOMI = 9, 7.5
DEAD = "B5"          # Black's stone inside White's side of the board


def setup_moves():
    """White walls column E, Black column F (alternating, Black first), then Black plays B5:
    White owns columns A-E but for B5, Black columns F-J; White to move."""
    moves = []
    for row in range(1, SIZE + 1):
        moves += [f"F{row}", f"E{row}"]
    return moves + [DEAD]


def play_out(argv, max_moves=60):
    """GNU Go (argv) plays White from the set-up position, Black passing after each of its
    moves, until the game ends by two passes; returns (our Game, White's moves as GTP text)."""
    game = Game(SIZE, KOMI)
    answers = []
    with GtpClient(argv, timeout=60) as engine:
        engine.send_many(["boardsize 9", "clear_board", f"komi {KOMI:g}"])
        for text in setup_moves():
            color = "b" if game.to_move == BLACK else "w"
            game.play(coords.from_gtp(text, SIZE))
            engine.send(f"play {color} {text}")
        while not game.is_over() and len(answers) < max_moves:
            answer = engine.send("genmove w")
            answers.append(answer.upper())
            game.play(coords.from_gtp(answer, SIZE))
            if not game.is_over():
                game.play(game.pass_move)
                engine.send("play b pass")
    assert game.is_over(), f"no end after {max_moves} moves: {answers}"
    return game, answers


def test_gnugo_spec_captures_dead_stones_that_default_gnugo_leaves(gnugo_path):
    spec = parse_spec("gnugo:1")
    dead = coords.from_gtp(DEAD, SIZE)
    row, col = divmod(dead, SIZE)

    default, moves = play_out([gnugo_path, "--mode", "gtp", "--level", "1"])
    assert moves[-1] == "PASS"                     # GNU Go's own rules: B5 is dead, it passes
    assert default.board.stones()[row, col] == BLACK
    # Tromp-Taylor: Black's 9 + 1 stones and columns F-J's 27 empty points = 37; White's area
    # is its stones alone, 9 and one per move it played (columns A-D touch B5: no one's)
    assert default.score() == 37 - (9 + len(moves) - 1) - 7.5 and default.winner == BLACK

    cgos, moves = play_out([gnugo_path, *spec.argv[1:]])
    assert moves[-1] == "PASS" and len(moves) > 1
    assert cgos.board.stones()[row, col] != BLACK   # captured before GNU Go passed
    # Black 36 (columns F-J), White 45 (columns A-E, stones and empty points)
    assert cgos.score() == 36 - 45 - 7.5 and cgos.winner == WHITE


def test_gnugo_spec_is_a_match_side_named_by_level(gnugo_path):
    side = make_spec_side("gnugo:3", move_timeout=60)
    try:
        assert side.name == "gnugo:3"
        assert side.argv[1:] == ["--mode", "gtp", "--level", "3", "--chinese-rules",
                                 "--capture-all-dead", "--positional-superko"]
        side.prepare(1, SIZE, KOMI)
        game = Game(SIZE, KOMI)
        move = side.moves([0], [game])[0]
        assert game.is_legal(move) and move != game.pass_move
    finally:
        side.close()
