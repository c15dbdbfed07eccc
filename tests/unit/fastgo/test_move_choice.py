"""The move played after a search (fastgo.move_choice.choose_move): one function for self-play
(winning_pass=False) and play (winning_pass=True), fed the root's choice, visits and priors of
a search; the pass-rule vocabulary ("fill", "free": fastgo.variants.PassRule); the point GTP's
cleanup plays instead of a pass; policy-only play's rule; and a scan of the source that keeps the
choice in that one module."""
import re
from pathlib import Path

import numpy as np
import pytest

from fastgo.board import BLACK
from fastgo.game import RESIGN, Game
from fastgo.move_choice import (
    choose_move,
    point_instead_of_pass,
    points_instead_of_pass,
    policy_may_pass,
)
from fastgo.variants import OLD_PASS_RULES, PassRule, check_pass_rule


class FixedRoot:
    """What choose_move reads of a search: its root choice and the root's visits and priors of
    game g."""

    def __init__(self, visits, priors, move):
        self.visits, self.priors, self.move = np.asarray(visits), np.asarray(priors), move
        self.asked = []

    def choose_move(self, g, temperature=None, resign=True):
        self.asked.append((g, temperature, resign))
        return self.move

    def root_visits(self, g):
        return self.visits.copy()

    def root_priors(self, g):
        return self.priors.copy()


def chosen(game, move, visits, priors, *, g=0, pass_rule="fill", **rule):
    return choose_move(FixedRoot(visits, priors, move), g, game, pass_rule=pass_rule, **rule)


def test_play_keeps_the_pass_for_a_won_or_filled_board_only():
    game = Game(3, 0.5)
    pass_move = game.pass_move
    visits = np.zeros(10, np.int32)
    priors = np.full(10, 0.1, np.float32)
    visits[[2, 6]] = (3, 5)
    play = dict(winning_pass=True)
    assert chosen(game, pass_move, visits, priors, **play) == 6      # most visited
    priors[7] = 0.5
    assert chosen(game, pass_move, np.zeros(10, np.int32), priors, **play) == 7
    assert chosen(game, 3, visits, priors, **play) == 3   # a point stays a point
    game.play(4)
    game.play(pass_move)                       # White passed and Black wins as it stands
    assert chosen(game, 3, visits, priors, **play) == pass_move
    filled = Game(2, 0.5)                      # B 0, W pass, B 3: Black's only points are eyes
    for move in (0, filled.pass_move, 3):
        filled.play(move)
    filled.play(filled.pass_move)
    assert filled.to_move == BLACK and len(filled.unfilled_points()) == 0
    assert chosen(filled, filled.pass_move, np.zeros(5), np.ones(5), **play) == filled.pass_move


def test_self_play_plays_on_where_play_would_take_the_winning_pass():
    game = Game(3, 0.5)
    game.play(4)
    game.play(game.pass_move)                  # Black wins as it stands: play passes, self-play not
    visits = np.zeros(10, np.int32)
    visits[[2, 9]] = (1, 7)
    priors = np.full(10, 0.1, np.float32)
    assert chosen(game, game.pass_move, visits, priors, winning_pass=True) == game.pass_move
    assert chosen(game, game.pass_move, visits, priors, winning_pass=False) == 2
    assert len(points_instead_of_pass(game, visits, pass_rule="fill", winning_pass=True)) == 0
    assert 2 in points_instead_of_pass(game, visits, pass_rule="fill", winning_pass=False)


def test_free_and_earliest_pass():
    game = Game(3, 0.5)
    visits = np.zeros(10, np.int32)
    visits[[1, 9]] = (2, 5)
    assert len(points_instead_of_pass(game, visits, pass_rule="free", winning_pass=False)) == 0
    early = points_instead_of_pass(game, visits, pass_rule="free", winning_pass=False,
                                   earliest_pass=3)
    assert early.tolist() == [1]               # before move 3: the visited points only
    unvisited_pass = visits.copy()
    unvisited_pass[9] = 0
    assert len(points_instead_of_pass(game, unvisited_pass, pass_rule="fill",
                                      winning_pass=False)) == 0
    assert len(points_instead_of_pass(game, unvisited_pass, pass_rule="fill", winning_pass=False,
                                      every_move_weighed=True)) == 9
    priors = np.full(10, 0.1, np.float32)
    # "free": the search's pass stands; with earliest_pass 3 the visited point 1 replaces it
    assert chosen(game, 9, visits, priors, pass_rule="free", winning_pass=True) == 9
    assert chosen(game, 9, visits, priors, pass_rule="free", winning_pass=False,
                  earliest_pass=3) == 1
    for _ in range(3):
        game.play(game.pass_move if len(game.moves) == 1 else len(game.moves) * 3)
    assert len(game.moves) == 3                # from move 3 on the pass is free again
    assert chosen(game, 9, visits, priors, pass_rule="free", winning_pass=False,
                  earliest_pass=3) == 9


def test_sampled_choice_follows_the_visits():
    game = Game(3, 0.5)
    visits = np.zeros(10, np.int32)
    visits[[0, 8, 9]] = (1, 3, 10)
    root = FixedRoot(visits, np.full(10, 0.1, np.float32), 9)
    rng = np.random.default_rng(0)
    picks = [choose_move(root, 0, game, pass_rule="fill", winning_pass=False, rng=rng)
             for _ in range(400)]
    assert set(picks) == {0, 8} and 0.65 < picks.count(8) / 400 < 0.85   # 3/4 expected


def test_the_search_is_asked_once_with_the_callers_temperature_and_resignation():
    game = Game(3, 0.5)
    root = FixedRoot(np.zeros(10, np.int32), np.full(10, 0.1, np.float32), 5)
    assert choose_move(root, 2, game, pass_rule="fill", winning_pass=True, temperature=0.0,
                       resign=False) == 5
    assert root.asked == [(2, 0.0, False)]


def test_a_resignation_and_a_pass_the_caller_found_allowed_stand():
    game = Game(3, 0.5)
    game.play(4)
    game.play(game.pass_move)                  # a winning pass is open to Black
    visits = np.zeros(10, np.int32)
    visits[[2, 9]] = (1, 7)
    priors = np.full(10, 0.1, np.float32)
    assert chosen(game, RESIGN, visits, priors, winning_pass=True) == RESIGN
    fresh = Game(3, 0.5)
    empty = np.zeros(0, np.int64)              # self-play's own check found the pass allowed
    assert chosen(fresh, 9, visits, priors, winning_pass=False, refused=empty) == 9
    assert chosen(fresh, 9, visits, priors, winning_pass=False,
                  refused=np.array([2], np.int64)) == 2


def test_the_cleanup_point_is_outside_the_own_eyes():
    game = Game(3, 0.5)
    assert point_instead_of_pass(game, [7, 2]) == 7        # the best ranked open point
    assert point_instead_of_pass(game) == 0                # no ranking: the lowest open point
    filled = Game(2, 0.5)                      # B 0, W pass, B 3, W pass: Black's points are eyes
    for move in (0, filled.pass_move, 3, filled.pass_move):
        filled.play(move)
    assert filled.to_move == BLACK
    assert point_instead_of_pass(filled, [1, 2]) == filled.pass_move
    eyes = Game(3, 0.5)                        # Black surrounds point 0: 1 and 3 are Black's
    for move in (1, eyes.pass_move, 3, eyes.pass_move):
        eyes.play(move)
    assert eyes.board.is_eye(0, BLACK)
    assert point_instead_of_pass(eyes, [0, 8]) == 8        # the eye is skipped


def test_one_vocabulary_and_old_spellings_name_the_new_ones():
    assert PassRule.choices() == ("free", "fill", "settled", "decided")
    assert check_pass_rule("settled") is PassRule.SETTLED
    for old, new in OLD_PASS_RULES.items():
        with pytest.raises(ValueError, match=f"'{old}' is now spelt '{new}'"):
            check_pass_rule(old)
        with pytest.raises(ValueError, match=f"'{old}' is now spelt '{new}'"):
            choose_move(FixedRoot([0] * 10, [0] * 10, 9), 0, Game(3, 0.5), pass_rule=old,
                        winning_pass=True)
    with pytest.raises(ValueError, match=r"pass_rule must be one of \['free', 'fill', "
                                         r"'settled', 'decided'\], got 'never'"):
        check_pass_rule("never")
    assert policy_may_pass("free") is True and policy_may_pass("fill") is False
    assert policy_may_pass("settled") is False and policy_may_pass("decided") is False


def settled_game():
    """5x5, Black's wall on column C, White's on column D: every empty region borders one
    colour (A-B Black's, E White's). White to move."""
    game = Game(5, 0.5)
    for black, white in zip((2, 7, 12, 17, 22), (3, 8, 13, 18, 23)):
        game.play(black)
        game.play(white)
    game.play(game.pass_move)          # Black passes: White to move
    return game


def test_settled_allows_the_pass_once_every_region_has_one_owner():
    game = settled_game()
    assert game.board.settled() and len(game.unfilled_points()) > 0
    visits = np.zeros(26, np.int32)
    visits[[4, 25]] = (2, 6)
    priors = np.full(26, 0.04, np.float32)
    pass_move = game.pass_move
    # self-play (no winning pass): "fill" plays on into the own area, "settled" passes
    assert chosen(game, pass_move, visits, priors, pass_rule="fill", winning_pass=False) == 4
    assert chosen(game, pass_move, visits, priors, pass_rule="settled",
                  winning_pass=False) == pass_move
    assert len(points_instead_of_pass(game, visits, pass_rule="settled",
                                      winning_pass=False)) == 0
    # a White stone in Black's area: the region around it reaches both colours, so "settled"
    # plays on like "fill" (the stone must be captured or the area given up)
    game.play(0)                       # White A5... into Black's area
    game.play(game.pass_move)          # Black passes; White to move again
    assert not game.board.settled()
    refused = points_instead_of_pass(game, visits, pass_rule="settled", winning_pass=False)
    assert sorted(refused.tolist()) == sorted(game.unfilled_points().tolist())
    assert chosen(game, pass_move, visits, priors, pass_rule="settled",
                  winning_pass=False) == 4


@pytest.mark.parametrize("black, white, settled", [
    ((), (), False),                                   # the empty board: no owner anywhere
    ((12,), (), True),                                 # one stone: the whole board is Black's
    ((2, 7, 12, 17, 22), (4, 9, 14, 19, 24), False),   # column D is dame
    ((2, 7, 12, 17, 22), (3, 8, 13, 18, 23), True),
    ((2, 7, 12, 17, 22, 24), (3, 8, 13, 18, 23), False),   # a Black stone in White's area
])
def test_board_settled_by_regions(black, white, settled):
    from fastgo.board import Board
    board = Board(5)
    board.setup(black=black, white=white)
    assert board.settled() is settled
    # the independent count: every empty point's 4-connected region touches one colour
    grid = board.stones()
    seen, ok = set(), True
    for start in zip(*np.nonzero(grid == 0)):
        if start in seen:
            continue
        stack, colours = [start], set()
        seen.add(start)
        while stack:
            r, c = stack.pop()
            for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= rr < 5 and 0 <= cc < 5:
                    if grid[rr, cc] == 0 and (rr, cc) not in seen:
                        seen.add((rr, cc))
                        stack.append((rr, cc))
                    elif grid[rr, cc]:
                        colours.add(int(grid[rr, cc]))
        ok = ok and len(colours) == 1
    assert ok is settled


ROOT = Path(__file__).resolve().parents[3]
OWNER = "fastgo/move_choice.pyx"
# What only the owner does: asks the search for its root choice, asks a game where it may go
# instead of a pass or whether its pass wins, and compares a value with a pass rule's name.
DECISIONS = re.compile(r"\.choose_move\(|\.unfilled_points\(|\.pass_wins\(|"
                       r"[=!]=\s*[\"'](fill|free|settled)[\"']|"
                       r"[\"'](fill|free|settled)[\"']\s*[=!]=")
# The old vocabulary: only the refusals that name the new words may spell it.
OLD_WORDS = re.compile(r"\b(pass_when_filled|no_pass_before|policy_pass|settle_pass|"
                       r"pass_considered)\b|[\"']filled[\"']|fastgo\.pass_rule\b")
REFUSALS = {"rundata/config/schema.py", "fastgo/variants.py"}
# the search that defines the root choice (its module docstring shows the call), and the kernel
# bench that times it alone: a bare board, no game, no pass rule
ROOT_CHOICE = {"fastgo/mcts.pyx", "fastgo_cli/bench/mcts.py"}


def offenders(project_packages, root, pattern, allowed, suffixes=(".py", ".pyx")):
    """['path:line'] of the lines of the packages' source under `root` that match `pattern`,
    outside the files in `allowed` (paths relative to root) and outside comments."""
    out = []
    for package in project_packages:
        for path in sorted((root / package).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.suffix not in suffixes or rel in allowed or "__pycache__" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line.split("#", 1)[0]):
                    out.append(f"{rel}:{number}")
    return out


def test_only_the_owner_decides_the_move_after_a_search(project_packages):
    assert offenders(project_packages, ROOT, DECISIONS, {OWNER} | ROOT_CHOICE) == []
    assert offenders(project_packages, ROOT, DECISIONS, set()), "the scan must see the owner's own decisions"


def test_the_old_pass_vocabulary_is_gone_but_for_its_refusals(project_packages):
    assert offenders(project_packages, ROOT, OLD_WORDS, REFUSALS) == []
    configs = [p.name for p in sorted((ROOT / "configs").glob("*.toml"))
               if OLD_WORDS.search(p.read_text(encoding="utf-8"))]
    assert configs == []
    for doc in ("docs/guide.md", "docs/architecture.md", "README.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        # the guide names the old keys once, where it says they are refused; never as settings
        assert not re.search(r"\b(pass_when_filled|no_pass_before|policy_pass)\s*=|"
                             r"fastgo/pass_rule|--pass-rule (filled|search)", text), doc


def test_the_scan_finds_a_second_decision(project_packages, tmp_path):
    play = tmp_path / "play"
    play.mkdir()
    (play / "side.py").write_text("def pick(search, game, rule):\n"
                                  "    # search.choose_move(0) in a comment is no decision\n"
                                  "    move = search.choose_move(0)\n"
                                  "    if rule == \"fill\" and game.pass_wins():\n"
                                  "        return move\n"
                                  "    return sp.pass_when_filled\n")
    assert offenders(project_packages, tmp_path, DECISIONS, set()) == ["play/side.py:3", "play/side.py:4"]
    assert offenders(project_packages, tmp_path, OLD_WORDS, set()) == ["play/side.py:6"]
