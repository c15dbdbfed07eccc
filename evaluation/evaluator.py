"""The evaluator role of a run (`fastgo evaluate`): rates the run's checkpoints as they come, so
that curve.png keeps measuring for the whole run.

Cheap points first, refined later. Every evaluator.interval_s (once evaluator.every
new checkpoints are there) the newest checkpoint gets its first rating: one batch of half
evaluator.batch_games games against the previous rated checkpoint (the first one: against the
weakest anchor), written at once to RUN/evaluations.jsonl, ratings.json and the curves. Between
points the newest point is refined, one batch at a time and only while the CPU budget leaves
room for the next point on time: the first anchor of evaluator.anchors (player specs, play.specs)
whose expected score is informative (evaluation.pairings), then earlier evaluated checkpoints
spaced geometrically in steps (1/2 and 1/4 of its step: the gain over a long span measured
directly, so that a chain of short links cannot drift), then the previous checkpoint until its
interval is narrow or its result one-sided, then the other informative anchors. A newer point
supersedes the refinement in progress; the games it had played are kept. When points are due
and how much refining fits is evaluation.schedule's; who is played, evaluation.opponents'.
Games are played through the batched search at evaluator.visits (network in this process), a
pairing's in batches, each pairing recorded as it ends (evaluation.pairing_games).
Before each batch the role idles while its CPU is over evaluator.cpu_share
(evaluation.budget). Results are appended to RUN/ratings.jsonl and each evaluated checkpoint
to RUN/evaluations.jsonl (never rewritten); the ratings of every player are refitted (random =
0), RUN/ratings.json holds them, and RUN/curve.png and RUN/loss.png are redrawn
(evaluation.curves: at most once a minute).
"""
import os
import time

from evaluation.budget import CpuBudget
from evaluation.curves import REDRAW_S, Curves
from evaluation.evaluations import (
    RunClock,
    append_evaluation,
    keep_copy,
    last_rated_step,
    read_evaluations,
    written_times,
)
from evaluation.opponents import Beating, Opponents
from evaluation.pairing_games import PairingGames, RatingJob
from evaluation.pairings import PairingRule, predictor
from evaluation.schedule import Schedule
from fastgo import bounded_json
from fastgo.files import atomic_write_text, check_regular, escaped, read_bounded
from network.loading import NetworkError
from play.gtp.side import GtpEngineError
from rundata.config import ConfigError
from rundata.rundir import checkpoint_player
from rundata.strength import read_strength

IDLE_S = 0.5                  # the wait between looks for a new checkpoint or budget


class Evaluator:
    """Rates the checkpoints of `run_dir` as they come (see the module); `log`: a logger,
    `status`: the role's StatusFile or None; `stopping()`: True once the role should stop;
    `budget`: a CpuBudget (default: evaluator.cpu_share, carried over from
    evaluations.jsonl), waited on only when `enforce_budget`; `outside_budget`: this process's
    CPU is not counted in it (the final rating, made once the run's other roles have stopped),
    so the figures recorded stay the run's own."""

    def __init__(self, config, run_dir, log, status=None, *, stopping=None, budget=None,
                 enforce_budget=True, outside_budget=False, sleep=time.sleep,
                 clock=time.monotonic, redraw_s=REDRAW_S):
        self.config, self.ec, self.run_dir, self.log = config, config.evaluator, run_dir, log
        self.status = status
        self.stopping = stopping or (lambda: False)
        self.sleep, self.clock = sleep, clock
        self.refinement = None                        # the newest point's pairings still due
        self.job = None                               # the checkpoint of the newest point
        self.enforce_budget = enforce_budget
        self.table = run_dir.ratings_table
        self.evaluations_path = run_dir.evaluations
        for path in (self.table, self.evaluations_path, run_dir.ratings):
            _check_appendable(path)
        self.evaluations = read_evaluations(self.evaluations_path)
        self.last_step = last_rated_step(self.evaluations)
        last = self.evaluations[-1] if self.evaluations else {}
        clocks = {"cpu_clock": lambda: 0.0, "wall_clock": lambda: 0.0} if outside_budget else {}
        self.budget = budget or CpuBudget(self.ec.cpu_share,
                                          carried_cpu_s=last.get("eval_cpu_s", 0.0),
                                          carried_wall_s=last.get("eval_wall_s", 0.0), **clocks)
        self.rule = PairingRule(batch=self.ec.batch_games, max_games=self.ec.max_games,
                                elo_width=self.ec.elo_width)
        self.schedule = Schedule(self.ec.interval_s, self.budget, clock, enforce_budget,
                                 self.rule)
        self.opponents = Opponents(config, log)      # anchors and earlier checkpoints
        self.figures = {}                             # what the status file shows besides CPU
        self.games = PairingGames(config, self.table, self.rule, self.schedule, self.budget,
                                  self.figures, self.beat, stopping=self.stopping, clock=clock)
        self.latest_ratings = {}
        # curve.png and loss.png (redraw_s None: drawn when a refinement ends or the role stops)
        self.curves = Curves(run_dir, self.evaluations, lambda: self.anchors, log,
                             redraw_s=redraw_s, clock=clock)
        self.run_clock = self._run_clock()            # a checkpoint's wall_s, pauses left out

    @property
    def anchors(self):
        """{name: Spec} of the usable anchors, in rising strength (Opponents.anchors)."""
        return self.opponents.anchors

    # --- budget and heartbeat ------------------------------------------------------------------

    def beat(self, force=False):
        """The status file: the figures of the point in hand, the CPU budget's, and the
        anchors skipped on this machine ("skipped_anchors": Opponents.skipped_figures)."""
        if self.status is not None:
            self.status.beat(lambda: {**self.figures, **self.budget.figures(),
                                      "skipped_anchors": self.opponents.skipped_figures()},
                             force=force)

    def wait_for_budget(self, credit_s=0.0):
        """Idles (beating) while the CPU used, less `credit_s` seconds, is over the budget;
        False once stopping."""
        while self.enforce_budget and not self.stopping():
            wait = self.budget.wait_s() - credit_s / self.budget.share
            if wait <= 0:
                break
            self.figures["waiting_s"] = round(wait, 1)
            self.beat()
            self.sleep(min(IDLE_S, wait))
        self.figures.pop("waiting_s", None)
        return not self.stopping()

    # --- what to evaluate ----------------------------------------------------------------------

    def pending(self, every=None):
        """The checkpoint to evaluate now (step, path) or None: the newest, once `every`
        (default evaluator.every) checkpoints newer than the last evaluated are there."""
        new = [(s, p) for s, p in self.run_dir.checkpoint_list() if s > self.last_step]
        every = self.ec.every if every is None else every
        if not new or (self.last_step >= 0 and len(new) < every):
            return None
        return new[-1]

    def _fit(self):
        """(ratings {name: (elo, low, high)}, rows of the table, predict(a, b): a's expected
        score against b as evaluation.pairings.predictor gives it)."""
        strength = read_strength(self.table)
        if strength.error:
            self.log.warning("%s: no ratings fitted: %s", self.table, strength.error)
        return strength.elo, strength.rows, predictor(strength)

    # --- the schedule: a cheap point first, refined later ----------------------------------

    def work(self, once=False):
        """One unit of the evaluator's work, the budget waited on first; False when there was
        nothing to do. A first rating of the newest checkpoint when pending() has one and a
        point is due (`once`: the newest not yet rated, whatever the schedule), else one
        batch refining the newest rated checkpoint's rating when may_refine()."""
        if self.job is None and self.evaluations:
            self._resume()
        job = self.pending(1 if once else None)
        if job is not None and (once or self.schedule.point_due(self.refinement is not None)):
            self.stop_refining()
            # a point may overdraw the budget by what one point costs: refining, which waits
            # for a clear budget, pays it back, so points keep their time and the average holds
            if self.wait_for_budget(credit_s=self.schedule.point_credit_s()):
                self.evaluate(*job)
            return True
        if self.refinement is not None and (once or self._may_refine()):
            # waiting for the budget may have brought the next point too near for this batch
            if self.wait_for_budget() and (once or self._may_refine()):
                self._advance()
            return True
        return False

    def _start_refining(self, job):
        """`job`'s refinement (_refine), run up to its first batch, which it names (in
        job.next_label) before playing it, so that may_refine weighs the batch to come."""
        self.job, self.refinement = job, self._refine(job)
        self._advance()

    def _advance(self):
        """Plays the refinement's announced batch and runs it up to the next one (at the
        start: up to the first); the refinement is None once it has nothing more to play."""
        try:
            next(self.refinement)
        except StopIteration:
            self.refinement = None
            self.figures.pop("refining", None)
            self.curves.draw_pending()

    def _resume(self):
        """The refinement of the newest rated checkpoint, taken up again after a restart (or by
        the final rating): its pairings so far from the ratings table, its network from its
        kept copy; nothing when that copy cannot be loaded."""
        last = self.evaluations[-1]
        name, step = last["player"], last["step"]
        try:
            games = sum(row["games"] for row in self._fit()[1] if row["a"] == name)
            # other seeds than its first life's, so that no game of it is played again
            side = self.opponents.checkpoint_side(last.get("path"), name,
                                                  step + 7919 * (games + 1))[1]
        except Exception as err:           # pruned or unreadable: its rating stays as it is
            self.log.info("%s: not refined further: %s", name, escaped(err, 200, one_line=True))
            self.job = RatingJob(name, step, None)
            return
        job = self.job = RatingJob(name, step, Beating(side, self.beat))
        job.started, job.seed = self.clock(), step * 1000 + 1_000_003 * (games + 1)
        job.take_up(self._fit()[1], self.anchors)
        self.log.info("%s: refining its rating from %d games", name,
                      sum(t.games for t in job.totals.values()))
        self._start_refining(job)

    def stop_refining(self):
        """Ends the refinement in progress: the games it played are recorded, its engines
        closed; what it had still to play is dropped (a newer checkpoint supersedes it)."""
        if self.refinement is not None:
            self.refinement.close()
            self.refinement = None
            self.figures.pop("refining", None)

    # --- one evaluation ------------------------------------------------------------------------

    def evaluate(self, step, path):
        """The first rating of a checkpoint (see the module): one batch against the previous
        rated checkpoint (the first checkpoint: against the weakest anchor), recorded at once
        as its curve point; the rest of its pairings become self.refinement, a generator that
        plays one batch per next() (run to its end here without evaluator.interval_s). Returns the
        summary, or None when the checkpoint is unreadable or the role is stopping."""
        from network.checkpoint import MAX_CHECKPOINT_BYTES

        started, cpu0 = self.clock(), self.budget.cpu_s()
        name = checkpoint_player(step)
        try:
            # when the checkpoint was written: taken now, as the trainer may prune the file
            # while its matches are played
            stamp = os.path.getmtime(path)
            data = read_bounded(path, MAX_CHECKPOINT_BYTES)
            network, side = self.opponents.checkpoint_side(path, name, step, data=data)
        except (NetworkError, OSError) as err:   # pruned, replaced meanwhile, or NaN weights
            self.log.warning("skipping %s: %s", path, err)
            self.last_step = step
            return None
        self.figures.clear()                 # in place: self.games writes into it too
        self.figures.update({"evaluating": name, "done": []})
        ours = Beating(side, self.beat)
        job = RatingJob(name, step, ours)
        first = self._first_pairing(job)
        if first is not None:
            label, opponent = first
            try:
                result = self.games.play_first(job, opponent, label)
            except GtpEngineError as err:
                self.opponents.failed(label, err)
                result = True
            finally:
                if label in self.anchors:
                    opponent.close()         # refining plays it on to its verdict first
            if result is None:
                return None
        trainer_state = network.extra.get("trainer") or {}
        kept = keep_copy(self.run_dir.evaluated, self.evaluations, step, path, data,
                         self.log)
        evaluation = {"player": name, "step": step, "path": kept, "time": stamp,
                      "games": int(trainer_state.get("games", 0)),
                      "wall_s": self.run_clock.wall_s(stamp),
                      "opponents": list(job.played), "rated": time.time()}
        evaluation.update((k, v) for k, v in self.budget.figures().items()
                          if k in ("eval_cpu_s", "eval_wall_s"))
        append_evaluation(self.evaluations_path, evaluation)
        self.evaluations.append(evaluation)
        self.last_step = step
        self.schedule.point_made(started, self.budget.cpu_s() - cpu0)
        job.started = started
        summary = self._publish(job)
        self.log.info("%s: first rating %s; %.1f s, %.1f s of CPU", name,
                      ", ".join(job.results) or "no opponent", self.clock() - started,
                      self.budget.cpu_s() - cpu0)
        self._start_refining(job)
        if self.schedule.interval <= 0:      # the whole evaluation before the next checkpoint
            while self.refinement is not None:
                if not self.wait_for_budget():
                    return None
                self._advance()
            summary = self.figures.get("latest", summary)
        return summary

    def _publish(self, job):
        """Refits every rating, writes ratings.json with `job`'s summary as the latest, logs
        it, redraws the curves; returns the summary."""
        ratings, _, _ = self._fit()
        self.latest_ratings = ratings
        elo = ratings.get(job.name, (float("nan"),) * 3)
        summary = {"player": job.name, "step": job.step, "elo": elo[0], "elo_low": elo[1],
                   "elo_high": elo[2],
                   "anchors": {a: ratings[a][0] for a in self.anchors if a in ratings},
                   "results": list(job.results),
                   "seconds": round(self.clock() - job.started, 1),
                   "cpu_share": round(self.budget.used_share(), 4)}
        _write_json(self.run_dir.ratings,
                    {"latest": summary, "ratings": {k: list(v) for k, v in ratings.items()}})
        self.log.info("%s: Elo %.0f (%.0f..%.0f); %s; %.1f s; evaluator CPU %.3f of a core "
                      "(budget %g)", job.name, elo[0], elo[1], elo[2],
                      ", ".join(job.results) or "no opponent", summary["seconds"],
                      self.budget.used_share(), self.budget.share)
        self.figures.clear()
        self.figures.update({"latest": summary, "done": list(job.results)})
        self.beat(force=True)
        self.curves.redraw(ratings)
        return summary

    def _first_pairing(self, job):
        """(label, side) of a checkpoint's first pairing: the anchor whose expected score is
        nearest to even by the previous rated checkpoint's rating (a rung of fixed strength:
        the most a few games say), else the previous rated checkpoint, else (or where it
        cannot be loaded) the anchor next_anchor picks; None when there is none."""
        if self.evaluations:
            previous = self.evaluations[-1]
            anchor = next(self.opponents.anchor_sides(job, self._fit, limit=1,
                                                      proxy=previous["player"],
                                                      rated_only=True), None)
            if anchor is not None:
                return anchor
            side = self.opponents.earlier(job, previous, 100)
            if side is not None:         # else pruned, replaced, unreadable: an anchor instead
                return previous["player"], side
        return next(self.opponents.anchor_sides(job, self._fit, limit=1), None)

    def _refine(self, job):
        """The rest of a checkpoint's pairings, one batch per next(): the informative anchors,
        nearest to even first (what puts the curve on a fixed scale: rungs of known strength
        above and below it), each to its verdict, a one-sided one followed by the next one up
        or down; then the previous checkpoint (the gain of one point over the last, measured
        directly) and the earlier checkpoints at fractions of its step where their expected
        score is informative (the gain over a long span, so that a chain of short links cannot
        drift). Each pairing's games so far are recorded when it ends, and also when the
        generator is closed (superseded by a newer point) or the role stops; ratings.json and
        the curves are refreshed after each pairing."""
        previous = self.evaluations[-2]["player"] if len(self.evaluations) > 1 else None
        first = job.played[0] if job.played else None
        if first in self.anchors and job.anchors.get(first) == 0:
            # the first rating's rung, played on to its verdict (a resumed job's too)
            side = self.opponents.anchor_side(job, first)
            if side is not None and not (yield from self._play_anchor(job, first, side)):
                return
        for label, side in self.opponents.anchor_sides(job, self._fit, proxy=previous):
            if not (yield from self._play_anchor(job, label, side)):
                return
        for label, side in self.opponents.checkpoint_sides(job, self.evaluations,
                                                           self._fit()[2]):
            result = yield from self.games.play_batches(job, side, label)
            if result is None:
                return
            self._publish(job)

    def _play_anchor(self, job, label, side):
        """One anchor's pairing (see _refine), its engine closed after; False when stopping."""
        try:
            result = yield from self.games.play_batches(job, side, label)
        except GtpEngineError as err:
            self.opponents.failed(label, err)
            return True
        finally:
            side.close()                 # its CPU time is counted once it has ended
        if result is None:
            return False
        self._publish(job)
        self.opponents.verdict(job, label, result)
        return True

    def _may_refine(self):
        """Schedule.may_refine for the batch the refinement has named as its next."""
        job = self.job
        label = job.next_label if job is not None else None
        total = job.totals.get(label) if label is not None else None
        return self.schedule.may_refine(label, total.games if total is not None else 0)

    def _run_clock(self):
        """The RunClock of this evaluator's rows: the run's start, less a pause before it."""
        written = written_times(self.run_dir)
        steps = self.run_dir.checkpoint_list()
        first = os.path.getmtime(steps[0][1]) if steps else time.time()
        clock = RunClock(self.evaluations, written, time.time(), first)
        if clock.paused_at is not None:
            self.log.info("the run was stopped for %.0f min: its wall time goes on from where it "
                          "stopped", clock.pause_s / 60)
        return clock


def _check_appendable(path):
    """ConfigError (one line) when something other than a regular file is at `path`: a FIFO
    there would block the evaluator, a folder would stop it at its first result."""
    try:
        check_regular(path)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None


def _write_json(path, data):
    atomic_write_text(path, bounded_json.dumps(data, indent=1))
