"""The dashboard's HTTP server (aiohttp): the page and its static files, the run's snapshot as
JSON and as server-sent events (a new event whenever any file behind it changed), self-play
games to replay, and games against checkpoints (dashboard.sessions).

Endpoints (every answer JSON unless said; every error {"error": "..."} with its status):
    GET  /                         the page (static/index.html)
    GET  /static/NAME              the page's files (a fixed list)
    GET  /api/snapshot             status, losses, strength, checkpoints, newest games, version
    GET  /api/events               text/event-stream: a 'snapshot' event on every change
    GET  /api/game/SHARD:INDEX     one self-play game to replay (RunView.game)
    POST /api/play                 a new game {"checkpoint", "color", "visits"|"seconds"}; a
                                   checkpoint "ref:NAME" is a reference player, at its visits
    GET  /api/play/ID              its state (board, moves, overlay)
    POST /api/play/ID/move         {"move": "D4"|"pass"}: the move, the reply, a new overlay
    POST /api/play/ID/undo         takes back the last move and its reply
    GET  /api/play/ID/sgf          the game as an SGF file
    DELETE /api/play/ID            ends it
With a token (another host than loopback), every request carries it: `?token=T`, the header
`Authorization: Bearer T`, or the cookie the page gets when loaded with `?token=T`.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hmac
import logging
import os
import time

from aiohttp import web

from dashboard import request_checks
from dashboard.run_view import NotFound, RunView
from dashboard.sessions import IDLE_S, Session, SessionError
from fastgo import bounded_json
from fastgo.player_spec import parse_spec
from network.loading import NetworkError, trained_at
from play.specs import check_reference_size, reference_bytes

log = logging.getLogger("fastgo.dashboard")

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
STATIC_FILES = {"index.html": "text/html", "app.js": "text/javascript",
                "charts.js": "text/javascript", "board.js": "text/javascript",
                "style.css": "text/css"}
POLL_S = 1.0                  # how often the event stream looks for a change
SNAPSHOT_AGE_S = 0.5          # a snapshot this recent is shared by every request
TOKEN_COOKIE = "fastgo_dashboard_token"


class ServerLimits:
    """How much the server takes at once."""

    def __init__(self, sessions=4, event_clients=32, requests=64):
        self.sessions, self.event_clients, self.requests = sessions, event_clients, requests


def json_response(data, **options):
    """web.json_response written finite (bounded_json.dumps: NaN and infinities as null, which
    a browser's JSON.parse takes): every answer of the dashboard."""
    return web.json_response(data, dumps=bounded_json.dumps, **options)


def _error(message, status):
    return json_response({"error": str(message)[:500]}, status=status)


class Dashboard:
    """One run directory served: the view, the play sessions, the event clients."""

    def __init__(self, run_root, *, token=None, limits=None):
        self.view = RunView(run_root)
        self.token = token
        self.limits = limits or ServerLimits()
        self.sessions = {}
        self.event_clients = 0
        self.in_flight = 0
        self._snapshot = None        # (monotonic time, snapshot)
        # The view's reads and fits run on one thread, off the event loop, one at a time.
        self.reader = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="run-view")

    async def read(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.reader, fn, *args)

    async def current(self):
        """The run's snapshot, taken at most once per SNAPSHOT_AGE_S whatever the number of
        pages and streams asking."""
        now = time.monotonic()
        if self._snapshot is None or now - self._snapshot[0] > SNAPSHOT_AGE_S:
            self._snapshot = (now, await self.read(self.view.snapshot))
        return self._snapshot[1]

    # -- middleware ----------------------------------------------------------------------------

    @web.middleware
    async def guard(self, request, handler):
        if self.token is not None:
            given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE, "")
            auth = request.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                given = auth[7:]
            if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
                return _error("a token is required (?token=T or Authorization: Bearer T)", 401)
        if request.content_length is not None and request.content_length > request_checks.MAX_BODY_BYTES:
            return _error(f"the body is over {request_checks.MAX_BODY_BYTES} bytes", 413)
        if self.in_flight >= self.limits.requests and not request.path.startswith("/api/events"):
            return _error("too many requests at once; try again", 503)
        self.in_flight += 1
        try:
            return await handler(request)
        except request_checks.BadRequest as err:
            return _error(err, err.status)
        except NotFound as err:
            return _error(err, 404)
        except SessionError as err:
            return _error(err, 409)
        except TimeoutError:
            return _error("the engine did not answer in time", 504)
        except web.HTTPException as err:
            if err.status < 400:
                raise
            return _error(err.reason, err.status)
        except Exception as err:             # a bug: this request fails, the server serves on
            log.exception("request %s failed", request.path)
            return _error(f"internal error: {type(err).__name__}", 500)
        finally:
            self.in_flight -= 1

    async def body(self, request) -> dict:
        raw = await request.content.read(request_checks.MAX_BODY_BYTES + 1)
        return request_checks.json_body(raw)

    # -- the page and the run ------------------------------------------------------------------

    async def index(self, request):
        """The page; with a token, a cookie holding it, so the page's own files and requests
        need not carry it."""
        response = await self.static(request, "index.html")
        if self.token is not None:
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    async def static(self, request, name=None):
        name = name or request.match_info["name"]
        if name not in STATIC_FILES:
            raise NotFound(f"no file {name[:80]!r}")
        with open(os.path.join(STATIC_DIR, name), "rb") as handle:
            data = handle.read()
        return web.Response(body=data, content_type=STATIC_FILES[name], charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    async def snapshot(self, request):
        return json_response(await self.current())

    async def events(self, request):
        if self.event_clients >= self.limits.event_clients:
            return _error(f"{self.limits.event_clients} event streams are open already", 503)
        self.event_clients += 1
        try:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                                   "Cache-Control": "no-cache"})
            await response.prepare(request)
            last = None
            while True:
                data = await self.current()
                if data["version"] != last:
                    last = data["version"]
                    await response.write(b"event: snapshot\ndata: "
                                         + bounded_json.dumps(data).encode() + b"\n\n")
                else:
                    await response.write(b": idle\n\n")
                await asyncio.sleep(POLL_S)
        except ConnectionError:              # the page went away
            return response
        finally:
            self.event_clients -= 1

    async def game(self, request):
        return json_response(await self.read(self.view.game, request.match_info["id"]))

    # -- play ----------------------------------------------------------------------------------

    def _session(self, request) -> Session:
        ident = request_checks.session_id(request.match_info["id"])
        session = self.sessions.get(ident)
        if session is None:
            raise request_checks.BadRequest("no such game (ended, or closed after idling)", 404)
        session.touched = time.monotonic()
        return session

    async def _expire(self):
        now = time.monotonic()
        for ident, session in list(self.sessions.items()):
            if now - session.touched > IDLE_S and not session.lock.locked():
                del self.sessions[ident]
                await session.close()

    async def new_game(self, request):
        name, human, visits, seconds = request_checks.new_game(await self.body(request))
        if name.lower().startswith("ref:"):      # a reference player: at its own visits
            name, path, visits, game = await self.read(_reference_game, name)
            seconds = None
        else:
            path, game = await self.read(self.view.checkpoint_path, name), None
        await self._expire()
        if len(self.sessions) >= self.limits.sessions:
            return _error(f"{self.limits.sessions} games are open already; end one first", 503)
        size, komi = game or await self.read(_checkpoint_game, path)
        session = Session(name, path, size, human, visits, seconds, komi=komi)
        self.sessions[session.id] = session      # counted while it starts
        try:
            async with session.lock:
                await session.open()
        except BaseException:
            self.sessions.pop(session.id, None)
            await session.close()
            raise
        return json_response(session.state())

    async def game_state(self, request):
        return json_response(self._session(request).state())

    async def move(self, request):
        session = self._session(request)
        move = request_checks.move(await self.body(request), session.size)
        async with session.lock:
            await session.play(move)
            return json_response(session.state())

    async def undo(self, request):
        session = self._session(request)
        async with session.lock:
            await session.undo()
            return json_response(session.state())

    async def sgf(self, request):
        session = self._session(request)
        name = session.checkpoint.replace(":", "-")          # ref:NAME
        return web.Response(text=session.sgf(), content_type="application/x-go-sgf",
                            headers={"Content-Disposition":
                                     f'attachment; filename="fastgo-{name}.sgf"'})

    async def end(self, request):
        session = self._session(request)
        self.sessions.pop(session.id, None)
        await session.close()
        return json_response({"ended": session.id})

    async def _reaper(self, app):
        """Closes idle games every minute, so their engines do not wait for the next request."""
        async def loop():
            while True:
                await asyncio.sleep(60.0)
                await self._expire()
        task = asyncio.get_running_loop().create_task(loop())
        yield
        task.cancel()

    async def close(self, app=None):
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        self.reader.shutdown(wait=False, cancel_futures=True)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard], client_max_size=request_checks.MAX_BODY_BYTES)
        app.router.add_get("/", self.index)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_get("/api/snapshot", self.snapshot)
        app.router.add_get("/api/events", self.events)
        app.router.add_get("/api/game/{id}", self.game)
        app.router.add_post("/api/play", self.new_game)
        app.router.add_get("/api/play/{id}", self.game_state)
        app.router.add_post("/api/play/{id}/move", self.move)
        app.router.add_post("/api/play/{id}/undo", self.undo)
        app.router.add_get("/api/play/{id}/sgf", self.sgf)
        app.router.add_delete("/api/play/{id}", self.end)
        app.on_shutdown.append(self.close)
        app.cleanup_ctx.append(self._reaper)
        return app


def _reference_game(text):
    """(ref:NAME, its file, its visits, (board size, komi)) of the reference player `text`
    names: its file read from the index's folder and checked against the index
    (play.specs.reference_bytes), its network loaded from those bytes and of the board size
    the index says. NotFound for an unknown name (or an unreadable index), SessionError of one
    line naming the file for a file that cannot be played."""
    try:
        spec = parse_spec(text)
    except ValueError as err:
        raise NotFound(str(err)) from None
    try:
        ref, data = reference_bytes(spec)
    except ValueError as err:
        raise SessionError(str(err)) from None
    game = _checkpoint_game(ref.path, data)
    try:
        check_reference_size(ref, game[0])
    except ValueError as err:
        raise SessionError(str(err)) from None
    return ref.spec, ref.path, ref.visits, game


def _checkpoint_game(path, data=None):
    """(board size, komi) a checkpoint plays (`data`: its bytes, already read): its model's
    size and the komi it records that it was trained at (network.loading.trained_at)."""
    from network.checkpoint import CheckpointError, load_checkpoint
    try:
        checkpoint = load_checkpoint(path, data=data)
        komi, _, _ = trained_at(checkpoint.extra or {}, path)
        return int(checkpoint.config.board_size), komi
    except (CheckpointError, NetworkError, OSError, AttributeError) as err:
        raise SessionError(f"cannot read the checkpoint: {err}") from None


def serve(run_root, *, host="127.0.0.1", port=8765, token=None, limits=None, ready=print):
    """Serves the run directory until interrupted; `ready(url)` once listening (port 0: a free
    one)."""
    dashboard = Dashboard(run_root, token=token, limits=limits)

    async def main():
        runner = web.AppRunner(dashboard.app(), access_log=None, handle_signals=True)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        ready(f"http://{shown}:{bound}/" + (f"?token={token}" if token else ""))
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0
