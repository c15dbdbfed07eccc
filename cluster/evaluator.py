"""The evaluator role of a run (`fastgo evaluate`): rates the run's checkpoints as they come, so
that curve.png keeps measuring for the whole run.

The newest checkpoint (once cluster.evaluate_every new ones are there) plays the opponents that
cluster.pairings chooses where its expected score is informative: earlier evaluated checkpoints
spaced geometrically in steps, then the anchors of cluster.anchors (player specs, play.specs).
Each pairing plays batches of cluster.eval_batch_games games at once through the batched search
at cluster.eval_visits (network in this process) until its interval is narrow or its result
one-sided. Before each batch the role idles while its CPU is over cluster.eval_cpu_share
(cluster.eval_budget). Results are appended to RUN/ratings.jsonl and each evaluated checkpoint to
RUN/evaluations.jsonl (never rewritten); the ratings of every player are refitted (random = 0),
RUN/ratings.json holds them, and RUN/curve.png and RUN/loss.png are redrawn.
"""
import json
import os
import re
import time

CKPT = re.compile(r"ckpt-(\d{9})\.ckpt")
IDLE_S = 0.5                  # the wait between looks for a new checkpoint or budget
OPENING_MOVES = 2             # a network's first moves sampled by visits, as in the arena


def checkpoints(run_dir):
    """[(step, path)] of the numbered checkpoints, by step."""
    out = []
    for name in os.listdir(run_dir.checkpoints):
        match = CKPT.fullmatch(name)
        if match:
            out.append((int(match.group(1)), os.path.join(run_dir.checkpoints, name)))
    return sorted(out)


def unrated_newest(run_dir):
    """(step, path) of the run's newest checkpoint when the evaluator has not rated it (nor
    anything newer), else None: what a final rating (`fastgo evaluate --once`) would play."""
    from cluster.plots import read_evaluations

    steps = checkpoints(run_dir)
    if not steps:
        return None
    rated = last_rated_step(read_evaluations(os.path.join(run_dir.root, "evaluations.jsonl")))
    return steps[-1] if steps[-1][0] > rated else None


def last_rated_step(evaluations):
    """The step of the newest checkpoint in the rows of evaluations.jsonl, -1 without any."""
    return max((e["step"] for e in evaluations), default=-1)


class _Beating:
    """A match side that beats the role's heartbeat at each of its turns: a long pairing (GNU
    Go at level 10) is progress, not a stall for the supervisor."""

    def __init__(self, side, beat):
        self.side, self.beat, self.name = side, beat, side.name

    def prepare(self, games, size, komi):
        self.side.prepare(games, size, komi)

    def moves(self, indices, games):
        self.beat()
        return self.side.moves(indices, games)


class Evaluator:
    """Rates the checkpoints of `run_dir` as they come (see the module); `log`: a logger,
    `status`: the role's StatusFile or None; `stopping()`: True once the role should stop;
    `budget`: a CpuBudget (default: cluster.eval_cpu_share, carried over from
    evaluations.jsonl), waited on only when `enforce_budget`; `outside_budget`: this process's
    CPU is not counted in it (the final rating, made once the run's other roles have stopped),
    so the figures recorded stay the run's own."""

    def __init__(self, config, run_dir, log, status=None, *, stopping=None, budget=None,
                 enforce_budget=True, outside_budget=False, sleep=time.sleep):
        from cluster.eval_budget import CpuBudget
        from cluster.pairings import PairingRule
        from cluster.plots import read_evaluations

        self.config, self.cc, self.run_dir, self.log = config, config.cluster, run_dir, log
        self.status = status
        self.stopping = stopping or (lambda: False)
        self.sleep = sleep
        self.enforce_budget = enforce_budget
        self.table = os.path.join(run_dir.root, "ratings.jsonl")
        self.evaluations_path = os.path.join(run_dir.root, "evaluations.jsonl")
        for path in (self.table, self.evaluations_path, os.path.join(run_dir.root, "ratings.json")):
            _check_appendable(path)
        self.evaluations = read_evaluations(self.evaluations_path)
        self.last_step = last_rated_step(self.evaluations)
        last = self.evaluations[-1] if self.evaluations else {}
        clocks = {"cpu_clock": lambda: 0.0, "wall_clock": lambda: 0.0} if outside_budget else {}
        self.budget = budget or CpuBudget(self.cc.eval_cpu_share,
                                          carried_cpu_s=last.get("eval_cpu_s", 0.0),
                                          carried_wall_s=last.get("eval_wall_s", 0.0), **clocks)
        self.rule = PairingRule(batch=self.cc.eval_batch_games, max_games=self.cc.eval_max_games,
                                elo_width=self.cc.eval_elo_width)
        self.anchors = self._usable_anchors()         # {name: Spec}, in rising strength
        self.unusable = {}                            # anchor name -> why, for this process
        self.figures = {}                             # what the status file shows besides CPU
        self.rates = {}                               # network shape -> visits/s, one thread
        self.latest_ratings = {}

    # --- set-up --------------------------------------------------------------------------------

    def _usable_anchors(self):
        from fastgo.config import ConfigError
        from fastgo.ratings import table_name
        from play.specs import gnugo_installed, parse_spec

        out = {}
        for text in self.cc.anchors:
            try:
                spec = parse_spec(text)
            except ValueError as err:
                raise ConfigError(f"cluster.anchors: {err}") from None
            if spec.kind == "gnugo" and gnugo_installed(spec.argv[0]) is None:
                self.log.info("anchor %s skipped: GNU Go is not installed (on PATH or in "
                              "/usr/games; e.g. apt-get install gnugo)", spec.name)
                continue
            if spec.kind == "checkpoint" and not os.path.isfile(spec.path):
                self.log.warning("anchor %s skipped: no such checkpoint file", spec.path)
                continue
            out[table_name(spec.name)] = spec
        return out

    def _load_network(self, path, name, seed, data=None):
        """A SearchSide of the checkpoint at `path` (its bytes `data` when already read) at
        cluster.eval_visits: inference_server.network.load_network (canaries checked) and
        play.network_player, as every command plays a checkpoint. NetworkError when unusable."""
        from inference_server.network import load_network
        from play.network_player import network_side

        network = load_network(path, data=data, expect=self.config.model,
                               backend=self.config.server.backend, threads=1,
                               capacity=max(64, self.cc.eval_batch_games))
        side = network_side(network, visits=self.cc.eval_visits, name=name, seed=seed,
                            opening_moves=OPENING_MOVES)
        if self.cc.eval_move_seconds > 0:    # equal time: the visits its own speed fits
            side.visits = self._timed_visits(network, side)
        return network, side

    def _timed_visits(self, network, side):
        """cluster.eval_move_seconds in visits for this network: its one-game, one-thread
        speed (play.equal_time), measured once per network shape in this process."""
        from play.equal_time import one_thread_rate, visits_for

        shape = network.config.name
        if shape not in self.rates:
            self.rates[shape] = one_thread_rate(network.evaluator, side.settings,
                                                network.config.board_size,
                                                self.config.selfplay.komi)
            self.log.info("%s searches %.0f visits/s on one thread: %d visits a move in %g s",
                          shape, self.rates[shape],
                          visits_for(self.cc.eval_move_seconds, self.rates[shape]),
                          self.cc.eval_move_seconds)
        return visits_for(self.cc.eval_move_seconds, self.rates[shape])

    # --- budget and heartbeat ------------------------------------------------------------------

    def beat(self, force=False):
        if self.status is not None:
            self.status.beat(lambda: {**self.figures, **self.budget.figures()}, force=force)

    def wait_for_budget(self):
        """Idles (beating) while the CPU used is over the budget; False once stopping."""
        while self.enforce_budget and not self.stopping():
            wait = self.budget.wait_s()
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
        (default cluster.evaluate_every) checkpoints newer than the last evaluated are there."""
        new = [(s, p) for s, p in checkpoints(self.run_dir) if s > self.last_step]
        every = self.cc.evaluate_every if every is None else every
        if not new or (self.last_step >= 0 and len(new) < every):
            return None
        return new[-1]

    def _fit(self):
        """(ratings {name: (elo, low, high)}, rows of the table, predict(a, b) -> a's expected
        score against b as (low, expected, high) over a's 95% interval, where both are rated
        in one connected group, else None)."""
        from cluster.pairings import expected_score
        from fastgo.ratings import TableError, components, fit_ratings, read_table

        rows = read_table(self.table)
        try:
            ratings = fit_ratings(rows, anchor="random")
        except TableError as err:
            self.log.warning("%s: no ratings fitted: %s", self.table, err)
            ratings = {}
        group = {name: k for k, names in enumerate(components(rows, "random")) for name in names}

        def predict(a, b):
            if a in ratings and b in ratings and group.get(a) == group.get(b):
                return tuple(expected_score(elo, ratings[b][0]) for elo in
                             (ratings[a][1], ratings[a][0], ratings[a][2]))
            return None

        return ratings, rows, predict

    # --- one evaluation ------------------------------------------------------------------------

    def evaluate(self, step, path):
        """Plays the checkpoint's pairings (see the module) and records them; returns the
        summary, or None when the checkpoint is unreadable or the role is stopping."""
        import torch

        from fastgo.files import read_bounded
        from inference_server.checkpoint import MAX_CHECKPOINT_BYTES
        from inference_server.network import NetworkError

        started = time.monotonic()
        torch.set_num_threads(1)
        name = f"ckpt-{step}"
        try:
            # when the checkpoint was written: taken now, as the trainer may prune the file
            # while its matches are played
            stamp = os.path.getmtime(path)
            data = read_bounded(path, MAX_CHECKPOINT_BYTES)
            network, side = self._load_network(path, name, step, data=data)
        except (NetworkError, OSError) as err:   # pruned, replaced meanwhile, or NaN weights
            self.log.warning("skipping %s: %s", path, err)
            self.last_step = step
            return None
        self.figures = {"evaluating": name, "done": []}
        ours = _Beating(side, self.beat)
        results, played = [], []
        finished = self._play_checkpoints(ours, name, step, results, played) and \
            self._play_anchors(ours, name, step, results, played)
        if not finished:
            return None
        trainer_state = network.extra.get("trainer") or {}
        kept = self._keep(step, path, data)
        evaluation = {"player": name, "step": step, "path": kept, "time": stamp,
                      "games": int(trainer_state.get("games", 0)),
                      "wall_s": max(0.0, stamp - self._run_start()), "opponents": played}
        evaluation.update((k, v) for k, v in self.budget.figures().items()
                          if k in ("eval_cpu_s", "eval_wall_s"))
        _append_line(self.evaluations_path, json.dumps(evaluation) + "\n")
        self.evaluations.append(evaluation)
        self.last_step = step
        ratings, _, _ = self._fit()
        self.latest_ratings = ratings
        elo = ratings.get(name, (float("nan"),) * 3)
        summary = {"player": name, "step": step, "elo": elo[0], "elo_low": elo[1],
                   "elo_high": elo[2],
                   "anchors": {a: ratings[a][0] for a in self.anchors if a in ratings},
                   "results": results, "seconds": round(time.monotonic() - started, 1),
                   "cpu_share": round(self.budget.used_share(), 4)}
        _write_json(os.path.join(self.run_dir.root, "ratings.json"),
                    {"latest": summary, "ratings": {k: list(v) for k, v in ratings.items()}})
        self.log.info("%s: Elo %.0f (%.0f..%.0f); %s; %.1f s; evaluator CPU %.3f of a core "
                      "(budget %g)", name, elo[0], elo[1], elo[2], ", ".join(results),
                      summary["seconds"], self.budget.used_share(), self.budget.share)
        self.figures = {"latest": summary}
        self.beat(force=True)
        self.redraw(ratings)
        return summary

    def _keep(self, step, path, data):
        """RUN/evaluated/NAME: a copy of the checkpoint as a later opponent (the trainer prunes
        its own); copies of earlier ones are thinned to pairings.kept_steps. Returns the copy's
        path, or `path` when it cannot be written."""
        from cluster.pairings import kept_steps
        from fastgo.files import atomic_write

        folder = os.path.join(self.run_dir.root, "evaluated")
        kept = os.path.join(folder, os.path.basename(path))
        try:
            os.makedirs(folder, exist_ok=True)
            atomic_write(kept, lambda handle: handle.write(data))
        except OSError as err:
            self.log.warning("cannot keep a copy of %s: %s", path, err.strerror or err)
            return path
        keep = kept_steps([e["step"] for e in self.evaluations] + [step])
        for e in self.evaluations:
            copy = e.get("path", "")
            if e["step"] not in keep and os.path.dirname(copy) == folder and os.path.exists(copy):
                try:
                    os.remove(copy)
                except OSError:
                    pass
        return kept

    def _play_checkpoints(self, ours, name, step, results, played):
        from cluster.pairings import checkpoint_opponents

        _, _, predict = self._fit()
        # the previous one always; the others among those whose copy is still there
        there = [e for e in self.evaluations if e is self.evaluations[-1]
                 or os.path.isfile(e.get("path", ""))]
        names, skipped = checkpoint_opponents(step, there, predict)
        for other, why in skipped.items():
            self.log.info("%s: skips %s: %s", name, other, why)
        paths = {e["player"]: e.get("path") for e in self.evaluations}
        for k, other in enumerate(names):
            path = paths.get(other)
            try:
                side = self._load_network(path, other, step * 1000 + 100 + k)[1]
            except Exception as err:         # pruned, replaced, unreadable: the others go on
                self.log.warning("%s: earlier checkpoint %s unusable (%s): %s", name, other,
                                 path, " ".join(str(err).split())[:200])
                continue
            if not self._pairing(ours, side, other, name, results, played):
                return False
        return True

    def _play_anchors(self, ours, name, step, results, played):
        from cluster.pairings import next_anchor, one_sided, retired_anchors
        from play.gtp_side import GtpEngineError
        from play.specs import make_side

        played_anchors, skipped = {}, {}
        while True:
            ratings, rows, predict = self._fit()
            retired = {**retired_anchors(rows, list(self.anchors)), **self.unusable}
            predicted = {a: p for a in self.anchors if (p := predict(name, a)) is not None}
            anchor, skipped = next_anchor(list(self.anchors), retired=retired,
                                          played=played_anchors, predicted=predicted,
                                          max_informative=self.cc.eval_anchors)
            if anchor is None:
                break
            seed = step * 1000 + 500 + len(played_anchors)
            try:
                side = make_side(self.anchors[anchor], seed=seed,
                                 move_seconds=self.cc.eval_move_seconds or None,
                                 load_network=lambda path, seed: self._load_network(
                                     path, anchor, seed)[1])
                side.name = anchor
            except Exception as err:
                self.unusable[anchor] = f"unusable: {' '.join(str(err).split())[:200]}"
                self.log.warning("anchor %s: %s", anchor, self.unusable[anchor])
                continue
            try:
                result = self._pairing(ours, side, anchor, name, results, played)
            except GtpEngineError as err:
                self.unusable[anchor] = f"cannot start: {' '.join(str(err).split())[:200]}"
                self.log.warning("anchor %s: %s", anchor, self.unusable[anchor])
                continue
            finally:
                if hasattr(side, "close"):
                    side.close()             # its CPU time is counted once it has ended
            if not result:
                return False
            verdict = played_anchors[anchor] = one_sided(result.wins_a, result.wins_b,
                                                         result.draws)
            if verdict > 0:
                self.log.info("%s: won %s %d-%d, beyond the informative range: %s is retired "
                              "for later checkpoints", name, anchor, result.wins_a,
                              result.wins_b, anchor)
            elif verdict < 0:
                self.log.info("%s: lost to %s %d-%d, beyond the informative range: no "
                              "stronger anchor this time", name, anchor, result.wins_a,
                              result.wins_b)
        if skipped:
            self.log.info("%s: anchors not played: %s", name,
                          "; ".join(f"{a} ({why})" for a, why in skipped.items()))
        return True

    def _pairing(self, ours, opponent, label, name, results, played):
        """Plays `ours` against `opponent` in batches until the rule stops it, appends the
        result to the table; returns the MatchResult, or None when stopping."""
        from cluster.pairings import pairing_verdict
        from fastgo.ratings import append_result
        from play.match import MatchResult, play_match

        size, komi = self.config.model.board_size, self.config.selfplay.komi
        total, verdict = MatchResult(name, label), None
        while verdict is None and self.wait_for_budget():
            games = self.rule.next_batch(total.games)
            total.add(play_match(ours, opponent, games, size=size, komi=komi,
                                 game_offset=total.games, stop=self.stopping))
            verdict = pairing_verdict(total.wins_a, total.wins_b, total.draws, self.rule)
            self.figures["playing"] = f"{label} {total.wins_a}-{total.wins_b}"
            self.beat(force=True)
        if total.games:
            pace = ({"move_seconds": self.cc.eval_move_seconds} if self.cc.eval_move_seconds > 0
                    else {"visits": self.cc.eval_visits})
            append_result(self.table, name, label, total.wins_a, total.wins_b, total.draws,
                          size=size, source="evaluator", stop=verdict or "interrupted", **pace)
            text = f"{label} {total.wins_a}-{total.wins_b}" + (
                f"-{total.draws}" if total.draws else "")
            results.append(f"{text} ({verdict or 'interrupted'})")
            played.append(label)
            self.figures["done"] = list(results)
        self.figures.pop("playing", None)
        return total if verdict is not None else None

    def _run_start(self):
        if self.evaluations and "time" in self.evaluations[0]:
            first = self.evaluations[0]
            return first["time"] - first["wall_s"]
        steps = checkpoints(self.run_dir)
        return os.path.getmtime(steps[0][1]) if steps else time.time()

    def redraw(self, ratings):
        from cluster.plots import draw_curve, draw_losses
        from fastgo.ratings import read_table
        try:
            draw_curve(os.path.join(self.run_dir.root, "curve.png"), self.evaluations, ratings,
                       list(self.anchors), rows=read_table(self.table))
            draw_losses(os.path.join(self.run_dir.root, "loss.png"), self.run_dir.metrics)
        except Exception as err:        # a plot must never stop the evaluator
            self.log.warning("could not draw the curves: %s", err)


def _check_appendable(path):
    """ConfigError (one line) when something other than a regular file is at `path`: a FIFO
    there would block the evaluator, a folder would stop it at its first result."""
    from fastgo.config import ConfigError
    from fastgo.files import check_regular

    try:
        check_regular(path)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None


def _append_line(path, line):
    """Appends one line, fsynced, on a fresh line after a torn one (a crash mid-append); a FIFO
    or device there is refused (ConfigError), not waited on."""
    from fastgo.config import ConfigError
    from fastgo.files import append_bytes

    try:
        append_bytes(path, line.encode("utf-8"), sync=True, line=True)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None


def _write_json(path, data):
    from fastgo.files import atomic_write_text
    atomic_write_text(path, json.dumps(data, indent=1))


def run_evaluator(config_path, run_dir_path, *, once=False, quiet=False, overrides=()) -> int:
    """The role's main loop: logs to RUN/logs/evaluate.log (and stderr unless quiet), beats
    RUN/logs/evaluate.status.json (with the CPU share), evaluates what pending() names until
    SIGTERM or SIGINT (with `once`: the newest checkpoint not yet evaluated, whatever
    cluster.evaluate_every, outside the CPU budget: neither waiting on it nor counted in it);
    `overrides`: --set items for the config. Returns 0; ConfigError for a bad config."""
    import logging

    from fastgo.config import load_config
    from fastgo.role_entry import on_disk_full, setup_logging, stop_on_signals
    from fastgo.rundir import StatusFile, open_run_dir

    config = load_config(config_path, overrides=overrides)
    run_dir = open_run_dir(run_dir_path)
    setup_logging(run_dir.log("evaluate"), quiet=quiet)
    log = logging.getLogger("fastgo.evaluate")
    stopping = stop_on_signals()
    # the final rating is optional: on a full disk it stops at once (exit status 75), never waits
    on_disk_full(config, policy="stop" if once else None)
    status = StatusFile(run_dir, "evaluate")
    evaluator = Evaluator(config, run_dir, log, status, stopping=stopping, enforce_budget=not once,
                          outside_budget=once)
    if once:
        log.info("--once: the newest checkpoint not yet rated, outside the CPU budget")
    while not stopping():
        evaluator.beat()
        if not evaluator.wait_for_budget():
            break
        job = evaluator.pending(1 if once else None)
        if job is None:
            if once:
                break
            time.sleep(IDLE_S)
            continue
        evaluator.evaluate(*job)
    evaluator.beat(force=True)
    budget = evaluator.budget
    log.info("evaluator CPU: %.1f s in %.1f s, %.3f of a core on average (budget %g)",
             budget.cpu_s(), budget.wall_s(), budget.used_share(), budget.share)
    return 0
