"""Games against a checkpoint on the page: each session is one `fastgo gtp --model CKPT` process
(the network player of play.network_player: it chooses the replies) and one `fastgo analysis
--model CKPT`
process (the overlay: top moves with win rate and score lead, ownership, policy), both children
of the dashboard, talking over pipes. The position is kept here as a fastgo.game.Game, so a move
is checked (legal, on the board) before any engine sees it. Sessions are bounded in number and
closed after IDLE_S without a request; the engines never touch the run directory.
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import time

from fastgo import bounded_json
from fastgo.board import BLACK, WHITE, IllegalMoveError
from fastgo.coords import from_gtp, to_gtp
from fastgo.game import Game
from fastgo.sgf import SgfGame, write_sgf
from fastgo.variants import Backend

IDLE_S = 600.0                # a session without a request this long is closed
START_TIMEOUT_S = 120.0       # an engine's first answer (it loads the network)
MOVE_TIMEOUT_S = 120.0        # one reply or analysis
MAX_ENGINE_LINE = 1 << 22     # bytes of one line an engine prints (an analysis with ownership)
ANALYSIS_VISITS = 200         # the overlay's search, at most


class SessionError(ValueError):
    """A request a session refuses (illegal move, game over, an engine that failed); the
    message says why and the session is unchanged."""


def engine_argv(kind, checkpoint, *, visits=None, seconds=None, komi=7.5):
    """The command line of one engine of a session: `fastgo gtp` (kind 'gtp') or `fastgo
    analysis` (kind 'analysis') on the checkpoint, with this interpreter."""
    base = [sys.executable, "-m", "fastgo_cli.main"]
    if kind == "gtp":
        argv = base + ["gtp", "--model", checkpoint, "--komi", repr(float(komi)),
                       "--backend", Backend.TORCH]
        if seconds is not None:
            argv += ["--move-seconds", repr(float(seconds))]
        else:
            argv += ["--visits", str(int(visits))]
        return argv
    return base + ["analysis", "--model", checkpoint, "--positions", "1",
                   "--visits", str(ANALYSIS_VISITS), "--threads", "1"]


class Engine:
    """One child engine on pipes; `ask` sends a line and reads the answer lines."""

    def __init__(self, proc):
        self.proc = proc

    @classmethod
    async def start(cls, argv):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, limit=MAX_ENGINE_LINE)
        return cls(proc)

    async def _line(self, timeout):
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            raise SessionError("the engine stopped")
        return line.decode("utf-8", "replace").rstrip("\r\n")

    async def gtp(self, command, timeout=MOVE_TIMEOUT_S):
        """The text of a GTP answer ('=' stripped); SessionError for '?'."""
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        lines = []
        while True:
            line = await self._line(timeout)
            if line == "" and lines:
                break
            if line or lines:
                lines.append(line)
        text = "\n".join(lines)
        if text.startswith("?"):
            raise SessionError(f"the engine refused {command.split()[0]}: {text[1:].strip()}")
        return text[1:].strip()

    async def analyse(self, query, timeout=MOVE_TIMEOUT_S):
        """The final analysis response to `query` (a dict with an 'id')."""
        self.proc.stdin.write(json.dumps(query).encode() + b"\n")
        await self.proc.stdin.drain()
        while True:
            try:
                answer = bounded_json.loads(await self._line(timeout), max_size=MAX_ENGINE_LINE)
            except bounded_json.JSONRefused as err:
                raise SessionError(f"analysis: an answer that is not JSON ({err})") from None
            if not isinstance(answer, dict):
                raise SessionError("analysis: an answer that is not a JSON object")
            if "error" in answer and answer.get("id") in (None, query["id"]):
                raise SessionError(f"analysis: {answer['error']}")
            if answer.get("id") == query["id"] and "turnNumber" in answer \
                    and not answer.get("isDuringSearch"):
                if "noResults" in answer:
                    raise SessionError("analysis: no results")
                return answer

    async def close(self):
        if self.proc.returncode is None:
            try:
                self.proc.stdin.close()
                await asyncio.wait_for(self.proc.wait(), 5.0)
            except (TimeoutError, OSError, ConnectionError):
                self.proc.kill()
                await self.proc.wait()


class Session:
    """One game: the human plays `human` (BLACK or WHITE), the checkpoint the other colour."""

    def __init__(self, checkpoint_name, checkpoint_path, size, human, visits, seconds, komi):
        self.id = secrets.token_hex(12)
        self.checkpoint = checkpoint_name
        self.path = checkpoint_path
        self.human = human
        self.visits, self.seconds = visits, seconds
        self.game = Game(size, komi)
        self.lock = asyncio.Lock()
        self.touched = time.monotonic()
        self.gtp = self.analysis = None
        self.analysis_result = None
        self._queries = 0

    @property
    def size(self):
        return self.game.size

    async def open(self):
        self.gtp = await Engine.start(engine_argv("gtp", self.path, visits=self.visits,
                                                  seconds=self.seconds, komi=self.game.komi))
        self.analysis = await Engine.start(engine_argv("analysis", self.path))
        try:
            answer = await self.gtp.gtp("name", timeout=START_TIMEOUT_S)
            if not answer:
                raise SessionError("the engine gave no name")
            await self.gtp.gtp(f"boardsize {self.size}", timeout=START_TIMEOUT_S)
            await self.gtp.gtp("clear_board")
            await self.gtp.gtp(f"komi {self.game.komi}")
        except (TimeoutError, SessionError, ValueError) as err:
            await self.close()
            raise SessionError(f"cannot start the network player: {err}") from None
        if self.human == WHITE:
            await self._reply()
        await self._analyse()

    async def close(self):
        for engine in (self.gtp, self.analysis):
            if engine is not None:
                await engine.close()

    def _colour(self, color):
        return "B" if color == BLACK else "W"

    async def _reply(self):
        color = self.game.to_move
        answer = (await self.gtp.gtp(f"genmove {self._colour(color)}")).lower()
        if answer == "resign":
            self.game.resign(color)
            return "resign"
        try:
            move = from_gtp(answer, self.size)
            self.game.play(move)
        except (ValueError, IllegalMoveError) as err:
            raise SessionError(f"the network's reply {answer[:20]!r} was refused: {err}") from None
        return move

    async def _analyse(self):
        if self.game.is_over():
            self.analysis_result = None
            return
        self._queries += 1
        query = {"id": f"q{self._queries}", "boardXSize": self.size, "boardYSize": self.size,
                 "komi": self.game.komi, "rules": "fastgo",
                 "moves": [[self._colour(c), to_gtp(m, self.size)] for c, m in self.game.moves],
                 "maxVisits": min(ANALYSIS_VISITS, self.visits or ANALYSIS_VISITS),
                 "includeOwnership": True, "includePolicy": True}
        answer = await self.analysis.analyse(query)
        infos = []
        for info in answer.get("moveInfos", [])[:10]:
            try:
                infos.append({"move": info["move"], "point": _point(info["move"], self.size),
                              "visits": int(info["visits"]), "winrate": float(info["winrate"]),
                              "scoreLead": info.get("scoreLead"), "order": int(info["order"])})
            except (KeyError, TypeError, ValueError):
                continue
        root = answer.get("rootInfo", {})
        self.analysis_result = {"moves": infos, "ownership": answer.get("ownership"),
                                "policy": answer.get("policy"),
                                "winrate": root.get("winrate"), "scoreLead": root.get("scoreLead"),
                                "to_move": self._colour(self.game.to_move)}

    async def play(self, move):
        """The human's `move` (a point index, or size*size for a pass), then the network's reply
        and a new analysis. SessionError (nothing changed) for an illegal move, a move out of
        turn or a finished game."""
        if self.game.is_over():
            raise SessionError("the game is over")
        if self.game.to_move != self.human:
            raise SessionError("it is not your turn")
        try:
            self.game.play(move)
        except IllegalMoveError as err:
            raise SessionError(str(err)) from None
        try:
            await self.gtp.gtp(f"play {self._colour(self.human)} {to_gtp(move, self.size)}")
        except SessionError:
            self.game.undo()
            raise
        reply = None
        if not self.game.is_over():
            reply = await self._reply()
        await self._analyse()
        return reply

    async def undo(self):
        """Takes back the human's last move and the reply after it."""
        if self.game.resigned is not None:
            self.game.undo()
        taken = 0
        while self.game.moves and (taken == 0 or self.game.to_move != self.human):
            await self.gtp.gtp("undo")
            self.game.undo()
            taken += 1
        if not taken:
            raise SessionError("nothing to undo")
        if self.game.to_move != self.human and not self.game.moves:
            await self._reply()
        await self._analyse()

    def state(self) -> dict:
        """What the page draws: the board (a string of '.', 'B', 'W', row 0 first), the moves
        (point indices, -1 a pass), whose turn, the result when over, the overlay."""
        size = self.size
        return {"id": self.id, "checkpoint": self.checkpoint, "size": size,
                "komi": self.game.komi, "human": self._colour(self.human),
                "board": "".join(".BW"[int(v)] for v in self.game.board.stones().ravel()),
                "moves": [-1 if m == size * size else int(m) for _, m in self.game.moves],
                "to_move": self._colour(self.game.to_move),
                "over": self.game.is_over(),
                "result": self.game.result_string() if self.game.is_over() else None,
                "analysis": self.analysis_result}

    def sgf(self) -> str:
        """The game so far as SGF."""
        net = f"fastgo {self.checkpoint}"
        black, white = ("you", net) if self.human == BLACK else (net, "you")
        result = self.game.result_string() if self.game.is_over() else ""
        return write_sgf(SgfGame(size=self.size, komi=self.game.komi,
                                 rules="Tromp-Taylor (positional superko)", black_player=black,
                                 white_player=white, result=result,
                                 moves=[(c, int(m)) for c, m in self.game.moves]))


def _point(vertex, size):
    """A GTP vertex as a point index, -1 for a pass."""
    move = from_gtp(vertex, size)
    return -1 if move == size * size else move
