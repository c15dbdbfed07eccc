"""What the dashboard shows of a run directory, read from its files only (never written): the
status figures, the loss curves, the strength curve with the CGOS scale and the GNU Go results,
the checkpoints, the newest self-play games. Every part is a JSON-able dict, recomputed only when
one of the files it comes from changed (mtime and size), so a page served every second from a
run of 500 checkpoints and 100,000 games costs a few stat calls.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time

from evaluation.evaluations import read_evaluations
from evaluation.opponents import skipped_anchors
from fastgo import bounded_json
from fastgo.coords import json_number
from fastgo.game import Game
from fastgo.reference_players import read_index
from roles.registry import SUPERVISOR, Role, is_worker_file
from rundata.elo_fit import CGOS_STAND_IN
from rundata.ratings_table import read_table
from rundata.rundir import CHECKPOINT_NAME, RunDir, checkpoint_player, player_step
from rundata.shards import ShardError, list_shards, read_shard
from rundata.statefiles import MAX_COUNT, read_json
from rundata.strength import strength_of
from trainer.metrics import read_metrics

CHECKPOINT_FILE = re.compile(r"[A-Za-z0-9_.-]{1,200}\.ckpt")
MAX_RATED_STEP = 999_999_999  # the largest step of a checkpoint's file name (9 digits)
SHARD_NAME = re.compile(r"[A-Za-z0-9_.-]{1,200}\.shard")
MAX_LOSS_ROWS = 2000          # rows of metrics.csv sent (evenly thinned, the last kept)
NEWEST_GAMES = 20             # self-play games listed
NEWEST_SHARDS = 8             # shards read for them, newest first
MAX_STATUS_FILES = 64         # role status files read
RUNNING_S = 120.0             # a run whose newest status file is older than this has ended
                              # (cluster.stuck_seconds' default: a role silent longer is stuck)


class NotFound(LookupError):
    """A name the run directory does not hold (or that tries to leave it)."""


def _endings(data):
    """The trainer's recent self-play endings (rundata.ending_stats) with every field checked:
    {games, passes, move_cap, resign, median_margin}, or None where absent or malformed."""
    if not isinstance(data, dict):
        return None
    games = _finite(data.get("games"))
    shares = {k: _finite(data.get(k)) for k in ("passes", "move_cap", "resign")}
    if games is None or games < 0 or any(v is None or not 0.0 <= v <= 1.0 for v in shares.values()):
        return None
    margin = _finite(data.get("median_margin"))
    return {"games": int(games), **shares,
            "median_margin": margin if margin is not None and 0.0 <= margin <= 1e4 else None}


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _finite(value):
    """A finite float of a number or a number's text (a CSV cell), else None: NaN, infinities,
    an integer beyond a float's range, anything not a number."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    try:
        return json_number(value)
    except ValueError:
        return None


def _loss(value):
    """The trainer's loss as the page shows it: a finite number, a short text, or None."""
    if isinstance(value, str):
        return value[:40]
    return _finite(value)


def _rounded(triple):
    return [None if not math.isfinite(v) else round(v, 1) for v in triple]


class RunView:
    """The dashboard's read-only view of one run directory (which need not exist yet)."""

    def __init__(self, root):
        self.run = RunDir(os.path.abspath(os.fspath(root)))
        self.root = self.run.root
        self._cache = {}

    # -- caching -------------------------------------------------------------------------------

    def _key(self, *paths):
        key = []
        for path in paths:
            try:
                st = os.stat(path)
                key.append((st.st_mtime_ns, st.st_size))
            except OSError:
                key.append(None)
        return tuple(key)

    def _cached(self, name, key, compute):
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = compute()
        self._cache[name] = (key, value)
        return value

    def path(self, name):
        return os.path.join(self.root, name)

    # -- status --------------------------------------------------------------------------------

    def status(self) -> dict:
        """The figures of the status line: the trainer's heartbeat (games, step, loss, the
        newest checkpoint), the workers' moves/s, the supervisor's evals/s, batch fill and
        restarts (logs/cluster.status.json), the evaluator's CPU share and the anchors it
        skips on its machine with the command that adds each, every disk warning; and whether
        the run is running: "updated" (unix time of the newest status file, None without
        one) and "running" (that file is at most RUNNING_S old)."""
        names = []
        try:
            names = sorted(n for n in os.listdir(self.run.logs) if n.endswith(".status.json"))
        except OSError:
            pass
        paths = [os.path.join(self.run.logs, n) for n in names[:MAX_STATUS_FILES]]
        key = self._key(*paths)
        updated = max((t for t in map(_mtime, paths) if t is not None), default=None)

        def compute():
            roles = {}
            for name in names[:MAX_STATUS_FILES]:
                data = read_json(os.path.join(self.run.logs, name))
                if isinstance(data, dict):
                    roles[name[:-len(".status.json")]] = data
            train = roles.get(Role.TRAIN.file_name(), {})
            cluster = roles.get(SUPERVISOR, {})
            evaluator = roles.get(Role.EVALUATE.file_name(), {})
            moves = sum(_finite(d.get("moves_per_s")) or 0.0 for r, d in roles.items()
                        if is_worker_file(r))
            restarts = cluster.get("restarts") if isinstance(cluster.get("restarts"), dict) else {}
            disk = sorted(f"{role}: {str(d['disk_full'])[:300]}" for role, d in roles.items()
                          if d.get("disk_full"))
            return {"games": _finite(train.get("games")) or 0, "step": _finite(train.get("step")) or 0,
                    "loss": _loss(train.get("loss")),
                    "checkpoint": (train.get("latest") if isinstance(train.get("latest"), (int, str))
                                   else None),
                    "moves_per_s": round(_finite(cluster.get("moves_per_s")) or moves, 1),
                    "evals_per_s": _finite(cluster.get("evals_per_s")),
                    "fill": _finite(cluster.get("fill")),
                    "restarts": {str(k)[:100]: v for k, v in list(restarts.items())[:64]
                                 if isinstance(v, int) and not isinstance(v, bool)
                                 and 0 <= v <= MAX_COUNT},
                    "eval_cpu": _finite(evaluator.get("cpu_share")),
                    "eval_budget": _finite(evaluator.get("cpu_budget")),
                    "disk_warnings": disk[:16],
                    "endings": _endings(train.get("endings")),
                    "skipped_anchors": skipped_anchors(evaluator),
                    "line": str(cluster.get("line", ""))[:1000]}
        figures = self._cached("status", key, compute)
        running = updated is not None and time.time() - updated <= RUNNING_S
        return dict(figures, updated=updated, running=running)

    # -- losses --------------------------------------------------------------------------------

    def losses(self) -> dict:
        """{'step': [...], 'columns': {name: [...]}} of metrics.csv: every numeric column but the
        step, at most MAX_LOSS_ROWS rows (evenly thinned, the last kept)."""
        def compute():
            header, rows = read_metrics(self.run.metrics, max_rows=MAX_LOSS_ROWS)
            if "step" not in header:
                return {"step": [], "columns": {}}
            wanted = [c for c in header if c != "step" and ("loss" in c or c in ("accuracy",))]
            steps, columns = [], {c: [] for c in wanted}
            for row in rows:
                step = _finite(row.get("step"))
                if step is None:
                    continue
                steps.append(step)
                for c in wanted:
                    columns[c].append(_finite(row.get(c)))
            return {"step": steps, "columns": columns}
        return self._cached("losses", self._key(self.run.metrics), compute)

    # -- strength ------------------------------------------------------------------------------

    def strength(self) -> dict:
        """The evaluated checkpoints in order, each with its Elo over random and on CGOS's scale
        with 95% intervals, its gain interval over the point before, wall time, games and its
        results against GNU Go levels; the anchors' ratings. All from the table's
        rundata.strength.Strength, as the status line and curve.png have them."""
        table = self.run.ratings_table
        evaluations = self.run.evaluations

        def compute():
            view = strength_of(read_table(table))
            if view.error:
                return {"points": [], "anchors": {}, "error": view.error, "scale": "elo",
                        "scale_note": scale_note([], "elo")}
            rows, elo, cgos = view.rows, view.elo, view.cgos
            points = [e for e in read_evaluations(evaluations) if e["player"] in elo]
            gains = {}
            for before, e in zip(points, points[1:]):
                if (gain := view.gain(e["player"], before["player"])) is not None:
                    gains[e["player"]] = gain
            gnugo = {}
            for row in rows:
                for me, other, won, lost in (("a", "b", "wins_a", "wins_b"),
                                             ("b", "a", "wins_b", "wins_a")):
                    if row[other].startswith("gnugo:") and not row[me].startswith("gnugo:"):
                        w = gnugo.setdefault(row[me], {}).setdefault(row[other], [0, 0, 0])
                        w[0] += row[won]
                        w[1] += row[lost]
                        w[2] += row["draws"]
            out = []
            for e in points:
                name = e["player"]
                out.append({"player": name, "step": e["step"], "wall_s": e["wall_s"],
                            "games": e["games"], "elo": _rounded(elo[name]),
                            "cgos": _rounded(cgos[name]) if name in cgos else None,
                            "gain": _rounded(gains[name]) if name in gains else None,
                            "gnugo": gnugo.get(name, {})})
            anchors = {n: {"elo": _rounded(v), "cgos": _rounded(cgos[n]) if n in cgos else None}
                       for n, v in elo.items() if player_step(n) is None}
            scale = "cgos" if any(p["cgos"] for p in out) else "elo"
            return {"points": out, "anchors": anchors, "stand_in": CGOS_STAND_IN,
                    "scale": scale, "scale_note": scale_note(rows, scale),
                    "skipped_lines": rows.skipped}
        return self._cached("strength", self._key(table, evaluations), compute)

    # -- checkpoints ---------------------------------------------------------------------------

    def _checkpoint_dirs(self):
        return (self.run.checkpoints, self.run.evaluated)

    def checkpoint_files(self) -> dict:
        """{name: path} of the checkpoints in checkpoints/ and evaluated/ (the evaluator's
        kept copies), names as CHECKPOINT_FILE takes them, regular files only."""
        out: dict[str, str] = {}
        for folder in self._checkpoint_dirs():
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if CHECKPOINT_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    out.setdefault(entry.name, entry.path)
        return out

    def checkpoint_path(self, name) -> str:
        """The path of checkpoint `name`: a file name of the listing (ckpt-000000300.ckpt,
        latest.ckpt) or the name the ratings give it (ckpt-300); NotFound for any other."""
        step = player_step(name)
        if step is not None and step <= MAX_RATED_STEP and name == checkpoint_player(step):
            name = os.path.basename(self.run.checkpoint(step))
        if not isinstance(name, str) or not CHECKPOINT_FILE.fullmatch(name):
            raise NotFound(f"no checkpoint named {name!r:.80}")
        path = self.checkpoint_files().get(name)
        if path is None:
            raise NotFound(f"no checkpoint named {name!r:.80}")
        return path

    def checkpoints(self) -> list:
        """[{name, file, step, player, elo, cgos, games}] newest first: every checkpoint file,
        named as the ratings name it (ckpt-300; any other file by its file name), with the
        evaluator's rating, the player it was rated as and the self-play games at its time
        where it was rated."""
        files = self.checkpoint_files()
        rated = {p["step"]: p for p in self.strength()["points"]}
        out = []
        for name in files:
            numbered = CHECKPOINT_NAME.fullmatch(name)
            digits = [numbered.group(1)] if numbered else re.findall(r"\d+", name)
            step = int(digits[-1]) if digits else -1
            point = rated.get(step)
            out.append({"name": checkpoint_player(step) if numbered else name, "file": name,
                        "step": step,
                        "player": point["player"] if point else None,
                        "elo": point["elo"] if point else None,
                        "cgos": point["cgos"] if point else None,
                        "games": point["games"] if point else None})
        out.sort(key=lambda c: (-c["step"], c["name"]))
        return out

    # -- self-play games -----------------------------------------------------------------------

    def _newest_shards(self):
        names = list_shards(self.run.shards)
        stamped = []
        for name in names:
            try:
                stamped.append((os.stat(os.path.join(self.run.shards, name)).st_mtime_ns, name))
            except OSError:
                continue
        stamped.sort(reverse=True)
        return [name for _, name in stamped[:NEWEST_SHARDS]]

    def _shard(self, name):
        path = os.path.join(self.run.shards, name)
        key = self._key(path)

        def compute():
            try:
                return read_shard(path).games
            except (ShardError, OSError):
                return []
        return self._cached("shard:" + name, key, compute)

    def games(self) -> list:
        """The NEWEST_GAMES newest self-play games of the newest shards: [{id, shard, index,
        moves, winner, score, end, version, time}], newest first."""
        out = []
        newest = self._newest_shards()
        for key in [k for k in self._cache if k.startswith("shard:") and k[6:] not in newest]:
            del self._cache[key]            # only the newest shards stay held
        for name in newest:
            games = self._shard(name)
            for index in range(len(games) - 1, -1, -1):
                g = games[index]
                out.append({"id": f"{name}:{index}", "size": g.size, "moves": len(g.moves),
                            "winner": "B" if g.winner > 0 else "W" if g.winner < 0 else "draw",
                            "score": _finite(g.score), "end": g.end,
                            "version": int(g.versions[-1]) if len(g.versions) else None,
                            "time": _finite(g.t_end)})
            if len(out) >= NEWEST_GAMES:
                break
        out.sort(key=lambda g: -(g["time"] or 0))
        return out[:NEWEST_GAMES]

    def game(self, game_id) -> dict:
        """One self-play game to replay: size, komi, the board after every move (strings of
        '.', 'B', 'W'), each move's point (pass: -1), root value (for the side to move), the
        played move's visits and the search's total; NotFound for an id the newest shards
        do not hold."""
        if not isinstance(game_id, str) or game_id.count(":") != 1:
            raise NotFound("a game id is SHARD:INDEX")
        name, index = game_id.split(":")
        if not SHARD_NAME.fullmatch(name) or not index.isdigit() or len(index) > 6 \
                or name not in self._newest_shards():
            raise NotFound(f"no recent game {game_id!r:.120}")
        games = self._shard(name)
        if int(index) >= len(games):
            raise NotFound(f"no recent game {game_id!r:.120}")
        g = games[int(index)]
        size = g.size
        game = Game(size, g.komi)
        boards, points, values, played, totals = [_board_text(game)], [], [], [], []
        starts = [0]
        for count in g.policy_count:
            starts.append(starts[-1] + int(count))
        for k, move in enumerate(g.moves):
            move = int(move)
            game.play(move)
            boards.append(_board_text(game))
            points.append(-1 if move == size * size else move)
            values.append(round(float(g.root_value[k]), 3))
            target = g.policy_visits[starts[k]:starts[k + 1]]
            hit = target[g.policy_moves[starts[k]:starts[k + 1]] == move]
            played.append(round(float(hit.sum()), 2) if len(target) else None)
            totals.append(round(float(target.sum()), 2) if len(target) else None)
        return {"id": game_id, "size": size, "komi": float(g.komi), "boards": boards,
                "moves": points, "values": values, "visits": played, "total_visits": totals,
                "winner": "B" if g.winner > 0 else "W" if g.winner < 0 else "draw",
                "score": _finite(g.score), "end": g.end}

    # -- everything ----------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Every part the page draws at once, and a digest of it ('version') that changes when
        any part does; finite by contract (bounded_json.finite: a NaN or an infinity any file
        holds is null, which a browser's JSON.parse takes)."""
        data = {"run": os.path.basename(self.root) or self.root, "status": self.status(),
                "losses": self.losses(), "strength": self.strength(),
                "checkpoints": self.checkpoints(), "games": self.games(),
                "references": references()}
        data = bounded_json.finite(data)
        text = json.dumps(data, sort_keys=True, default=str)
        data["version"] = hashlib.sha1(text.encode()).hexdigest()[:16]
        return data


def scale_note(rows, scale) -> str:
    """The strength chart's caption, true to the scale its points are on: CGOS's (`scale`
    "cgos") from the run's own games against the stand-in, through the ladder's calibration
    games (rows marked "calibration", rundata.ladder) or both; else Elo over random."""
    bars = "; thick bars: the 95% interval of its gain over the point before."
    if scale != "cgos":
        return ("Points: each checkpoint's Elo over random (random = 0) with its 95% interval, "
                f"not on CGOS's scale: no games join the run's checkpoints to {CGOS_STAND_IN}"
                + bars)
    direct = any(CGOS_STAND_IN in (row["a"], row["b"]) for row in rows
                 if not row.get("calibration"))
    calibrated = any(row.get("calibration") for row in rows)
    if direct:
        how = "from the run's games against it" + (
            " and the ladder's calibration games" if calibrated else "")
    else:
        how = ("through the ladder's calibration games: the rungs the run played were measured "
               "once against it")
    return (f"Points: each checkpoint on CGOS's 9x9 scale ({CGOS_STAND_IN} = 1800, {how}) "
            "with its 95% interval" + bars)


def references() -> list:
    """[{"name": "ref:NAME", "visits", "board_size"}] of the reference players this install
    ships (fastgo.reference_players), to play on the page; [] where its index is unreadable."""
    try:
        index = read_index()
    except ValueError:
        return []
    return [{"name": ref.spec, "visits": ref.visits, "board_size": ref.board_size}
            for ref in index.values()]


def _board_text(game) -> str:
    """The board as one string of size * size characters, row 0 first: '.', 'B' or 'W'."""
    return "".join(".BW"[int(v)] for v in game.board.stones().ravel())
