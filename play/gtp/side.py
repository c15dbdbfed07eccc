"""A match side played by an external GTP engine (GNU Go, KataGo, another fastgo): the arena's
`gtp:"COMMAND"` players, through play.match.play_match.

Games are scored by area with every stone on the board counting (Tromp-Taylor), so an engine
that offers `kgs-genmove_cleanup` (GNU Go, KataGo) is asked for its moves with it: it plays as
with genmove but does not pass while dead stones of its opponent remain. One engine process
serves all of the side's games: before each genmove the engine is brought to that game's
position (the moves since its last genmove in the same game, else clear_board and the whole
game, pipelined). An engine that crashes, times out, answers out of protocol or with
something that is not a move, refuses a legal move of its opponent, or plays a move our rules
refuse loses that game: the side answers match.Forfeit(reason); a dead or out-of-step engine is
killed and started again for its next move. Only the first start failing is an error
(GtpEngineError): the command cannot run as an engine at all.
"""
from __future__ import annotations

import math
import os
import shlex
import shutil
import subprocess
import tempfile
import time

from fastgo import coords
from fastgo.board import BLACK
from fastgo.files import escaped
from fastgo.game import RESIGN, IllegalMoveError
from fastgo.gtp import GtpError
from fastgo.player_spec import parse_gtp_spec
from play.equal_time import overrun_margin
from play.gtp.client import GtpClient, GtpConnectionError
from play.match import Forfeit
from play.players import MatchSide

DEFAULT_MOVE_TIMEOUT = 60.0     # seconds for one genmove (and for one batch of set-up commands)
START_TIMEOUT = 30.0            # seconds for the engine's first answers after a start

__all__ = ["GtpSide", "GtpEngineError", "DEFAULT_MOVE_TIMEOUT"]


class GtpEngineError(ValueError):
    """The engine command cannot be started or refuses the match's board size or komi."""


def _resolve(program):
    """The program as given, or Debian's /usr/games/PROGRAM (GNU Go lives there) when a bare
    name is not on PATH."""
    if os.sep in program or shutil.which(program):
        return program
    games = os.path.join("/usr/games", program)
    return games if os.access(games, os.X_OK) else program


class GtpSide(MatchSide):
    """GtpSide(argv or 'gtp:COMMAND', *, name=None, move_timeout=60, stderr=None).

    stderr=None keeps the engine's error output in a temporary file, and the last line of it
    goes into the reason of a crash; any other value is passed to the process as is.

    `name` defaults to 'gtp:' + the command. `restarts` counts engine starts after the first;
    `failures` lists the reasons of every forfeit, in order. Call close() when done (or use as
    a context manager).

    move_seconds: a time per move (play.equal_time): the engine is told it (`time_settings 0
    S 1`, whole seconds rounded up, and `time_left` before each genmove) and loses a game when
    a move takes more than move_seconds + play.equal_time.overrun_margin; then move_timeout is
    that bound too. None: no time control, a move may take move_timeout.

    A match's game clock (MatchSide.game_clock, play.equal_time.GameClock) takes the place of both:
    the engine is told `time_settings T 0 0` and `time_left COLOR SECONDS 0` before each genmove,
    each genmove's wall time is charged to the game's clock, and the wait for an answer ends
    where the game would be lost on time."""

    def __init__(self, command, *, name=None, move_timeout=DEFAULT_MOVE_TIMEOUT,
                 start_timeout=START_TIMEOUT, stderr=None, cleanup=True, move_seconds=None):
        if isinstance(command, str):
            self.argv = parse_gtp_spec(command) if command.lower().startswith("gtp:") \
                else shlex.split(command)
        else:
            self.argv = [str(word) for word in command]
        if not self.argv or not self.argv[0].strip():
            raise ValueError("empty GTP engine command")
        if not move_timeout > 0 or not start_timeout > 0:
            raise ValueError("timeouts must be > 0 seconds")
        self.name = name or "gtp:" + shlex.join(self.argv)
        self.argv[0] = _resolve(self.argv[0])
        self.move_seconds = None if move_seconds is None else float(move_seconds)
        if self.move_seconds is not None:
            if not 0 < self.move_seconds <= 86_400:
                raise ValueError(f"move_seconds must be in (0, 86400], got {move_seconds!r}")
            move_timeout = self.move_seconds + overrun_margin(self.move_seconds)
        self.move_timeout = float(move_timeout)
        self.start_timeout = float(start_timeout)
        self.stderr = stderr
        self.cleanup = bool(cleanup)
        self.genmove_command = "genmove"     # or kgs-genmove_cleanup, chosen at each start
        self._stderr_file = None    # the current engine's captured stderr (stderr=None)
        self.env = None             # the engine's environment (None: this process's)
        self.size = None
        self.komi = None
        self.starts = 0
        self.failures = []
        self._client = None
        self._game = None       # index of the game the engine's board holds, or None
        self._played = []       # [(color, move)] the engine has on its board for that game
        self._spent = None      # seconds the last genmove's exchange took (None: not timed)

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    # --- engine process --------------------------------------------------------------------

    def _start(self):
        """Starts the engine and sets board size and komi; GtpEngineError when it cannot."""
        self._game, self._played = None, []
        what = shlex.join(self.argv)
        self._close_stderr()
        stderr = self.stderr
        if stderr is None:
            self._stderr_file = stderr = tempfile.TemporaryFile()
        try:
            client = GtpClient(self.argv, timeout=self.start_timeout, stderr=stderr,
                               env=self.env)
        except OSError as exc:
            raise GtpEngineError(f"cannot start GTP engine "
                                 f"{escaped(what, 60, one_line=True, quoted=True)}: "
                                 f"{exc.strerror or exc}") from None
        self.starts += 1
        try:
            answers = client.send_many(["protocol_version", "list_commands",
                                        f"boardsize {self.size}", "clear_board",
                                        f"komi {self.komi:g}"], check=False)
            for command, (ok, text) in zip(("boardsize", "clear_board", "komi"), answers[2:]):
                if not ok:
                    raise GtpError(f"{command!r}: {text}")
            known = answers[1][1].split() if answers[1][0] else []
            self.genmove_command = ("kgs-genmove_cleanup"
                                    if self.cleanup and "kgs-genmove_cleanup" in known
                                    else "genmove")
        except BaseException as exc:
            self._kill(client)           # never left running, whatever ended the start
            if not isinstance(exc, (GtpError, ValueError)):
                raise
            said = self._stderr_tail()
            raise GtpEngineError(f"GTP engine {escaped(what, 60, one_line=True, quoted=True)} "
                                 f"does not start a {self.size}x{self.size} game with komi "
                                 f"{self.komi:g}: {escaped(exc, 120, one_line=True)}"
                                 + (f" (stderr: {said})" if said else "")) from None
        client.timeout = self.move_timeout
        self._client = client

    @staticmethod
    def _kill(client):
        try:
            if client.process.poll() is None:
                client.process.kill()
        except OSError:
            pass
        client.close()

    def _drop(self):
        """Kills the engine (dead, hung or out of step); the next move starts a fresh one."""
        if self._client is not None:
            client, self._client = self._client, None
            self._kill(client)
        self._game, self._played = None, []

    def close(self):
        """quit, then terminate / kill: the engine process is gone on return."""
        if self._client is not None:
            client, self._client = self._client, None
            client.close()
        self._game, self._played = None, []
        self._close_stderr()

    def _close_stderr(self):
        if self._stderr_file is not None:
            self._stderr_file.close()
            self._stderr_file = None

    def _stderr_tail(self, limit=4096):
        """The last non-empty line the current engine wrote to stderr (captured only), or ''."""
        handle = self._stderr_file
        if handle is None:
            return ""
        try:
            end = handle.seek(0, 2)
            handle.seek(max(0, end - limit))
            lines = handle.read().decode("utf-8", "replace").splitlines()
        except (OSError, ValueError):
            return ""
        lines = [line for line in lines if line.strip()]
        return escaped(lines[-1], 120, one_line=True) if lines else ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if self._client is not None:
                self._kill(self._client)
        except Exception:
            pass

    # --- match side ------------------------------------------------------------------------

    def prepare(self, games, size, komi):
        """Called by play_match before its games: the first call starts the engine (raising
        GtpEngineError when it cannot); a new size or komi is sent to a running engine."""
        changed = (size, komi) != (self.size, self.komi)
        self.size, self.komi = int(size), float(komi)
        if self._client is None:
            if self.starts == 0:
                self._start()
            return
        if changed:
            try:
                self._client.send_many([f"boardsize {self.size}", "clear_board",
                                        f"komi {self.komi:g}"])
                self._game, self._played = None, []
            except (GtpError, ValueError):
                self._drop()

    def moves(self, indices, games):
        """A move (or RESIGN, or Forfeit) for each game index in `indices`. Under a game clock
        each genmove's wall time goes to last_seconds."""
        out, spent = [], []
        for g in indices:
            self._spent = None
            began = time.monotonic()
            try:
                out.append(self._genmove(g, games[g]))
            except _Lost as lost:
                self.failures.append(lost.reason)
                out.append(Forfeit(lost.reason))
            spent.append(time.monotonic() - began if self._spent is None else self._spent)
        self.last_seconds = spent if self.game_clock is not None else None
        return out

    def _genmove(self, g, game):
        if self._client is None:
            try:
                self._start()
            except GtpEngineError as exc:
                raise _Lost(f"engine restart failed: {exc}") from None
        client = self._client
        target = [(int(color), int(move)) for color, move in game.moves]
        if self._game == g and target[:len(self._played)] == self._played:
            commands = []
            start = len(self._played)
        else:
            commands = ["clear_board"] + self._clock_commands()
            start = 0
        for color, move in target[start:]:
            commands.append(f"play {'b' if color == BLACK else 'w'} "
                            f"{coords.to_gtp(move, self.size)}")
        color = "b" if game.to_move == BLACK else "w"
        client.timeout = self.move_timeout
        if self.game_clock is not None:
            left = self.game_clock.left(g, game.to_move)
            commands.append(f"time_left {color} {max(0, math.floor(left))} 0")
            # the wait for this answer ends where the game would be lost on time
            client.timeout = max(0.05, left + self.game_clock.margin)
        elif self.move_seconds is not None:
            commands.append(f"time_left {color} {self._whole_seconds()} 1")
        commands.append(f"{self.genmove_command} {color}")
        self._game, self._played = None, []       # out of step until the answer is checked
        began = time.monotonic()
        try:
            answers = client.send_many(commands, check=False)
        except GtpConnectionError as exc:
            reason = self._connection_reason(client, exc)
            self._drop()
            raise _Lost(reason) from None
        except ValueError as exc:            # a response line that is not GTP
            self._drop()
            raise _Lost(f"engine answered out of protocol: {escaped(exc, 100, one_line=True)}") from None
        spent = self._spent = time.monotonic() - began
        if self.game_clock is None and self.move_seconds is not None and spent > self.move_timeout:
            self._drop()
            raise _Lost(f"engine overran its time: {spent:.2f} s for a move, "
                        f"{self.move_seconds:g} s allowed "
                        f"(+{self.move_timeout - self.move_seconds:g} s margin)")
        for command, (ok, text) in zip(commands[:-1], answers[:-1]):
            if not ok and not command.startswith("time_"):   # a time control is advice
                raise _Lost(f"engine refused {command!r}: {escaped(text, 60, one_line=True)}")
        ok, text = answers[-1]
        if not ok:
            raise _Lost(f"engine failed {self.genmove_command}: {escaped(text, 60, one_line=True)}")
        answer = text.strip()
        if answer.lower() == "resign":
            return RESIGN
        try:
            move = coords.from_gtp(answer, self.size)
        except ValueError:
            raise _Lost(f"engine answered genmove with "
                        f"{escaped(answer, 60, one_line=True, quoted=True)}, not a move") from None
        if not game.is_legal(move):
            try:
                game.copy().play(move)
                reason = "refused"
            except IllegalMoveError as exc:
                reason = getattr(exc, "reason", None) or str(exc)
            raise _Lost(f"engine played the illegal move {answer} ({reason})")
        self._game, self._played = g, target + [(game.to_move, move)]
        return move

    def _whole_seconds(self):
        return max(1, math.ceil(self.move_seconds))

    def _clock_commands(self):
        """The time control a game starts with: the game clock's main time and no byo-yomi
        (whole seconds, rounded down), or byo-yomi of move_seconds for every move."""
        if self.game_clock is not None:
            return [f"time_settings {max(1, math.floor(self.game_clock.seconds))} 0 0"]
        if self.move_seconds is None:
            return []
        return [f"time_settings 0 {self._whole_seconds()} 1"]

    def _connection_reason(self, client, exc):
        text = str(exc).replace(client.argv[0], "engine")
        try:         # an engine that closed its output is usually exiting: wait for its code
            code = client.process.wait(timeout=0.5 if "closed its output" in text else 0.01)
        except subprocess.TimeoutExpired:
            code = None
        if "no answer" in text:
            clock = self.game_clock
            if clock is not None:
                return (f"lost on time: no answer within {client.timeout:.1f} s, what was left "
                        f"of its {clock.seconds:g} s game clock (+{clock.margin:g} s margin)")
            if self.move_seconds is not None:
                return (f"engine overran its time: no answer within {self.move_timeout:g} s, "
                        f"{self.move_seconds:g} s allowed a move")
            return f"engine timed out (no answer within {self.move_timeout:g} s)"
        if "out of protocol" in text or "answered id" in text:
            return escaped(text, 120, one_line=True)
        if code is not None:
            client.stderr_settled()      # its last words may still be on their way to the file
            said = self._stderr_tail()
            return f"engine crashed (exit code {code})" + (f": {said}" if said else "")
        return f"engine connection failed: {escaped(text, 100, one_line=True)}"


class _Lost(Exception):
    """The engine loses the game being played, for `reason`."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason
