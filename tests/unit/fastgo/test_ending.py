"""The decided-position test (fastgo.ending) and the "decided" pass rule built on it: boards from
ASCII diagrams ('X' Black, 'O' White), each expectation reasoned in its comment."""
import numpy as np
import pytest

from fastgo.board import Board
from fastgo.ending import decided, own_area
from fastgo.game import Game
from fastgo.move_choice import choose_move, own_area_points, points_instead_of_pass

# Black owns columns A-C, White E-G... on 7x7: two walls, each with two eyes cut by a stone.
TWO_WALLS = """
    . X . X O . O
    . X . X O . O
    X X X X O O O
    . X . X O . O
    . X . X O . O
    X X X X O O O
    . X . X O . O
"""


@pytest.mark.parametrize("diagram, expected", [
    # the empty board: no owner anywhere
    ("""
     . . . . .
     . . . . .
     . . . . .
     . . . . .
     . . . . .""", False),
    # one stone owns the board but has one eye: an untrained network's early pass stays refused
    ("""
     . . . . .
     . . . . .
     . . X . .
     . . . . .
     . . . . .""", False),
    # Black's and White's walls, each cut into several eyes: decided
    (TWO_WALLS, True),
    # column D dame between two walls with eyes: a point either side can fill
    ("""
     . X . . O . O
     . X . . O . O
     X X X . O O O
     . X . . O . O
     . X . . O . O
     X X X . O O O
     . X . . O . O""", False),
    # one White stone inside Black's area: the region around it reaches both colours
    ("""
     O X . X O . O
     . X . X O . O
     X X X X O O O
     . X . X O . O
     . X . X O . O
     X X X X O O O
     . X . X O . O""", False),
    # Black's wall with one big eye only (rows 0-1 of A-C are one region): one eye, not decided
    ("""
     . . . X O . O
     . . . X O . O
     X X X X O O O
     X X X X O . O
     X X X X O . O
     X X X X O O O
     X X X X O . O""", False),
])
def test_decided_by_diagram(diagram, expected):
    assert decided(Board.from_ascii(diagram)) is expected


SEKI = """
    . X O O O X O O .
    X X O O O X O O O
    . X O O O X O O .
    X X O O O X O O O
    . X O . . X O O .
    X X O X X X O O O
    . X O X X X O O .
    X X O X X X O O O
    . X O X X X O O .
"""


def test_seki_dame_is_decided_and_a_fillable_point_is_not():
    # The inner White group (column C and the top of D-E) and the inner Black group (column F
    # and the bottom of D-E) share the liberties D5 and E5 and have no eye: a stone of either
    # colour on either point joins its group and leaves it one liberty, capturing nothing. The
    # outer walls have eyes on columns A and J. Seki: decided, the dame D5/E5 nobody's.
    board = Board.from_ascii(SEKI)
    assert decided(board) is True
    # White with an eye at D9 (its group then has three liberties): White on D5 keeps two and
    # kills Black's inner group, so D5/E5 are no seki dame and the position is not decided.
    assert decided(Board.from_ascii(SEKI.replace(". X O O O X O O .", ". X O . O X O O .", 1))) \
        is False


def test_a_stone_in_atari_inside_the_area_is_not_decided():
    # White's stone at A7 (top-left) has one liberty: Black can capture it, so the region is no
    # seki and the position is not decided, though the region is small.
    board = Board.from_ascii("""
        O . X . X O O
        X X X . X O .
        . . X X X O O
        X X X O O O .
        . . X O . O O
        X X X O O . O
        . . X O . O .
    """)
    assert decided(board) is False


def test_snapback_shape_is_not_decided_until_captured():
    # A White throw-in at B7 inside Black's eye space: capturable, so not decided; once Black
    # captures it (B7 empty again, Black to play elsewhere), the position is Black's two eyes.
    before = Board.from_ascii(TWO_WALLS.replace(". X . X O . O", "O X . X O . O", 1))
    assert decided(before) is False
    assert decided(Board.from_ascii(TWO_WALLS)) is True


def _two_walls_game():
    cells = "".join(Board.from_ascii(TWO_WALLS).to_ascii().split())
    game = Game(7, 0.5)
    black = [m for m, ch in enumerate(cells) if ch == "X"]
    white = [m for m, ch in enumerate(cells) if ch == "O"]
    game.setup(black=black, white=white)
    return game


def test_decided_rule_allows_the_pass_where_fill_refuses_it():
    game = _two_walls_game()
    nn = 49
    visits = np.zeros(nn + 1, np.int32)
    visits[[0, nn]] = (3, 5)
    assert len(game.unfilled_points()) > 0           # own eyes bigger than one point are left
    fill = points_instead_of_pass(game, visits, pass_rule="fill", winning_pass=False)
    assert len(fill) > 0
    assert len(points_instead_of_pass(game, visits, pass_rule="decided", winning_pass=False)) == 0


def test_decided_rule_refuses_the_early_pass():
    game = Game(9, 7.5)
    game.play(40)
    visits = np.zeros(82, np.int32)
    visits[[30, 81]] = (1, 9)
    refused = points_instead_of_pass(game, visits, pass_rule="decided", winning_pass=False)
    assert len(refused) == 80          # every empty point (none is White's eye) instead of a pass


def _regions(ascii_rows):
    """(points, colours bordering) of every empty region, by a plain flood fill."""
    n = len(ascii_rows)
    seen, out = set(), []
    for r in range(n):
        for c in range(n):
            if ascii_rows[r][c] != "." or (r, c) in seen:
                continue
            stack, points, border = [(r, c)], [], set()
            seen.add((r, c))
            while stack:
                y, x = stack.pop()
                points.append((y, x))
                for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    v, u = y + dy, x + dx
                    if 0 <= v < n and 0 <= u < n:
                        ch = ascii_rows[v][u]
                        if ch == "." and (v, u) not in seen:
                            seen.add((v, u))
                            stack.append((v, u))
                        elif ch != ".":
                            border.add(ch)
            out.append((points, border))
    return out


def _random_game_checked(seed):
    # A property over random play: wherever the test says decided, every empty region borders
    # one colour, or borders both and has at most 3 points (seki dame), and the Tromp-Taylor
    # score equals stones plus one-colour regions counted here independently.
    rng = np.random.default_rng(seed)
    game = Game(7, 0.5)
    seen_decided = 0
    for _ in range(400):
        if game.is_over():
            break
        legal = [m for m in np.flatnonzero(game.legal_moves()[:49])
                 if not game.board.is_eye(int(m), game.to_move)]
        move = int(rng.choice(legal)) if legal else game.pass_move
        game.play(move)
        board = game.board
        if not decided(board):
            continue
        seen_decided += 1
        rows = board.to_ascii().splitlines()
        black = sum(row.count("X") for row in rows)
        white = sum(row.count("O") for row in rows)
        for points, border in _regions(rows):
            assert border in ({"X"}, {"O"}) or (border == {"X", "O"} and len(points) <= 3)
            black += len(points) if border == {"X"} else 0
            white += len(points) if border == {"O"} else 0
        assert board.score() == pytest.approx(black - white - 0.5)
    return seen_decided


@pytest.mark.parametrize("seed", range(20))
def test_decided_positions_score_as_their_area(seed):
    _random_game_checked(seed)


def test_random_play_reaches_decided_positions():
    # the property above is not vacuous: random play without eye filling on 7x7 reaches a
    # decided position in most games (each ends with both sides' groups walled in with eyes)
    assert sum(_random_game_checked(seed) > 0 for seed in range(20)) >= 10


def test_own_area_is_the_regions_of_the_side_to_move_only():
    board = Board.from_ascii(TWO_WALLS)            # Black to move
    cells = "".join(board.to_ascii().split())
    own = own_area(board)
    # Black's regions are the empty points of columns A and C; White's (columns F) are not
    expected = [m for m, ch in enumerate(cells) if ch == "." and m % 7 in (0, 2)]
    assert np.flatnonzero(own).tolist() == expected


class FixedRoot:
    """What choose_move reads of a search: its root choice, visits and priors."""

    def __init__(self, visits, priors, move):
        self.visits, self.priors, self.move = visits, priors, move

    def choose_move(self, g, temperature=None, resign=True):
        return self.move

    def root_visits(self, g):
        return self.visits.copy()

    def root_priors(self, g):
        return self.priors.copy()


def chosen(game, move, visits, priors, **rule):
    return choose_move(FixedRoot(visits, priors, move), 0, game, **rule)


def test_decided_plays_the_pass_for_a_stone_in_the_own_area():
    game = _two_walls_game()                       # decided, Black to move
    visits = np.zeros(50, np.int32)
    visits[[0, 5, 49]] = (6, 2, 1)
    priors = np.full(50, 0.02, np.float32)
    # A7 (move 0) is in Black's own area: the pass instead under "decided", the stone under fill
    assert chosen(game, 0, visits, priors, pass_rule="decided", winning_pass=False) == 49
    assert chosen(game, 0, visits, priors, pass_rule="fill", winning_pass=False) == 0
    # F7 (move 5) is in White's area: a throw-in is the player's own business
    assert chosen(game, 5, visits, priors, pass_rule="decided", winning_pass=False) == 5
    # the caller's own points (self-play has them for the policy target) are taken as given
    assert chosen(game, 5, visits, priors, pass_rule="decided", winning_pass=False,
                  own_points=np.array([5])) == 49
    assert own_area_points(game, "decided").tolist() == np.flatnonzero(own_area(game.board)).tolist()
    assert len(own_area_points(game, "fill")) == 0
    # not decided (a White stone in Black's area): the rule leaves the stone alone
    undecided = Game(9, 7.5)
    undecided.play(40)
    assert len(own_area_points(undecided, "decided")) == 0


# --- fuzz: any board, any size --------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def boards(draw):
    """A board of size 2..9 from random stones placed by playing (legal: captures, no suicide)
    and passes, with the side to move either colour."""
    size = draw(st.integers(2, 9))
    game = Game(size, 0.5)
    for move in draw(st.lists(st.integers(0, size * size), max_size=3 * size * size)):
        if game.is_over():
            break
        if game.is_legal(move):
            game.play(move)
    return game.board


@FUZZ
@given(board=boards())
def test_fuzz_decided_and_own_area_agree_with_a_plain_count(board):
    rows = board.to_ascii().splitlines()
    n = len(rows)
    regions = _regions(rows)
    me = "X" if board.to_move == 1 else "O"
    own = own_area(board)
    expected = np.zeros(n * n, np.uint8)
    for points, border in regions:
        if border == {me}:
            for y, x in points:
                expected[y * n + x] = 1
    assert own.tolist() == expected.tolist()
    if decided(board):
        assert regions, "a board with no empty point is never reached by legal play"
        for points, border in regions:
            assert border in ({"X"}, {"O"}) or (border == {"X", "O"} and len(points) <= 3)
