"""A player over the batched search (fastgo.mcts: PUCT, or Gumbel at the root) with the
evaluator as a parameter: a network behind the inference client, an in-process evaluator, or the
built-in 'uniform' / 'rollout' ones; one game, one search.

A PUCT tree is reused between calls: the player remembers the moves of the game its root stands
for and advances through the moves played since (its own and the opponent's); anything else
(undo, a new game, setup stones) starts a fresh tree. A Gumbel search starts from a fresh root
each move (sequential halving counts the visits of this search alone).
"""
import time

from fastgo.mcts import BatchedSearch
from fastgo.move_choice import choose_move, point_instead_of_pass
from fastgo.search_settings import SearchSettings
from fastgo.variants import PassRule, Search, check_pass_rule
from play.equal_time import one_thread_rate
from play.players import AnalysingPlayer


class SearchPlayer(AnalysingPlayer):
    """SearchPlayer(evaluator, visits, settings=None, ...): genmove(game) -> move.

    evaluator: callable(planes uint8 [count, P, N, N]) -> (logits [count, N*N+1], values
    [count]), or 'uniform' / 'rollout'. settings: the search's SearchSettings (None:
    SearchSettings.for_play(), no noise: a player for matches, not for self-play; its encoding
    must be the network's); temperature 0 by default. board_size: the one size a network
    evaluator takes (None: any); the GTP engine refuses other sizes. clock: seconds, monotonic
    (time.monotonic; tests pass their own), what a genmove under `seconds` reads. pass_rule:
    fastgo.move_choice's, with the winning pass ('fill', the default, or 'free')."""

    def __init__(self, evaluator, visits, settings=None, *, name=None, temperature=0.0, seed=None,
                 board_size=None, pass_rule=PassRule.FILL, clock=time.monotonic, model_komi=None,
                 analysis_heads=None):
        if int(visits) < 1:
            raise ValueError(f"visits must be >= 1, got {visits}")
        self.evaluator = evaluator
        self.board_size = board_size
        self.model_komi = model_komi          # the komi the network learnt at (its score head)
        self.analysis_heads = analysis_heads  # () -> HeadsCache of every head, or None
        self.visits = int(visits)
        self.temperature = temperature
        self.seed = seed
        self.pass_rule = check_pass_rule(pass_rule)
        self.settings = SearchSettings.for_play() if settings is None else settings
        self.clock = clock
        self.name = name or f"puct:{visits}"
        self.search = None
        self._synced = None           # game.moves the root stands for, or None
        self._rate = None             # visits/s of the last Gumbel searches (budget under a clock)

    def reset(self):
        """A new game starts: forget the tree (and any search an evaluator error interrupted)."""
        self._synced = None
        if self.search is not None and self.search.in_flight:
            self.search.cancel()

    def _sync(self, game):
        size = game.board.size
        if self.search is None or self.search.size != size:
            self.search = BatchedSearch(games=1, size=size, komi=game.komi,
                                        settings=self.settings, seed=self.seed)
            self._synced = None
        moves = list(game.moves)
        if self._synced is not None and moves[:len(self._synced)] == self._synced:
            try:
                for _, move in moves[len(self._synced):]:
                    self.search.advance(0, move)
                if self.search.root_board(0).hash == game.board.hash:
                    self._synced = moves
                    return
            except ValueError:
                pass
        self.search.set_position(0, game)
        self._synced = moves

    accepts_limits = True        # genmove takes seconds= and no_pass= (the GTP engine's clock)

    def genmove(self, game, *, seconds=None, no_pass=False):
        """The move after a search of `visits` root visits, or fewer when `seconds` runs out
        first (the search grows in steps of STEP_VISITS; at least one step). no_pass (GTP's
        cleanup): instead of a pass, the most visited legal point outside the own eyes
        (fastgo.move_choice.point_instead_of_pass). fastgo.game.RESIGN where the search was
        built with a resign_threshold and the game looks lost."""
        if game.is_over():
            return game.board.pass_move
        self._sync(game)
        if self.search.settings.search == Search.GUMBEL:
            self._gumbel_search(seconds)
        elif seconds is None:
            self.search.run(self.evaluator, self.visits)
        else:
            deadline = self.clock() + max(0.0, float(seconds))
            while True:
                total = int(self.search.root_visits(0).sum())
                if total >= self.visits:
                    break
                self.search.run(self.evaluator, min(self.visits, total + self.STEP_VISITS))
                if self.clock() >= deadline or int(self.search.root_visits(0).sum()) == total:
                    break
        move = choose_move(self.search, 0, game, pass_rule=self.pass_rule, winning_pass=True,
                           temperature=self.temperature)
        pass_move = game.board.pass_move
        if no_pass and move == pass_move:
            visits = self.search.root_visits(0)
            ranked = sorted((m for m in range(pass_move) if visits[m] > 0),
                            key=lambda m: -visits[m])
            move = point_instead_of_pass(game, ranked)
        return move

    STEP_VISITS = 32

    def _gumbel_search(self, seconds):
        """One Gumbel search: sequential halving needs its budget up front, so under a clock the
        budget is what the last searches' speed fits into `seconds` (at least STEP_VISITS).
        No Gumbel noise unless the player has a temperature."""
        visits = self.visits
        if seconds is not None and self._rate is not None:
            visits = max(1, min(visits, max(self.STEP_VISITS, int(float(seconds) * self._rate))))
        elif seconds is not None:
            visits = min(visits, self.STEP_VISITS)
        began = self.clock()
        self.search.run(self.evaluator, visits, gumbel_scale=None if self.temperature else 0.0)
        spent = self.clock() - began
        done = int(self.search.root_visits(0).sum())
        if spent > 0 and done > 0:
            # down at once, up by the geometric mean: an overrun costs more than a short move
            rate = done / spent
            old = self._rate
            self._rate = rate if old is None or rate < old else (old * rate) ** 0.5

    def measure_speed(self, size, komi):
        """Times this player's one-game search (play.equal_time.one_thread_rate) so that a
        Gumbel search under a clock gets its visits from its speed from the first move on;
        returns the visits a second."""
        self._rate = one_thread_rate(self.evaluator, self.settings, size, komi)
        return self._rate

    def ponder(self, game, visits, max_visits):
        """Adds about `visits` root visits to the search of `game`'s position (the tree is kept,
        so a later genmove starts from it). False when there is nothing more to do: the game
        is over or the root holds max_visits."""
        if game.is_over():
            return False
        self._sync(game)
        if self.search.settings.search == Search.GUMBEL:
            return False             # a Gumbel search starts from a fresh root: nothing to keep
        total = int(self.search.root_visits(0).sum())
        if total >= max_visits:
            return False
        self.search.run(self.evaluator, min(total + visits, max_visits))
        return True

    def analysis(self, max_pv=10):
        """The last search's root moves (see BatchedSearch.analysis), for lz-analyze."""
        return [] if self.search is None else self.search.analysis(0, max_pv)
