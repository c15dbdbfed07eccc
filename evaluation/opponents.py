"""Who the evaluator's checkpoints play (evaluation.evaluator): the anchors of evaluator.anchors that
this machine can run, the run's earlier checkpoints as networks at evaluator.visits (or the
visits evaluator.move_seconds buys at this network's own speed), and which of them comes next
(evaluation.pairings). Each side is made when reached, so that a checkpoint pruned or an engine
missing meanwhile costs that one pairing only; a gnugo or katago anchor whose program is not found
here (or a reference player of another board size) is skipped from the start, logged with the
command that adds it, and listed in the role's status file (skipped_figures). Beating wraps a side
so that the role's heartbeat beats at each of its turns."""
import os

from evaluation.pairings import checkpoint_opponents, next_anchor, one_sided, retired_anchors
from fastgo.files import escaped
from fastgo.player_spec import parse_spec
from fastgo.reference_players import reference
from fastgo.variants import Use
from network.loading import match_threads, set_torch_threads
from play.equal_time import pace_sides
from play.network_player import load_player_network, make_search_side
from play.player_settings import PlayerSettings
from play.players import MatchSide
from play.specs import Missing, make_spec_side, missing
from rundata.config import ConfigError
from rundata.ratings_table import table_name

OPENING_MOVES = 2             # a network's first moves sampled by visits, as in the arena


MAX_SKIPPED_GROUPS = 8        # groups of skipped anchors read back from a status file


def skipped_anchors(status) -> list:
    """[{"what", "anchors", "command", "why"}] of an evaluator's status file's
    "skipped_anchors" (Opponents.skipped_figures), for the status line and the dashboard: every
    field checked (strings, a non-empty list of names) and escaped to one bounded line; a
    malformed group is left out, a malformed value is []."""
    groups = status.get("skipped_anchors") if isinstance(status, dict) else None
    out = []
    for group in groups[:MAX_SKIPPED_GROUPS] if isinstance(groups, list) else ():
        if not isinstance(group, dict) or not isinstance(group.get("anchors"), list):
            continue
        what, command, why = group.get("what"), group.get("command", ""), group.get("why", "")
        names = [escaped(n, 60, one_line=True) for n in group["anchors"][:64] if isinstance(n, str)]
        if isinstance(what, str) and isinstance(command, str) and isinstance(why, str) and names:
            out.append({"what": escaped(what, 40, one_line=True), "anchors": names,
                        "command": escaped(command, 80, one_line=True),
                        "why": escaped(why, 300, one_line=True)})
    return out


class Beating(MatchSide):
    """A match side that beats the role's heartbeat at each of its turns: a long pairing (GNU
    Go at level 10) is progress, not a stall for the supervisor."""

    def __init__(self, side, beat):
        self.side, self.beat, self.name = side, beat, side.name
        self.board_size, self.visits = side.board_size, side.visits

    def prepare(self, games, size, komi):
        self.side.prepare(games, size, komi)

    def moves(self, indices, games):
        self.beat()
        return self.side.moves(indices, games)


class Opponents:
    """The sides a rated checkpoint meets. `anchors`: {table name: Spec} of evaluator.anchors that
    can run here, in rising strength; `unusable`: {anchor: why} for those that failed in this
    process (not offered again); `rates`: {speed_key: visits/s on one thread}."""

    def __init__(self, config, log):
        self.config, self.ec, self.log = config, config.evaluator, log
        self.unusable = {}
        self.rates = {}
        self.skipped = {}             # {anchor: play.specs.Missing} not playable on this machine
        self.anchors = self._usable_anchors()

    def _usable_anchors(self):
        out = {}
        for text in self.ec.anchors:
            try:
                spec = parse_spec(text)
            except ValueError as err:
                raise ConfigError(f"evaluator.anchors: {err}") from None
            gone, size = missing(spec), self.config.model.board_size
            plays = reference(spec.name[4:]).board_size if spec.kind == "ref" else size
            if gone is None and plays != size:
                gone = Missing("reference player", f"it plays {plays}x{plays}, this run "
                                                   f"{size}x{size}")
            if gone is not None:
                log = self.log.warning if spec.kind in ("checkpoint", "ref") else self.log.info
                log("anchor %s skipped: %s%s", spec.name, gone.why,
                    f" (add it: {gone.command})" if gone.command else "")
                self.skipped[table_name(spec.name)] = gone
                continue
            out[table_name(spec.name)] = spec
        return out

    def skipped_figures(self):
        """The anchors skipped here, for the role's status file (the status line and the
        dashboard show them): [{"what", "anchors": [names], "command", "why"}], one entry per
        thing missing and command, in the order of evaluator.anchors."""
        groups = {}
        for name, gone in self.skipped.items():
            group = groups.setdefault((gone.what, gone.command), {
                "what": gone.what, "anchors": [], "command": gone.command, "why": gone.why})
            group["anchors"].append(name)
        return list(groups.values())

    def failed(self, anchor, err, what="cannot start"):
        """`anchor` failed (`err`): logged, and not offered again in this process."""
        self.unusable[anchor] = f"{what}: {escaped(err, 200, one_line=True)}"
        self.log.warning("anchor %s: %s", anchor, self.unusable[anchor])

    def network_settings(self) -> PlayerSettings:
        """How the evaluator's networks play: evaluator.visits, OPENING_MOVES, on
        server.backend, sized for evaluator.batch_games (at least 64 positions); a reference
        player takes the backend and size only."""
        return PlayerSettings(visits=self.ec.visits, backend=self.config.server.backend,
                              capacity=max(64, self.ec.batch_games),
                              opening_moves=OPENING_MOVES)

    def checkpoint_side(self, path, name, seed, data=None):
        """(network, SearchSide) of the checkpoint at `path` (its bytes `data` when already
        read) at evaluator.visits, of the run's model: its network loaded and played by
        play.network_player from its PlayerSettings, as every command plays a checkpoint
        (canaries checked). NetworkError when unusable."""
        settings = self.network_settings()
        network = load_player_network(path, Use.MATCH, settings, data=data,
                                      expect=self.config.model)
        set_torch_threads(match_threads(settings.threads))  # the evaluator's process
        side = make_search_side(network, settings, seed=seed, name=name)
        if self.ec.move_seconds > 0:    # equal time: the visits its own speed fits
            self._pace(network, side)
        return network, side

    def _pace(self, network, side):
        """evaluator.move_seconds in visits for this network: its one-game, one-thread
        speed, measured once per speed_key (network shape, backend, search) in this process
        (play.equal_time.pace_sides, the arena's pacing, one round)."""
        seconds = self.ec.move_seconds
        pace_sides([(network.config.name, side)], seconds, network.config.board_size,
                   self.config.selfplay.komi, rates=self.rates, rounds=1,
                   report=lambda which, rate, visits: self.log.info(
                       "%s searches %.0f visits/s on one thread: %d visits a move in %g s",
                       which, rate, visits, seconds))

    def earlier(self, job, evaluation, offset):
        """The SearchSide of the earlier rated checkpoint `evaluation` (a row of
        evaluations.jsonl) for `job`; None, logged, where it cannot be loaded (pruned,
        replaced, unreadable)."""
        try:
            return self.checkpoint_side(evaluation.get("path"), evaluation["player"],
                                        job.seed + offset)[1]
        except Exception as err:
            self.log.warning("%s: earlier checkpoint %s unusable (%s): %s", job.name,
                             evaluation["player"], evaluation.get("path"),
                             escaped(err, 200, one_line=True))
            return None

    def checkpoint_sides(self, job, evaluations, predict, far_first=False):
        """(label, side) of the earlier checkpoints `job` plays (evaluation.pairings: the previous
        one, then those at fractions of its step; `far_first`: those first, the previous one
        last), loaded one at a time as they are reached; an unusable one is logged and
        skipped. `evaluations`: the rows of evaluations.jsonl; `predict(a, b)`: as
        Evaluator._fit gives it."""
        # the previous one always; the others among those whose copy is still there
        earlier = [e for e in evaluations if e["step"] < job.step]
        there = [e for e in earlier if e is earlier[-1] or os.path.isfile(e.get("path", ""))]
        names, skipped = checkpoint_opponents(job.step, there, predict)
        if far_first:
            names = names[1:] + names[:1]
        for other, why in skipped.items():
            self.log.info("%s: skips %s: %s", job.name, other, why)
        rows = {e["player"]: e for e in evaluations}
        for k, other in enumerate(names):
            side = self.earlier(job, rows.get(other, {"player": other}), 100 + k)
            if side is not None:
                yield other, side

    def anchor_sides(self, job, fit, limit=None, proxy=None, rated_only=False):
        """(label, side) of the anchors `job` plays next (evaluation.pairings.next_anchor), each
        made when reached (the caller closes it); at most `limit` of them. `fit()`: the
        ratings as Evaluator._fit gives them, taken again before each anchor. `proxy`: a
        player whose rating stands in for the checkpoint's while it has none (the previous
        checkpoint); `rated_only`: only an anchor whose expected score is known (none
        otherwise), never the weakest unrated one."""
        count = 0
        while limit is None or count < limit:
            _, rows, predict = fit()
            retired = {**retired_anchors(rows, list(self.anchors)), **self.unusable}
            predicted = {a: p for a in self.anchors if (p := predict(job.name, a)) is not None}
            if not predicted and proxy is not None:
                predicted = {a: p for a in self.anchors if (p := predict(proxy, a)) is not None}
            offered = [a for a in self.anchors if a in predicted or not rated_only]
            anchor, skipped = next_anchor(offered, retired=retired,
                                          played=job.anchors, predicted=predicted,
                                          max_informative=self.ec.anchors_per_checkpoint)
            if anchor is None:
                if skipped:
                    self.log.info("%s: anchors not played: %s", job.name,
                                  "; ".join(f"{a} ({why})" for a, why in skipped.items()))
                return
            side = self.anchor_side(job, anchor)
            if side is None:
                continue
            count += 1
            yield anchor, side

    def anchor_side(self, job, anchor):
        """The side of `anchor` for `job` (noted in job.anchors as played, verdict 0 so far);
        None, the anchor marked unusable here, when it cannot be made."""
        seed = job.seed + 500 + len(job.anchors)
        job.anchors.setdefault(anchor, 0)
        try:
            settings = self.network_settings()
            side = make_spec_side(self.anchors[anchor], seed=seed,
                                  move_seconds=self.ec.move_seconds or None,
                                  backend=settings.backend, capacity=settings.capacity,
                                  checkpoint_side=lambda path, seed, anchor=anchor:
                                  self.checkpoint_side(path, anchor, seed)[1])
            side.name = anchor
        except Exception as err:
            self.failed(anchor, err, "unusable")
            del job.anchors[anchor]
            return None
        return side

    def verdict(self, job, anchor, result):
        """Notes in `job` whether `result` against `anchor` was one-sided (evaluation.pairings):
        a win retires the anchor for later checkpoints, a loss stops the climb this time."""
        verdict = job.anchors[anchor] = one_sided(result.wins_a, result.wins_b, result.draws)
        if verdict > 0:
            self.log.info("%s: won %s %d-%d, beyond the informative range: %s is retired "
                          "for later checkpoints", job.name, anchor, result.wins_a,
                          result.wins_b, anchor)
        elif verdict < 0:
            self.log.info("%s: lost to %s %d-%d, beyond the informative range: no "
                          "stronger anchor this time", job.name, anchor, result.wins_a,
                          result.wins_b)
