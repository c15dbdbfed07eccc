"""The checks every dashboard request passes before anything acts on it: bodies bounded, UTF-8,
a JSON object of known fields with the right types and ranges (numbers by the one strict reader,
coords.json_number); a refused request gets a
BadRequest whose message names what was wrong (the server answers it as a JSON error)."""
from __future__ import annotations

import re

from fastgo import bounded_json
from fastgo.board import BLACK, WHITE
from fastgo.coords import from_gtp, json_number

MAX_BODY_BYTES = 16 * 1024    # a request body, at most
MAX_BODY_DEPTH = 8            # its arrays and objects inside each other (the requests are flat)
MAX_VISITS = 10_000
MAX_SECONDS = 60.0
SESSION_ID = re.compile(r"[0-9a-f]{24}")
NEW_GAME_FIELDS = frozenset({"checkpoint", "color", "visits", "seconds"})
MOVE_FIELDS = frozenset({"move"})


class BadRequest(ValueError):
    """A request refused; `status` is the HTTP status to answer with."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def json_body(raw: bytes) -> dict:
    """The JSON object in a request body of at most MAX_BODY_BYTES (an empty body: {})."""
    if not isinstance(raw, (bytes, bytearray)):
        raise BadRequest("the body must be bytes")
    if len(raw) > MAX_BODY_BYTES:
        raise BadRequest(f"the body is over {MAX_BODY_BYTES} bytes", 413)
    if not raw.strip():
        return {}
    try:
        value = bounded_json.loads(raw, max_depth=MAX_BODY_DEPTH, max_size=MAX_BODY_BYTES)
    except ValueError as err:
        raise BadRequest(f"the body is not JSON: {str(err)[:100]}") from None
    if not isinstance(value, dict):
        raise BadRequest(f"the body must be a JSON object, not {type(value).__name__}")
    return value


def _fields(body, allowed):
    unknown = sorted(str(k)[:40] for k in body if k not in allowed)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(map(repr, unknown[:5]))}; "
                         f"known: {', '.join(sorted(allowed))}")


def new_game(body: dict):
    """(checkpoint name, human colour BLACK/WHITE, visits or None, seconds or None) of a new
    game: {"checkpoint": NAME, "color": "B"|"W" (default B), and "visits": 1..MAX_VISITS
    (default 100) or "seconds": 0.1..MAX_SECONDS a move, not both}."""
    _fields(body, NEW_GAME_FIELDS)
    name = body.get("checkpoint")
    if not isinstance(name, str) or not 0 < len(name) <= 200:
        raise BadRequest("checkpoint must be a checkpoint's name (a string)")
    color = body.get("color", "B")
    if color not in ("B", "W"):
        raise BadRequest(f"color must be 'B' or 'W', got {str(color)[:20]!r}")
    visits, seconds = body.get("visits"), body.get("seconds")
    if visits is not None and seconds is not None:
        raise BadRequest("give visits or seconds, not both")
    if seconds is not None:
        try:
            seconds = json_number(seconds, low=0.1, high=MAX_SECONDS, what="seconds")
        except ValueError:
            raise BadRequest(f"seconds must be a number in 0.1..{MAX_SECONDS:g}") from None
        return name, BLACK if color == "B" else WHITE, None, seconds
    try:
        visits = json_number(100 if visits is None else visits, low=1, high=MAX_VISITS,
                             what="visits", integer=True)
    except ValueError:
        raise BadRequest(f"visits must be an integer in 1..{MAX_VISITS}") from None
    return name, BLACK if color == "B" else WHITE, visits, None


def move(body: dict, size: int) -> int:
    """The point index of {"move": "D4" | "pass"} on a size x size board (pass: size*size)."""
    _fields(body, MOVE_FIELDS)
    text = body.get("move")
    if not isinstance(text, str) or not 0 < len(text) <= 8:
        raise BadRequest("move must be a GTP vertex like 'D4' or 'pass'")
    try:
        return from_gtp(text, size)
    except ValueError as err:
        raise BadRequest(str(err)) from None


def session_id(text) -> str:
    if not isinstance(text, str) or not SESSION_ID.fullmatch(text):
        raise BadRequest("no such game", 404)
    return text
