"""The evaluator role of a run (`fastgo evaluate`). Each new checkpoint (or every k-th:
cluster.evaluate_every) plays the fixed references (cluster.references: 'random', 'mcts:N') and
the previous evaluated checkpoint, all games of a match at once through the batched search,
network in this process. Results are appended to RUN/ratings.jsonl (never rewritten); the
maximum-likelihood ratings of every player are refitted, RUN/ratings.json holds them, and
RUN/curve.png and RUN/loss.png are redrawn.
"""
import json
import os
import re
import time

CKPT = re.compile(r"ckpt-(\d{9})\.ckpt")
IDLE_S = 0.5                  # the wait between looks for a new checkpoint


def checkpoints(run_dir):
    """[(step, path)] of the numbered checkpoints, by step."""
    out = []
    for name in os.listdir(run_dir.checkpoints):
        match = CKPT.fullmatch(name)
        if match:
            out.append((int(match.group(1)), os.path.join(run_dir.checkpoints, name)))
    return sorted(out)


class Evaluator:
    """Rates the checkpoints of `run_dir` as they come (see the module); `log`: a logger,
    `status`: the role's StatusFile or None."""

    def __init__(self, config, run_dir, log, status=None):
        self.status = status
        self.config = config
        self.cc = config.cluster
        self.run_dir = run_dir
        self.log = log
        self.table = os.path.join(run_dir.root, "ratings.jsonl")
        self.evaluations_path = os.path.join(run_dir.root, "evaluations.jsonl")
        for path in (self.table, self.evaluations_path, os.path.join(run_dir.root, "ratings.json")):
            _check_appendable(path)
        self.evaluations = self._read_evaluations()
        self.last_step = max((e["step"] for e in self.evaluations), default=-1)
        self.previous = self.evaluations[-1]["player"] if self.evaluations else None
        self.previous_path = self.evaluations[-1].get("path") if self.evaluations else None
        self.seen_since = 0
        self.latest_ratings = {}

    def _read_evaluations(self):
        from cluster.plots import read_evaluations

        return read_evaluations(self.evaluations_path)

    def pending(self):
        """The checkpoint to evaluate now (path, step) or None."""
        new = [(s, p) for s, p in checkpoints(self.run_dir) if s > self.last_step]
        if not new:
            return None
        if self.last_step >= 0 and len(new) < self.cc.evaluate_every:
            return None
        return new[-1]

    def evaluate(self, step, path):
        import torch

        from fastgo.ratings import TableError, append_result, fit_ratings, read_table, table_name
        from fastgo.search_settings import SearchSettings
        from inference_server.checkpoint import CheckpointError, load_checkpoint
        from inference_server.batch_evaluator import InProcessEvaluator
        from play.match import SearchSide, play_match
        from play.players import make_player

        torch.set_num_threads(1)
        try:
            ckpt = load_checkpoint(path, expect=self.config.model)
        except (CheckpointError, OSError) as err:      # pruned or replaced meanwhile
            self.log.warning("skipping %s: %s", path, err)
            self.last_step = step
            return
        name = f"ckpt-{step}"
        size, komi = self.config.model.board_size, self.config.selfplay.komi
        games, visits = self.cc.eval_games, self.cc.eval_visits

        def side(model, label, seed):
            return SearchSide(InProcessEvaluator(model, backend=self.config.server.backend,
                                                 threads=1, capacity=64), visits,
                              SearchSettings.for_play(self.config.model.encoding), name=label,
                              seed=seed, opening_moves=2)

        started = time.monotonic()
        opponents = [(ref, make_player(ref, seed=step + i)) for i, ref in enumerate(self.cc.references)]
        if self.previous and self.previous_path and os.path.exists(self.previous_path):
            try:
                prev = load_checkpoint(self.previous_path, expect=self.config.model)
                opponents.append((self.previous, side(prev.model, self.previous, step + 99)))
            except Exception as err:
                self.log.warning("previous checkpoint %s unusable: %s", self.previous_path, err)
        results = []
        for label, opponent in opponents:
            result = play_match(side(ckpt.model, name, step), opponent, games, size=size, komi=komi)
            append_result(self.table, name, table_name(label), result.wins_a, result.wins_b,
                          result.draws,
                          size=size, visits=visits, source="evaluator")
            results.append(f"{label} {result.wins_a}-{result.wins_b}")
            if self.status is not None:
                self.status.beat(lambda: {"evaluating": name, "done": list(results)}, force=True)
        trainer_state = ckpt.extra.get("trainer") or {}
        first_time = self._run_start()
        evaluation = {"player": name, "step": step, "path": path,
                      "time": os.path.getmtime(path) if os.path.exists(path) else time.time(),
                      "games": int(trainer_state.get("games", 0))}
        evaluation["wall_s"] = max(0.0, evaluation["time"] - first_time)
        _append_line(self.evaluations_path, json.dumps(evaluation) + "\n")
        self.evaluations.append(evaluation)
        self.previous, self.previous_path, self.last_step = name, path, step
        try:
            ratings = fit_ratings(read_table(self.table), anchor="random")
        except TableError as err:
            self.log.warning("%s: no ratings fitted: %s", self.table, err)
            ratings = {}
        self.latest_ratings = ratings
        elo = ratings.get(name, (float("nan"),) * 3)
        summary = {"player": name, "step": step, "elo": elo[0], "elo_low": elo[1], "elo_high": elo[2],
                   "references": {r: ratings[r][0] for r in self.cc.references if r in ratings},
                   "results": results, "seconds": round(time.monotonic() - started, 1)}
        _write_json(os.path.join(self.run_dir.root, "ratings.json"),
                    {"latest": summary, "ratings": {k: list(v) for k, v in ratings.items()}})
        self.log.info("%s: Elo %.0f (%.0f..%.0f); %s; %.1f s", name, elo[0], elo[1], elo[2],
                      ", ".join(results), summary["seconds"])
        self.redraw(ratings)
        return summary

    def _run_start(self):
        steps = checkpoints(self.run_dir)
        if self.evaluations and "time" in self.evaluations[0]:
            first = self.evaluations[0]
            return first["time"] - first["wall_s"]
        return os.path.getmtime(steps[0][1]) if steps else time.time()

    def redraw(self, ratings):
        from cluster.plots import draw_curve, draw_losses
        try:
            draw_curve(os.path.join(self.run_dir.root, "curve.png"), self.evaluations, ratings,
                       self.cc.references)
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
    """Appends one line, fsynced; a FIFO or device there is refused (ConfigError), not waited on."""
    from fastgo.config import ConfigError
    from fastgo.files import append_bytes

    try:
        append_bytes(path, line.encode("utf-8"), sync=True)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None


def _write_json(path, data):
    from fastgo.files import atomic_write_text
    atomic_write_text(path, json.dumps(data, indent=1))


def run_evaluator(config_path, run_dir_path, *, once=False, quiet=False, overrides=()) -> int:
    """The role's main loop: logs to RUN/logs/evaluate.log (and stderr unless quiet), beats
    RUN/logs/evaluate.status.json, evaluates what pending() names until SIGTERM or SIGINT
    (with `once`: until nothing is pending); `overrides`: --set items for the config. Returns 0;
    ConfigError for a bad config."""
    import logging

    from fastgo.config import load_config
    from fastgo.role_entry import on_disk_full, setup_logging, stop_on_signals
    from fastgo.rundir import StatusFile, open_run_dir

    config = load_config(config_path, overrides=overrides)
    run_dir = open_run_dir(run_dir_path)
    setup_logging(run_dir.log("evaluate"), quiet=quiet)
    log = logging.getLogger("fastgo.evaluate")
    stopping = stop_on_signals()
    on_disk_full(config)
    status = StatusFile(run_dir, "evaluate")
    evaluator = Evaluator(config, run_dir, log, status)
    last = {}
    while not stopping():
        status.beat(lambda: last)
        job = evaluator.pending()
        if job is None:
            if once:
                break
            time.sleep(IDLE_S)
            continue
        step, path = job
        summary = evaluator.evaluate(step, path)
        if summary:
            last = summary
            status.beat(lambda: last, force=True)
    return 0
