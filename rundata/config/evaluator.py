"""The `[evaluator]` section: how the evaluator (`fastgo evaluate`, evaluation.evaluator) rates
checkpoints: how often, at what visits or time, against which anchors, how many games a pairing,
within what CPU share, and the final rating when a run ends. Whether it runs at all is
`cluster.evaluate` (which roles a run starts); its Ray resources are
`cluster.evaluator_resources`. Stdlib only at import.
"""
from __future__ import annotations

from dataclasses import dataclass

from fastgo.player_spec import parse_spec
from rundata.config.fields import ConfigError, setting
from rundata.ladder import LADDER

MATCH_VISITS = 200                      # a checkpoint's visits per move in the arena and evaluator

# the [cluster] keys that were the evaluator's -> their name in [evaluator]
FROM_CLUSTER = {"evaluate_every": "every", "eval_interval_s": "interval_s",
                "eval_visits": "visits", "eval_move_seconds": "move_seconds",
                "anchors": "anchors", "eval_anchors": "anchors_per_checkpoint",
                "eval_batch_games": "batch_games", "eval_max_games": "max_games",
                "eval_elo_width": "elo_width", "eval_cpu_share": "cpu_share",
                "final_eval_s": "final_rating_s"}


MAX_ANCHORS = 48                        # evaluator.anchors: the ladder's rungs and a few more


def check_anchors(anchors):
    """ConfigError naming `anchors` for more than MAX_ANCHORS specs, one named twice or a
    malformed one.
    Each is read by fastgo.player_spec.parse_spec, the one grammar of player specs, so a spec
    the arena takes is an anchor the config takes, and its error is the arena's."""
    if len(anchors) > MAX_ANCHORS:
        raise ConfigError(f"anchors: at most {MAX_ANCHORS} player specs, got {len(anchors)}")

    names = set()
    for anchor in anchors:
        if len(anchor) > 1000:
            raise ConfigError(f"anchors: {anchor[:40]!r}... is longer than 1000 characters")
        try:
            name = parse_spec(anchor).name
        except ValueError as error:
            raise ConfigError(f"anchors: {error}") from None
        if name.lower() in names:
            raise ConfigError(f"anchors: {name!r} is named twice (each player spec once)")
        names.add(name.lower())


@dataclass(frozen=True)
class EvaluatorConfig:
    """The evaluator (`fastgo evaluate`): ratings of the run's checkpoints and curve.png."""

    every: int = setting(1, min=1, max=1_000_000,
                         doc="evaluate at most every k-th new checkpoint (the newest)")
    interval_s: float = setting(
        300.0, min=0.0, max=86_400.0,
        doc="a new curve point about this often: the newest checkpoint gets a first rating (one "
            "batch against the anchor nearest to even, else the previous rated checkpoint) once "
            "the last point is this old, and between "
            "points the newest rating is refined (anchors, more games, older checkpoints) as far "
            "as the CPU budget leaves room before the next point; 0: each checkpoint is rated in "
            "full before the next one is looked at")
    visits: int = setting(MATCH_VISITS, min=1, max=100_000,
                          doc="the networks' visits per move in evaluation (the arena's "
                              "default: the strength players have)")
    move_seconds: float = setting(
        0.0, min=0.0, max=3600.0,
        doc="evaluate at equal time instead: each side this many seconds a move on one thread "
            "(a network the visits its measured speed fits in them, a GTP anchor the time "
            "control; play.equal_time); 0: off, `visits` a move")
    anchors: tuple[str, ...] = setting(
        LADDER,
        doc="fixed opponents in rising strength, player specs as the arena's (random, mcts:N, "
            "gnugo:LEVEL, gtp:\"COMMAND\", katago:VISITS[,t=T], ref:NAME, a checkpoint path); "
            "each checkpoint plays those whose expected score is informative; gnugo ones are "
            "skipped where GNU Go is not installed (apt-get install gnugo), katago ones where "
            "KataGo or its network is not found (`fastgo katago fetch`); the ref and katago "
            "rungs are calibrated against gnugo:10 (rundata.ladder) "
            "(mcts:10000 is no default: it costs several times what the others do, "
            "docs/guide.md#the-evaluator)")
    anchors_per_checkpoint: int = setting(
        2, min=0, max=64, doc="anchors played within the informative range per checkpoint")
    batch_games: int = setting(8, min=2, max=4096,
                               doc="games of a pairing played at once (one batched search); "
                                   "the stopping rule is checked after each batch")
    max_games: int = setting(32, min=2, max=100_000, doc="games of one pairing at most")
    elo_width: float = setting(300.0, min=1.0, max=10_000.0,
                               doc="a pairing stops once the 95% interval of its Elo "
                                   "difference is at most this wide (or its result is "
                                   "one-sided)")
    cpu_share: float = setting(0.2, min=0.01, max=1024.0,
                               doc="the evaluator's CPU at most, in cores, on average over "
                                   "the run (its own time and its GTP engines'); it waits "
                                   "when over")
    final_rating_s: float = setting(
        600.0, min=0.0, max=86_400.0,
        doc="once a run has reached its --duration, its newest checkpoint not yet rated is "
            "rated with the whole machine (self-play and training have stopped, no CPU budget) "
            "within this many seconds, so that curve.png and the summary end at the run's last "
            "checkpoint; 0: no final rating (local launcher)")

    def check(self):
        check_anchors(self.anchors)
        if self.max_games < self.batch_games:
            raise ConfigError("max_games must be >= batch_games")
