"""Invariants of the batched PUCT search (fastgo.mcts): visit accounting, virtual loss, noise,
legality, symmetries, tree reuse, reproducibility, move choice, resignation, playout caps."""
import numpy as np
import pytest

from fastgo.board import BLACK, WHITE, Board
from fastgo.game import RESIGN, Game
from fastgo.mcts import FLAG_ILLEGAL, FLAG_PENDING, FLAG_TERMINAL, UNEXPANDED, BatchedSearch
from fastgo.search_settings import SearchSettings
from fastgo.symmetry import transform_planes

OPEN_7 = """
.......
..X....
..XO...
...O...
.......
.......
......."""


def uniform_evaluator(planes):
    nn = planes.shape[2] * planes.shape[3]
    return np.zeros((len(planes), nn + 1), np.float32), np.zeros(len(planes), np.float32)


def material_evaluator(planes):
    """Uniform policy; value from the stone balance (own - opponent): deterministic and the
    same under every symmetry."""
    nn = planes.shape[2] * planes.shape[3]
    balance = planes[:, 0].reshape(len(planes), -1).sum(1).astype(np.float32) \
        - planes[:, 1].reshape(len(planes), -1).sum(1)
    return np.zeros((len(planes), nn + 1), np.float32), np.tanh(0.3 * balance).astype(np.float32)


def neighbour_logits(planes):
    """Logits that move with the board under every symmetry: 1.0 per own neighbouring stone and
    0.5 per opponent one, at every point."""
    own = planes[:, 0].astype(np.float32)
    opp = planes[:, 1].astype(np.float32)
    score = np.zeros_like(own)
    for stones, w in ((own, 1.0), (opp, 0.5)):
        score[:, 1:, :] += w * stones[:, :-1, :]
        score[:, :-1, :] += w * stones[:, 1:, :]
        score[:, :, 1:] += w * stones[:, :, :-1]
        score[:, :, :-1] += w * stones[:, :, 1:]
    count = len(planes)
    logits = np.concatenate([score.reshape(count, -1), np.full((count, 1), -1.0, np.float32)], 1)
    return logits, np.zeros(count, np.float32)


@pytest.fixture
def check_visits_add_up(reachable):
    """check_visits_add_up(search, g): every live expanded node of game g's tree is its
    children's parent, and a visited one has 1 + its children's visits."""
    def check(search, g):
        t = search.tree_arrays(g)
        for i in reachable(t):
            first = t["first_child"][i]
            if first == UNEXPANDED or t["flags"][i] & FLAG_PENDING:
                continue
            assert t["parent"][first] == i
            children = t["visits"][first:first + t["num_children"][i]].sum()
            if t["visits"][i] > 0:
                assert t["visits"][i] == 1 + children, i
    return check


@pytest.mark.parametrize("leaves", [1, 4])
@pytest.mark.parametrize("evaluator", ["uniform", "rollout", uniform_evaluator])
def test_visits_add_up(leaves, evaluator, check_visits_add_up):
    search = BatchedSearch(games=3, size=7, seed=5, settings=SearchSettings(leaves_per_game=leaves))
    for g in range(3):
        search.set_position(g, Board.from_ascii(OPEN_7))
    search.run(evaluator, 150)
    for g in range(3):
        assert search.root_visits(g).sum() == 150
        check_visits_add_up(search, g)
    # Continuing the search counts what is already there.
    search.run(evaluator, 200)
    assert all(search.root_visits(g).sum() == 200 for g in range(3))


def test_virtual_loss_fully_undone_with_two_batches_in_flight(check_visits_add_up):
    search = BatchedSearch(games=4, size=7, seed=2, settings=SearchSettings(leaves_per_game=3))
    for g in range(4):
        search.set_position(g, Board.from_ascii(OPEN_7))
    search.run(uniform_evaluator, 20)
    search.start(200)
    buf1 = np.zeros((12, search.planes, 7, 7), np.uint8)
    buf2 = np.zeros_like(buf1)
    for _ in range(10):
        n1 = search.collect(buf1)
        n2 = search.collect(buf2)
        assert search.in_flight == 2 and n1 == 12 and n2 > 0
        t = search.tree_arrays(0)
        assert t["virtual_loss"].max() > 0
        assert (t["flags"] & FLAG_PENDING).sum() > 1
        search.apply(*uniform_evaluator(buf1[:n1]))
        search.apply(*uniform_evaluator(buf2[:n2]))
    assert search.in_flight == 0
    for g in range(4):
        t = search.tree_arrays(g)
        assert (t["virtual_loss"] == 0).all()
        assert not (t["flags"] & FLAG_PENDING).any()
        check_visits_add_up(search, g)


def test_noise_changes_priors_only_at_the_root(reachable):
    search = BatchedSearch(games=1, size=7, seed=3, settings=SearchSettings(noise_weight=0.25))
    search.set_position(0, Board.from_ascii(OPEN_7))
    search.run("uniform", 300)
    t = search.tree_arrays(0)
    root = t["root"]
    for i in reachable(t):
        first, k = t["first_child"][i], t["num_children"][i]
        if first == UNEXPANDED or k == 0:
            continue
        priors = t["prior"][first:first + k]
        assert priors.sum() == pytest.approx(1.0, abs=1e-5)
        if i == root:
            assert np.ptp(priors) > 1e-3
        else:
            assert np.allclose(priors, 1.0 / k)
    # Noise is added once per search: a second run on the same root leaves the priors alone.
    before = search.root_priors(0)
    search.run("uniform", 400)
    assert np.array_equal(before, search.root_priors(0))


def test_illegal_moves_never_get_visits():
    # Black to move: (1, 1) is suicide and four points are occupied.
    board = Board.from_ascii("""
        .O...
        O.O..
        .O...
        .....
        .....""")
    search = BatchedSearch(games=1, size=5, seed=1)
    search.set_position(0, board)
    search.run("rollout", 400)
    visits = search.root_visits(0)
    legal = board.legal_moves()
    assert not legal[6]
    assert (visits[legal == 0] == 0).all()
    t = search.tree_arrays(0)
    first, k = t["first_child"][t["root"]], t["num_children"][t["root"]]
    assert set(t["move"][first:first + k]) == set(np.flatnonzero(legal))


def test_positions_of_the_game_history_are_never_repeated():
    # Positional superko inside the tree: a move that recreates a position of the game's history
    # is flagged illegal on first descent and never visited, at the root and deeper down.
    board = Board(3)
    after_0 = board.hash_after(0)
    board2 = board.copy()
    board2.play(4)
    deeper = board2.hash_after(8)           # Black 4, then White 8
    search = BatchedSearch(games=1, size=3, seed=1, settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, board, history=[after_0, deeper])
    search.run("rollout", 2000)
    visits = search.root_visits(0)
    assert visits[0] == 0 and visits[4] > 100
    t = search.tree_arrays(0)
    root = t["root"]
    first, k = t["first_child"][root], t["num_children"][root]
    node0 = first + list(t["move"][first:first + k]).index(0)
    assert t["flags"][node0] & FLAG_ILLEGAL
    node4 = first + list(t["move"][first:first + k]).index(4)
    f4, k4 = t["first_child"][node4], t["num_children"][node4]
    child8 = f4 + list(t["move"][f4:f4 + k4]).index(8)
    assert t["visits"][child8] == 0 and t["flags"][child8] & FLAG_ILLEGAL
    assert t["visits"][f4:f4 + k4].sum() == visits[4] - 1


def test_root_moves_come_from_the_game():
    game = Game(5, 0.5)
    search = BatchedSearch(games=1, size=5, seed=1, settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, game)
    search.run("rollout", 100)
    assert (search.root_visits(0)[game.legal_moves() == 0] == 0).all()


def test_every_move_illegal_gives_a_pass():
    # White to move: every empty point is a suicide.
    board = Board.from_ascii("""
        X.X
        .X.
        X.X""", to_move=WHITE)
    assert board.legal_moves()[:9].sum() == 0
    search = BatchedSearch(games=1, size=3, seed=1)
    search.set_position(0, board)
    search.run("rollout", 50)
    visits = search.root_visits(0)
    assert visits[9] == 50 and visits[:9].sum() == 0
    assert search.choose_move(0, 0.0) == 9
    assert search.choose_move(0, 1.0) == 9


def test_finished_game_wants_no_search():
    board = Board(5)
    board.play(25)
    board.play(25)
    search = BatchedSearch(games=1, size=5, seed=1)
    search.set_position(0, board)
    search.run("uniform", 10)
    assert search.root_visits(0).sum() == 0
    assert search.choose_move(0, 0.0) == 25


def test_terminal_nodes_are_scored_by_the_rules():
    # White passed; Black is ahead on the board, so passing ends the game with a win.
    board = Board.from_ascii("""
        .X.O.
        XX.OO
        .X.O.
        XX.OO
        .X.O.""", komi=0.5)
    board.play(2)                   # Black takes a dame point: Black 11 + ... ahead
    board.play(board.pass_move)     # White passes
    assert board.score() > 0
    search = BatchedSearch(games=1, size=5, seed=4, settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, board)
    search.run(uniform_evaluator, 200)
    t = search.tree_arrays(0)
    root = t["root"]
    first, k = t["first_child"][root], t["num_children"][root]
    moves = list(t["move"][first:first + k])
    pass_node = first + moves.index(25)
    assert t["flags"][pass_node] & FLAG_TERMINAL
    # A won terminal node: -1 from the side to move there (White), every visit.
    assert t["value_sum"][pass_node] == -t["visits"][pass_node]
    assert search.choose_move(0, 0.0) == 25


def test_random_symmetry_is_undone_on_the_policy():
    board = Board.from_ascii("""
        .......
        .XX....
        ..XO...
        ...O...
        .....X.
        .......
        .......""")
    expected_logits, _ = neighbour_logits(board.features()[None])
    legal = np.flatnonzero(board.legal_moves())
    expected = np.exp(expected_logits[0, legal] - expected_logits[0, legal].max())
    expected /= expected.sum()
    seen = set()
    original = board.features()
    for seed in range(12):
        search = BatchedSearch(games=1, size=7, seed=seed, settings=SearchSettings(noise_weight=0.0))
        search.set_position(0, board)

        def evaluator(planes):
            # The planes are the position under one of the 8 symmetries.
            syms = [s for s in range(8) if np.array_equal(transform_planes(original, s), planes[0])]
            if planes[0][16].all() == original[16].all() and syms:
                seen.add(syms[0])
            return neighbour_logits(planes)

        search.run(evaluator, 1)
        assert np.allclose(search.root_priors(0)[legal], expected, atol=1e-6)
    assert len(seen) >= 4


def test_liberty_encoding():
    search = BatchedSearch(games=2, size=9, seed=1, settings=SearchSettings(encoding="liberty"))
    assert search.planes == 11
    for g in range(2):
        search.set_position(g, Board(9))
    search.run(uniform_evaluator, 30)
    assert search.root_visits(1).sum() == 30


def test_tree_reuse_equals_a_fresh_search():
    board = Board.from_ascii(OPEN_7)
    reused = BatchedSearch(games=1, size=7, seed=1, settings=SearchSettings(noise_weight=0.0))
    reused.set_position(0, board)
    reused.run(material_evaluator, 400)
    move = reused.choose_move(0, 0.0)
    below = int(reused.root_visits(0)[move])
    reused.advance(0, move)
    assert reused.root_visits(0).sum() == below - 1      # the new root's own evaluation
    after = board.copy()
    after.play(move)
    fresh = BatchedSearch(games=1, size=7, seed=99, settings=SearchSettings(noise_weight=0.0))
    fresh.set_position(0, after, history=[board.position_hash])
    fresh.run(material_evaluator, below - 1)
    assert np.array_equal(reused.root_visits(0), fresh.root_visits(0))
    assert reused.root_value(0) == pytest.approx(fresh.root_value(0), abs=1e-5)
    # Searching on from both gives the same tree too.
    reused.run(material_evaluator, 300)
    fresh.run(material_evaluator, 300)
    assert np.array_equal(reused.root_visits(0), fresh.root_visits(0))


def test_tree_reuse_through_a_game_with_compaction(check_visits_add_up):
    search = BatchedSearch(games=2, size=7, seed=8, settings=SearchSettings(max_nodes=3000))
    for g in range(2):
        search.set_position(g, Board(7))
    for _ in range(25):
        search.run("uniform", 60)
        for g in range(2):
            check_visits_add_up(search, g)
            search.advance(g, search.choose_move(g, 1.0))
            assert search.tree_arrays(g)["used"] <= 3000


def test_a_full_tree_still_completes_the_search():
    search = BatchedSearch(games=1, size=5, seed=1, settings=SearchSettings(max_nodes=2 * 26 + 1))
    search.set_position(0, Board(5))
    search.run("rollout", 100)
    assert search.root_visits(0).sum() == 100
    assert search.tree_arrays(0)["used"] <= 53


def test_seeded_search_is_reproducible():
    def once(seed):
        search = BatchedSearch(games=2, size=7, seed=seed,
                               settings=SearchSettings(leaves_per_game=2))
        for g in range(2):
            search.set_position(g, Board.from_ascii(OPEN_7))
        search.run("rollout", 200)
        moves = [search.choose_move(g, 1.0) for g in range(2)]
        return [search.tree_arrays(g) for g in range(2)], moves

    (a, ma), (b, mb), (c, _) = once(11), once(11), once(12)
    assert ma == mb
    for ta, tb in zip(a, b):
        for key in ("visits", "value_sum", "prior", "move", "flags"):
            assert np.array_equal(ta[key], tb[key])
    assert not all(np.array_equal(ta["visits"], tc["visits"]) for ta, tc in zip(a, c))


def test_choose_move_greedy_and_temperature():
    search = BatchedSearch(games=1, size=5, seed=6, settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, Board(5))
    search.run("rollout", 400)
    visits = search.root_visits(0)
    assert search.choose_move(0, 0.0) == int(np.argmax(visits))
    draws = [search.choose_move(0, 1.0) for _ in range(400)]
    assert all(visits[m] > 0 for m in draws)
    assert len(set(draws)) > 3
    # temperature None: 1 before temperature_moves, greedy after.
    greedy = BatchedSearch(games=1, size=5, seed=6,
                           settings=SearchSettings(noise_weight=0.0, temperature_moves=0))
    greedy.set_position(0, Board(5))
    greedy.run("rollout", 400)
    assert {greedy.choose_move(0) for _ in range(20)} == {int(np.argmax(greedy.root_visits(0)))}


def black_loses_evaluator(planes):
    """Every position is won by White: value +1 where White is to move (plane 16 is 0)."""
    logits, _ = uniform_evaluator(planes)
    black_to_move = planes[:, 16, 0, 0].astype(np.float32)
    return logits, 1.0 - 2.0 * black_to_move


def test_resignation_and_disabled_fraction():
    search = BatchedSearch(games=1, size=5, seed=1,
                           settings=SearchSettings(resign_threshold=-0.5, resign_consecutive=2,
                                                   resign_disabled_fraction=0.0))
    search.set_position(0, Board(5))
    search.run(black_loses_evaluator, 50)
    assert search.root_value(0) < -0.5
    assert search.choose_move(0, 0.0) != RESIGN
    assert search.choose_move(0, 0.0) == RESIGN
    never = BatchedSearch(games=1, size=5, seed=1,
                          settings=SearchSettings(resign_threshold=-0.5, resign_consecutive=1,
                                                  resign_disabled_fraction=1.0))
    never.set_position(0, Board(5))
    never.run(black_loses_evaluator, 50)
    assert never.choose_move(0, 0.0) != RESIGN
    info = never.resign_info(0)
    assert info["disabled"] and info["would_resign"] == BLACK and info["would_resign_move"] == 0


def test_playout_cap_randomization():
    search = BatchedSearch(games=4, size=5, seed=1,
                           settings=SearchSettings(cheap_visits=10, full_search_fraction=0.0))
    for g in range(4):
        search.set_position(g, Board(5))
    search.run("uniform", 100)
    for g in range(4):
        assert not search.is_full_search(g)
        assert search.root_visits(g).sum() == 10
        priors = search.root_priors(g)
        assert np.allclose(priors[priors > 0], 1.0 / 26)      # no noise in a cheap search
    mixed = BatchedSearch(games=40, size=5, seed=1,
                          settings=SearchSettings(cheap_visits=10, full_search_fraction=0.5))
    for g in range(40):
        mixed.set_position(g, Board(5))
    mixed.run("uniform", 30)
    full = [mixed.is_full_search(g) for g in range(40)]
    assert 5 < sum(full) < 35
    for g in range(40):
        assert mixed.root_visits(g).sum() == (30 if full[g] else 10)


def test_bad_calls_are_refused():
    search = BatchedSearch(games=2, size=5, seed=1)
    for g in range(2):
        search.set_position(g, Board(5))
    with pytest.raises(RuntimeError):
        search.apply(np.zeros((1, 26), np.float32), np.zeros(1, np.float32))
    with pytest.raises(ValueError):
        search.collect(np.zeros((1, 17, 5, 5), np.uint8))       # too few rows
    with pytest.raises(ValueError):
        search.set_position(0, Board(7))
    with pytest.raises(IndexError):
        search.root_visits(2)
    with pytest.raises(ValueError):
        BatchedSearch(games=1, size=5, settings=SearchSettings(encoding="nope"))
    search.start(10)
    buf = np.zeros((2, 17, 5, 5), np.uint8)
    count = search.collect(buf)
    assert count == 2
    with pytest.raises(RuntimeError):
        search.advance(0, 0)
    with pytest.raises(ValueError):
        search.apply(np.full((count, 26), np.nan, np.float32), np.zeros(count, np.float32))
    with pytest.raises(ValueError):
        search.apply(np.zeros((count, 25), np.float32), np.zeros(count, np.float32))
    search.apply(np.zeros((count, 26), np.float32), np.zeros(count, np.float32))   # still in flight
    with pytest.raises(ValueError):
        search.advance(0, 99)
    with pytest.raises(TypeError):
        search.set_position(0, "board")


def test_analysis_rows():
    search = BatchedSearch(games=1, size=5, seed=2, settings=SearchSettings(noise_weight=0.0))
    search.set_position(0, Board(5))
    search.run("rollout", 200)
    rows = search.analysis(0)
    assert rows and sum(r["visits"] for r in rows) == 200
    assert rows[0]["move"] == search.choose_move(0, 0.0)
    assert all(0.0 <= r["winrate"] <= 1.0 and r["pv"][0] == r["move"] for r in rows)
