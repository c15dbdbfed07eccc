"""A checkpoint's pairings as the evaluator plays them (evaluation.evaluator): RatingJob, the
checkpoint being rated and its pairings so far, and PairingGames, which plays a pairing's games
in batches through the batched search (play.match.play_match, network in this process) until
the pairing rule (evaluation.pairings) stops it, each batch sized by the schedule
(evaluation.schedule) and its CPU cost learnt, and appends each pairing's games to
RUN/ratings.jsonl as one row when it ends, is superseded or is stopped.
"""
from evaluation.pairings import one_sided, pairing_verdict
from play.match import MatchResult, play_match
from rundata.ratings_table import append_result


class RatingJob:
    """A checkpoint being rated: its name, step and match side, the anchors it played with
    their one-sided verdicts, its pairings' totals (MatchResult by opponent), the opponents
    it played in order and their results as text."""

    def __init__(self, name, step, ours):
        self.name, self.step, self.ours = name, step, ours
        self.anchors, self.totals, self.played, self.results = {}, {}, [], []
        self.started = 0.0
        self.seed = step * 1000           # of its opponents' sides (a resumed job: others)
        self.next_label = None            # the opponent of the batch the refinement plays next

    def take_up(self, rows, anchors):
        """Takes up this checkpoint's pairings from `rows` of the ratings table: their totals,
        the order they were played in, and the one-sided verdicts of those against `anchors`."""
        for row in rows:
            if row["a"] != self.name:
                continue
            total = self.totals.setdefault(row["b"], MatchResult(self.name, row["b"]))
            total.games += row["games"]
            total.wins_a += row["wins_a"]
            total.wins_b += row["wins_b"]
            total.draws += row.get("draws", 0)
            if row["b"] not in self.played:
                self.played.append(row["b"])
        for label, total in self.totals.items():
            if label in anchors:
                self.anchors[label] = one_sided(total.wins_a, total.wins_b, total.draws)


class PairingGames:
    """Plays and records the pairings of the evaluator's jobs: `config` (the run's: board size,
    komi, evaluator.visits or move_seconds), `table` (RUN/ratings.jsonl), `rule` (a
    PairingRule), `schedule` (a Schedule), `budget` (a CpuBudget, for each batch's CPU cost),
    `figures` (the status file's figures, shared with the evaluator and updated in place),
    `beat(force)` (the heartbeat), `stopping()` (True once the role should stop), `clock`."""

    def __init__(self, config, table, rule, schedule, budget, figures, beat, *, stopping, clock):
        self.config, self.ec, self.table = config, config.evaluator, table
        self.rule, self.schedule, self.budget = rule, schedule, budget
        self.figures, self.beat = figures, beat
        self.stopping, self.clock = stopping, clock

    def play_batches(self, job, opponent, label):
        """Plays `label` in batches until the pairing rule stops it (games already played
        against it in `job` count), yielding before each once it is named in job.next_label;
        records the games played here in the table even when closed or stopped early. Returns
        the pairing's MatchResult, or None when stopping."""
        total = job.totals.setdefault(label, MatchResult(job.name, label))
        if pairing_verdict(total.wins_a, total.wins_b, total.draws, self.rule) is not None:
            return total
        self.figures["refining"] = job.name
        fresh = MatchResult(job.name, label)
        try:
            while True:
                if self.stopping():
                    return None
                job.next_label = label
                yield                        # work() plays the batch once may_refine agrees
                batch = self._batch(job, opponent, label, total)
                if batch is None:
                    return None
                fresh.add(batch)
                verdict = pairing_verdict(total.wins_a, total.wins_b, total.draws, self.rule)
                if verdict is not None:
                    self._record(job, label, fresh, total, verdict)
                    fresh = None
                    return total
        finally:
            if fresh is not None and fresh.games:
                self._record(job, label, fresh, total, "superseded" if not self.stopping()
                             else "interrupted")

    def play_first(self, job, opponent, label):
        """The first rating's one batch against `label` (Schedule.first_rating_games),
        recorded; the pairing's MatchResult, or None when stopping."""
        total = job.totals.setdefault(label, MatchResult(job.name, label))
        games = self.schedule.first_rating_games()
        fresh = MatchResult(job.name, label)
        batch = self._batch(job, opponent, label, total, games=games)
        if batch is not None:
            fresh.add(batch)
        if fresh.games:
            verdict = pairing_verdict(total.wins_a, total.wins_b, total.draws, self.rule)
            self._record(job, label, fresh, total, verdict or (
                "first rating" if not self.stopping() else "interrupted"))
        return None if self.stopping() else total

    def _batch(self, job, opponent, label, total, games=None):
        """One batch of games of the pairing (added to `total`; `games` of them, default
        Schedule.batch_games), its CPU cost a game learnt; None when the role stops before or
        during it (nothing of it counted then)."""
        if games is None:
            games = self.schedule.batch_games(label, total.games)
        games = min(games, self.rule.next_batch(total.games))
        if games <= 0 or self.stopping():
            return None
        size, komi = self.config.model.board_size, self.config.selfplay.komi
        cpu0, wall0 = self.budget.cpu_s(), self.clock()
        batch = play_match(job.ours, opponent, games, size=size, komi=komi,
                           game_offset=total.games, stop=self.stopping)
        cost = self.budget.cpu_s() - cpu0
        self.schedule.batch_played(label, batch.games, cost, self.clock() - wall0)
        if self.stopping() and batch.games < games:
            return None
        total.add(batch)
        self.figures["playing"] = f"{label} {total.wins_a}-{total.wins_b}"
        self.beat(force=True)
        return batch

    def _record(self, job, label, fresh, total, why):
        """Appends the games of `fresh` to the ratings table (one row), notes the pairing in
        `job` (results as the log and summary show them: the pairing's totals)."""
        pace = ({"move_seconds": self.ec.move_seconds} if self.ec.move_seconds > 0
                else {"visits": self.ec.visits})
        append_result(self.table, job.name, label, fresh.wins_a, fresh.wins_b, fresh.draws,
                      size=self.config.model.board_size, source="evaluator", stop=why, **pace)
        text = f"{label} {total.wins_a}-{total.wins_b}" + (
            f"-{total.draws}" if total.draws else "")
        job.results = [r for r in job.results if not r.startswith(label + " ")]
        job.results.append(f"{text} ({why})")
        if label not in job.played:
            job.played.append(label)
        self.figures.pop("playing", None)
        self.figures["done"] = list(job.results)
