"""GTP v2 protocol text: command lines in, responses out, and response parsing for a client.

No engine logic: play.gtp.engine maps commands to a game and a player, and
play.gtp.client drives other engines with `format_command` / `parse_response`.
Follows the GTP v2 specification (draft 2): control characters other than HT and LF are dropped,
'#' starts a comment, HT is a space, empty lines are ignored, an optional numeric id leads a
command, and a response is '=' or '?' then the id, one space, the text, then an empty line.
"""
from dataclasses import dataclass, field

from fastgo.coords import parse_float, parse_int

BLACK = 1  # the colors as fastgo.board numbers them
WHITE = 2
_COLORS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
MAX_ID = (1 << 63) - 1     # command ids: ASCII digits, 0..MAX_ID (19 digits at most)
MAX_LINE_CHARS = 1 << 16   # longer input lines are refused before they are split


class GtpError(Exception):
    """A failed command. The engine answers '? message'; a client raises it for such answers."""


@dataclass
class Command:
    """One command line: `id` is None when the line had none; `name` is "" for a line holding an
    id alone (answered with a syntax error)."""
    id: int | None
    name: str
    args: list = field(default_factory=list)


def preprocess(line):
    """A raw input line after GTP preprocessing: control characters (except HT) removed, the
    comment cut, tabs as spaces, surrounding white space stripped. Empty means: ignore the line."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    line = line.split("#", 1)[0]
    kept = []
    for ch in line:
        if ch == "\t":
            kept.append(" ")
        elif ord(ch) >= 32 and ord(ch) != 127:
            kept.append(ch)
    return "".join(kept).strip()


class OverlongLine(str):
    """Stands for an input line longer than MAX_LINE_CHARS, whose text a line reader dropped;
    parse_line refuses it."""


def parse_line(line):
    """A Command for one input line, or None for an empty or comment-only line. Raises
    GtpError for a line longer than MAX_LINE_CHARS or an id of ASCII digits beyond MAX_ID
    (a word of other "digits", e.g. superscripts, is not an id: it is read as the command name).
    Time and memory linear in the line."""
    if isinstance(line, OverlongLine) or len(line) > MAX_LINE_CHARS:
        raise GtpError(f"line longer than {MAX_LINE_CHARS} characters")
    text = preprocess(line)
    if not text:
        return None
    words = text.split()
    command_id = None
    if words[0].isascii() and words[0].isdigit():
        command_id = parse_id(words[0])
        words = words[1:]
    if not words:
        return Command(command_id, "", [])
    return Command(command_id, words[0], words[1:])


def parse_id(text):
    """A command id (ASCII digits, 0..MAX_ID) -> int; GtpError('invalid command id')."""
    try:
        return parse_int(text, low=0, high=MAX_ID, what="command id")
    except ValueError:
        raise GtpError("invalid command id") from None


def int_arg(text, low=None, high=None, message="syntax error"):
    """A command argument that must be an ASCII integer in [low, high]; GtpError(message)."""
    try:
        return parse_int(text, low=low, high=high)
    except ValueError:
        raise GtpError(message) from None


def float_arg(text, low=None, high=None, message="syntax error"):
    """A command argument that must be a finite ASCII decimal in [low, high]; GtpError(message)."""
    try:
        return parse_float(text, low=low, high=high)
    except ValueError:
        raise GtpError(message) from None


def _clean_body(text):
    """Response text that cannot end the response early: no empty lines inside, no trailing
    newline, no control characters other than LF and HT."""
    text = "".join(ch for ch in str(text) if ch in "\n\t" or (ord(ch) >= 32 and ord(ch) != 127))
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    # An empty first line is fine (the response already holds '= '); later ones would end it.
    return "\n".join(line if line or i == 0 else " " for i, line in enumerate(lines))


def format_response(command_id, text="", ok=True):
    """'=id text\\n\\n' (success) or '?id text\\n\\n' (failure); the id is left out when None."""
    mark = "=" if ok else "?"
    ident = "" if command_id is None else str(command_id)
    return f"{mark}{ident} {_clean_body(text)}\n\n"


def format_command(name, *args, command_id=None):
    """A command line for an engine (with its newline). Arguments must not hold line breaks."""
    words = [str(command_id)] if command_id is not None else []
    words.append(str(name))
    for arg in args:
        arg = str(arg)
        if any(ch in arg for ch in "\r\n#") or not arg.strip():
            raise ValueError(f"GTP argument {arg!r} is empty or holds a line break or '#'")
        words.append(arg)
    return " ".join(words) + "\n"


def parse_response(text):
    """A response as received (first line starting with '=' or '?', up to the empty line)
    -> (ok, id or None, text with the leading space removed)."""
    if not text or text[0] not in "=?":
        raise ValueError(f"not a GTP response: {text[:80]!r}")
    ok = text[0] == "="
    rest = text[1:]
    digits = 0
    while digits < len(rest) and rest[digits] in "0123456789":
        digits += 1
    try:
        command_id = parse_id(rest[:digits]) if digits else None
    except GtpError:
        raise ValueError(f"GTP response id {rest[:24]!r} is not a command id") from None
    body = rest[digits:]
    if body.startswith(" "):
        body = body[1:]
    return ok, command_id, body.rstrip("\n")


def parse_color(text):
    """'b' / 'black' / 'w' / 'white' (any case) -> BLACK / WHITE; GtpError('invalid color')."""
    color = _COLORS.get(str(text).lower())
    if color is None:
        raise GtpError(f"invalid color {text!r}")
    return color


def color_name(color):
    """BLACK / WHITE -> 'black' / 'white'."""
    return "black" if color == BLACK else "white"
