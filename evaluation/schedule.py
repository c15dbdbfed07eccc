"""When the evaluator makes a curve point and when it refines one (evaluation.evaluator): a first
rating of the newest checkpoint every evaluator.interval_s, refining batches between points
only where the CPU budget (evaluation.budget) stays clear for the next point, and batches of
dear opponents kept small. Costs are learnt as games are played; the clocks are injected, so
the rules are tested without playing."""
from __future__ import annotations

import math

from rundata.rundir import player_step

PROBE_GAMES = 2     # the first batch against an opponent whose cost is not known yet


def kind(label):
    """What a game's cost is learnt by: any checkpoint alike, each anchor on its own."""
    return "checkpoint" if player_step(label) is not None else label


class Schedule:
    """interval: evaluator.interval_s (0: each checkpoint in full before the next); budget: a
    CpuBudget; clock: monotonic seconds; enforce: the budget is waited on (not for --once);
    rule: the PairingRule (batch, max_games)."""

    def __init__(self, interval, budget, clock, enforce, rule):
        self.interval, self.budget, self.clock, self.enforce = interval, budget, clock, enforce
        self.rule = rule
        self.last_point_at = None                    # clock() when the last point was made
        self.cost = {"point_wall_s": 0.0, "point_cpu_s": 0.0}
        self.game_cost = {}                          # CPU s a game, by kind of opponent
        self.game_wall = {}                          # wall s a game, by kind of opponent

    def _lead(self):
        """How early a point starts so that it lands an interval after the last: what a point
        takes, at most half the interval (refining keeps a share)."""
        return min(self.cost["point_wall_s"], self.interval / 2)

    def point_due(self, refining=False):
        """True when the newest checkpoint should get its first rating now: without an
        interval, once nothing is `refining`; with one, once the last point is the interval
        old less the lead."""
        if self.interval <= 0:
            return not refining
        if self.last_point_at is None:
            return True
        return self.clock() - self.last_point_at >= self.interval - self._lead()

    def may_refine(self, next_label=None, played=0):
        """True when one more refining batch (against `next_label`, `played` games into its
        pairing; None: a new pairing) ends before the next point is due and leaves the budget
        clear by then; always without an interval or outside the budget. A batch is not cut
        short, so one begun too late would hold the point back by what is left of it."""
        if self.interval <= 0 or self.last_point_at is None or not self.enforce:
            return True
        due_in = self.last_point_at + self.interval - self._lead() - self.clock()
        if self.next_batch_wall_s(next_label, played) > due_in:
            return False
        allowed = self.budget.share * (self.budget.wall_s() + max(0.0, due_in))
        return self.budget.cpu_s() + self.next_batch_cpu_s(next_label, played) <= allowed

    def point_credit_s(self):
        """CPU seconds a point may overdraw the budget by (one point's cost): refining, which
        waits for a clear budget, pays it back, so points keep their time."""
        return self.cost["point_cpu_s"]

    def first_rating_games(self):
        """Games of a first rating: a whole batch (what the point is shown with until it is
        refined: 4 games made an interval over 600 Elo wide), fewer where the batch's learnt
        cost would take more than half of what the budget earns in an interval; None (the
        rule's batch) without an interval or a budget."""
        if self.interval > 0 and self.enforce:
            return max(2, self._affordable(self.rule.batch, self._per_game(self.game_cost, None)))
        return None

    def _affordable(self, games, per_game):
        """`games`, fewer where `per_game` CPU seconds a game would make them cost more than
        half of what the budget earns between two points (at least PROBE_GAMES)."""
        if not per_game:
            return games
        return min(games, max(PROBE_GAMES, int(self.budget.share * self.interval / 2 / per_game)))

    @staticmethod
    def _per_game(table, label):
        """A game's learnt cost in `table` against `label`: its kind's, else (a kind not played
        yet, or no label) the dearest kind's; None while nothing is known."""
        if label is not None and kind(label) in table:
            return table[kind(label)]
        return max(table.values(), default=None)

    def batch_games(self, label, played):
        """Games of a pairing's next batch: the rule's, fewer against an opponent whose games
        are dear (GNU Go at a high level), so that one batch costs at most half of what the
        budget earns between two points (at least PROBE_GAMES). An opponent not played yet,
        once others have been, gets a probe of PROBE_GAMES that learns its cost: it may be
        dearer than any played (GNU Go level 10 after level 5), and a whole batch of it would
        hold the next point back."""
        games = self.rule.next_batch(played)
        per_game = self._per_game(self.game_cost, label)
        if per_game and self.interval > 0 and self.enforce:
            games = self._affordable(games, per_game)
            if label is None or kind(label) not in self.game_cost:
                games = min(games, PROBE_GAMES)
        return games

    def next_batch_cpu_s(self, label=None, played=0):
        """The CPU a refining batch (against `label`, `played` games into its pairing) is
        expected to cost: a game's (_per_game) times batch_games; 0 while nothing is known."""
        return self._expected(self.game_cost, label, played)

    def next_batch_wall_s(self, label=None, played=0):
        """The wall time a refining batch is expected to take, as next_batch_cpu_s: on a
        machine the other roles keep busy it is longer than the CPU it costs."""
        return self._expected(self.game_wall, label, played)

    def _expected(self, table, label, played):
        per_game = self._per_game(table, label)
        return per_game * self.batch_games(label, played) if per_game else 0.0

    def point_made(self, started, cpu_s):
        """A point was written now, started at clock() `started` and costing `cpu_s`."""
        self.last_point_at = self.clock()
        self._learn(self.cost, "point_wall_s", self.last_point_at - started)
        self._learn(self.cost, "point_cpu_s", cpu_s)

    def batch_played(self, label, games, cpu_s, wall_s):
        """A batch of `games` against `label` cost `cpu_s` and took `wall_s`."""
        if games:
            self._learn(self.game_cost, kind(label), cpu_s / games)
            self._learn(self.game_wall, kind(label), wall_s / games)

    @staticmethod
    def _learn(table, key, value):
        """A running estimate (the last values weighted 1/2, 1/4, ...) of a cost."""
        old = table.get(key)
        table[key] = value if not old or not math.isfinite(old) else 0.5 * (old + value)
