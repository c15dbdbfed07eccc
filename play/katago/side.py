"""KataGo as a match side (`katago:VISITS`): a GtpSide whose engine is KataGo in GTP mode under
the config of play.katago.config, written for the match's board size at each start.

Under `random_share` P (katago:VISITS,r=P) a share P of its moves, drawn by a coin seeded from
the side's seed, is played by play.players.RandomPlayer instead (no engine call: the engine is
told the move with the rest of the game before its next genmove): a rung between GNU Go and
KataGo's raw policy that a temperature alone does not reach.

KataGo's randomness varies its games: its search and network seeds come from the side's seed
(a fresh stream per engine start), and its early moves are sampled by its own temperature
(chosenMoveTemperatureEarly). Its search runs on one thread (numSearchThreads, and pocl's CPU
device held to one thread unless POCL_MAX_PTHREAD_COUNT is set). On the first start for a board
size with no OpenCL tuning in the cache KataGo tunes for this device (minutes on a CPU, once):
the start then waits up to tune_timeout, and a tuner that hangs or crashes is one line, not a
traceback.

Under a time a move (move_seconds), KataGo plays at a measured speed, as a checkpoint side does
(play.equal_time.pace_sides): at its first start its one-thread visits a second are timed
(PACE_ROUNDS searches of PACE_VISITS visits from an empty board, its caches cleared, the fastest
kept) and the visits that fit in move_seconds (at most its VISITS) become its maxVisits, with
maxTime = move_seconds kept as a backstop. KataGo's own clock alone does not hold a move to its
time on a CPU: it checks the time only between playouts, does at least minPlayoutsPerThread of
them, and one evaluation of the b18c384nbt network took 0.7 s of one thread, so at 1 s a move
it took over 2 s in 9 of 16 games and lost them on time.
"""
from __future__ import annotations

import glob
import os
import random
import secrets
import shutil
import sys
import tempfile
import time

from fastgo.files import escaped
from fastgo.gtp import GtpError
from play.equal_time import visits_for
from play.gtp.client import GtpConnectionError
from play.gtp.side import GtpEngineError, GtpSide
from play.katago.config import LOG_FOLDER, gtp_config, write_config
from play.katago.locate import explain, locate
from play.players import RandomPlayer

START_TIMEOUT_S = 120.0     # KataGo's first answers with its tuning cached (loading a network)
TUNE_TIMEOUT_S = 1800.0    # ... while it tunes OpenCL (FASTGO_KATAGO_TUNE_TIMEOUT overrides)
TUNE_TIMEOUT_ENV = "FASTGO_KATAGO_TUNE_TIMEOUT"
ONE_THREAD_ENV = "POCL_MAX_PTHREAD_COUNT"   # pocl's threads for its CPU device
PRESET_TUNING = "opencl_tune.txt"   # in the cache: loaded instead of tuning (fastgo katago fetch)
PACE_VISITS = 4             # under a time a move: the visits of each timed search ...
PACE_ROUNDS = 3             # ... and how many are timed (the fastest is kept)
PACE_TIMEOUT_S = 120.0      # the wait for one timed search


def tuned(cache: str, size: int) -> bool:
    """Whether KataGo has an OpenCL tuning for `size` in the cache (or a preset one)."""
    if os.path.isfile(os.path.join(cache, PRESET_TUNING)):
        return True
    return bool(glob.glob(os.path.join(cache, "home", "opencltuning",
                                       f"tune*_x{int(size)}_y{int(size)}_*.txt")))


def tune_timeout(env) -> float:
    """Seconds a start may take while KataGo tunes: $FASTGO_KATAGO_TUNE_TIMEOUT, else
    TUNE_TIMEOUT_S."""
    text = env.get(TUNE_TIMEOUT_ENV)
    try:
        seconds = float(text) if text else TUNE_TIMEOUT_S
    except ValueError:
        raise ValueError(f"${TUNE_TIMEOUT_ENV}={text[:40]!r}: expected seconds") from None
    if not 0 < seconds <= 86_400:
        raise ValueError(f"${TUNE_TIMEOUT_ENV}={text[:40]!r}: expected seconds in (0, 86400]")
    return seconds


class KataGoSide(GtpSide):
    """KataGoSide(visits, *, model=None, seed=None, move_seconds=None, name=None, temperature=None,
    random_share=None, ...): KataGo with `visits` a move (the most, under move_seconds), its
    network `model` or the one play.katago.locate finds, its moves sampled at `temperature` (None:
    KataGo's own), a share `random_share` of them random (None: none). KataGoMissing (a ValueError
    of one line) when its program or network is not found; GtpEngineError (one line) when it
    cannot start. start_timeout bounds a start with the tuning in the cache (START_TIMEOUT_S); one
    that tunes first may take tune_timeout(env)."""

    def __init__(self, visits, *, model=None, seed=None, move_seconds=None, name=None,
                 temperature=None, random_share=None, start_timeout=None, env=None, out=None,
                 **options):
        env = dict(os.environ if env is None else env)
        share = 0.0 if random_share is None else float(random_share)
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"random_share must be in 0..1, got {random_share!r}")
        self.random_share = share
        base = secrets.randbits(63) if seed is None else int(seed)
        self._coin = random.Random(base ^ 0x5EED)
        self._random = RandomPlayer(seed=base % (1 << 63))
        self.random_moves = 0          # moves played at random so far
        self.located = locate(model, env)
        self.max_visits = int(visits)
        self.paced_visits = None       # under move_seconds: the visits its measured speed fits
        self.pace_rate = None          # ... and that speed, visits a second on one thread
        self._timed = False            # its speed was timed (or tried) at a start
        self.temperature = temperature
        self.seed = seed
        self._folder = tempfile.mkdtemp(prefix="fastgo-katago-")
        self.config_path = os.path.join(self._folder, "gtp.cfg")
        argv = [self.located.program, "gtp", "-config", self.config_path,
                "-model", self.located.model]
        super().__init__(argv, name=name or f"katago:{self.max_visits}",
                         move_seconds=move_seconds,
                         start_timeout=start_timeout or START_TIMEOUT_S, **options)
        self._tuned_timeout = self.start_timeout
        if self.located.appimage:          # runs without FUSE: the runtime extracts it first
            env["APPIMAGE_EXTRACT_AND_RUN"] = "1"
        # one thread, as every side of a match: pocl's CPU device would take every core
        env.setdefault(ONE_THREAD_ENV, "1")
        self.env = env
        self.out = sys.stderr if out is None else out

    @property
    def visits(self):
        """Its visits a move where they are exact (play.players: a side's `visits`); None under
        a time control, where max_visits is only their cap."""
        if self.move_seconds is not None or self.game_clock is not None:
            return None
        return self.max_visits

    def _genmove(self, g, game):
        if self.random_share > 0.0 and self._coin.random() < self.random_share:
            self.random_moves += 1
            return self._random.genmove(game)
        return super()._genmove(g, game)

    def config(self) -> dict:
        """The config the next start writes (play.katago.config.gtp_config)."""
        cache = self.located.cache
        preset = os.path.join(cache, PRESET_TUNING)
        seed = None if self.seed is None else int(self.seed) + self.starts
        return gtp_config(visits=self.paced_visits or self.max_visits, size=self.size or 19,
                          cache=cache,
                          move_seconds=self.move_seconds, seed=seed,
                          tuner_file=preset if os.path.isfile(preset) else None,
                          temperature=self.temperature)

    def _start(self):
        cache = self.located.cache
        try:
            os.makedirs(os.path.join(cache, LOG_FOLDER), exist_ok=True)
            os.makedirs(os.path.join(cache, "home"), exist_ok=True)
            write_config(self.config_path, self.config())
        except OSError as exc:         # a cache or temporary folder this user cannot write
            raise GtpEngineError(f"{self.name}: cannot write KataGo's config, logs and tuning "
                                 f"under {escaped(cache, 160, one_line=True)}: "
                                 f"{exc.strerror or exc} (set FASTGO_KATAGO_HOME to a folder "
                                 f"you can write)") from None
        if tuned(cache, self.size):
            self.start_timeout = self._tuned_timeout
        else:
            self.start_timeout = max(self._tuned_timeout, tune_timeout(self.env))
            print(f"{self.name}: KataGo tunes OpenCL for this device and {self.size}x"
                  f"{self.size} once (minutes on a CPU, at most {self.start_timeout:g} s); "
                  f"kept in {os.path.join(cache, 'home')}", file=self.out, flush=True)
        try:
            super()._start()
        except GtpEngineError as exc:
            raise GtpEngineError(self._failure(str(exc))) from None
        if self.move_seconds is not None and not self._timed:
            self._timed = True
            self._pace()

    def _pace(self):
        """Times KataGo's one-thread speed and sets its visits a move to what fits in
        move_seconds (the module's docstring). An engine that refuses the commands is dropped
        (the next move starts it again, on its own clock) with a line saying so; one that dies
        is GtpEngineError (one line)."""
        client = self._client
        timeout, client.timeout = client.timeout, PACE_TIMEOUT_S
        try:
            client.send_many([f"kata-set-param maxVisits {PACE_VISITS}",
                              "kata-set-param maxTime 86400"])
            fastest = None
            for _ in range(PACE_ROUNDS):
                client.send_many(["clear_cache", "clear_board"])
                began = time.monotonic()
                client.send_many(["genmove b"])
                spent = time.monotonic() - began
                fastest = spent if fastest is None else min(fastest, spent)
            rate = PACE_VISITS / max(fastest, 1e-6)
            visits = min(self.max_visits, visits_for(self.move_seconds, rate))
            client.send_many([f"kata-set-param maxVisits {visits}",
                              f"kata-set-param maxTime {self.move_seconds:g}", "clear_board"])
        except (GtpConnectionError, ValueError) as exc:
            self._drop()
            raise GtpEngineError(f"{self.name}: KataGo failed while its search was timed for "
                                 f"{self.move_seconds:g} s a move: "
                                 f"{escaped(exc, 160, one_line=True)}") from None
        except GtpError as exc:
            self._drop()
            print(f"{self.name}: cannot time KataGo's search ({escaped(exc, 80, one_line=True)}):"
                  f" it plays by its own clock, maxTime = {self.move_seconds:g} s, and may "
                  f"overrun it", file=self.out, flush=True)
            return
        client.timeout = timeout
        self._game, self._played = None, []        # its board is the timing's, not a game's
        self.paced_visits, self.pace_rate = visits, rate
        print(f"{self.name}: searches {rate:.2f} visits/s on one thread: {visits:,} "
              f"visit{'' if visits == 1 else 's'} a move in {self.move_seconds:g} s",
              file=self.out, flush=True)

    def _failure(self, text: str) -> str:
        """One line for a start that failed with GtpEngineError `text`."""
        said = self._stderr_tail()
        meaning = explain(said) or explain(text)
        if "no answer" in text and "within" in text:
            return (f"{self.name}: KataGo did not answer within {self.start_timeout:g} s (its "
                    f"OpenCL tuner hangs, or the machine is too slow; its logs: "
                    f"{os.path.join(self.located.cache, LOG_FOLDER)})")
        if "closed its output" in text or said:
            return (f"{self.name}: KataGo cannot start"
                    + (f": {meaning}" if meaning else "")
                    + (f" ({escaped(said, 160, one_line=True)})" if said else ""))
        return f"{self.name}: {escaped(text, 240, one_line=True)}"

    def close(self):
        super().close()
        shutil.rmtree(self._folder, ignore_errors=True)
