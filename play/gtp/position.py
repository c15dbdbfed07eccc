"""Setting up a position for the GTP engine (play.gtp.engine): fixed and free
handicap placements, a position read from an SGF file (loadsgf), and the current game written
as SGF (printsgf). Points are move indices (row * size + col, row 0 the top)."""
from __future__ import annotations

from fastgo import sgf
from fastgo.gtp import WHITE, GtpError, int_arg

SCATTER = 7919              # a prime: m * SCATTER mod N*N visits every point of the board once


def handicap_points(size, count):
    """The GTP fixed handicap vertices (as move indices) for `count` stones, or GtpError.
    GTP v2 section 4.1.1 (as GNU Go places them): corners on the 4th line (3rd below 13x13),
    then the side midpoints, with the centre for odd counts from 5; boards below 7x7 take none,
    even sizes (no centre line) and 7x7 at most 4."""
    if count < 2 or size < 7:
        raise GtpError("invalid handicap")
    limit = 9 if size % 2 == 1 and size > 7 else 4
    if count > limit:
        raise GtpError("invalid handicap")
    edge = 3 if size >= 13 else 2
    low, high, mid = edge, size - 1 - edge, size // 2

    def at(row, col):
        return row * size + col

    # (row, col) with row 0 the top: lower-left, upper-right, upper-left/lower-right, sides, centre.
    lower_left, upper_right = at(high, low), at(low, high)
    upper_left, lower_right = at(low, low), at(high, high)
    left, right, centre = at(mid, low), at(mid, high), at(mid, mid)
    top, bottom = at(low, mid), at(high, mid)
    order = {
        2: [lower_left, upper_right],
        3: [lower_left, upper_right, upper_left],
        4: [lower_left, upper_right, upper_left, lower_right],
        5: [lower_left, upper_right, upper_left, lower_right, centre],
        6: [lower_left, upper_right, upper_left, lower_right, left, right],
        7: [lower_left, upper_right, upper_left, lower_right, left, right, centre],
        8: [lower_left, upper_right, upper_left, lower_right, left, right, top, bottom],
        9: [lower_left, upper_right, upper_left, lower_right, left, right, top, bottom, centre],
    }
    return order[count]


def free_handicap_points(size, count):
    """place_free_handicap's `count` points (2 <= count < size * size, else GtpError): the
    largest fixed pattern that fits, then further points in a scattered order."""
    if count < 2 or count >= size * size:
        raise GtpError("invalid handicap")
    points = []
    for fixed in range(min(count, 9), 1, -1):
        try:
            points = handicap_points(size, fixed)
            break
        except GtpError:
            continue
    area = size * size
    for m in sorted(range(area), key=lambda m: (m * SCATTER) % area):
        if len(points) == count:
            break
        if m not in points:
            points.append(m)
    return points


def set_free_handicap_points(args, size, vertex):
    """set_free_handicap's points from its vertex arguments (vertex(text) -> move index or
    GtpError): at least 2, no pass, no point twice, fewer than size * size."""
    if len(args) < 2:
        raise GtpError("invalid handicap")
    points = []
    for text in args:
        move = vertex(text)
        if move == size * size or move in points:
            raise GtpError("invalid handicap")
        points.append(move)
    if len(points) >= size * size:
        raise GtpError("invalid handicap")
    return points


def loadsgf_stop(text):
    """loadsgf's optional move number: the position before move `text` (1-based) is loaded,
    so the moves kept are number - 1; None (the whole game) for 0."""
    number = int_arg(text, 0)
    return number - 1 if number > 0 else None


def read_sgf(path):
    """The main line of SGF file `path` (fastgo.sgf.SgfGame); GtpError when it cannot be read
    or parsed."""
    try:
        return sgf.read_sgf_file(path)
    except OSError:
        raise GtpError(f"cannot open file {path!r}") from None
    except sgf.SgfError as exc:
        raise GtpError(f"cannot parse file: {exc}") from None


def sgf_position(record, *, komi, superko, stop):
    """A fastgo.game.Game of `record` after its first `stop` moves (None: all); GtpError when
    the moves cannot be played."""
    try:
        return sgf.to_game(record, komi=komi, superko=superko, moves=stop)
    except sgf.SgfError as exc:
        raise GtpError(f"cannot load game: {exc}") from None


def sgf_text(game, *, setup_black, setup_white, handicap, application):
    """The SGF text of `game` with its setup stones and handicap count; `application` is the
    AP value (NAME:VERSION)."""
    record = sgf.record_from_game(game, setup_black=setup_black, setup_white=setup_white,
                                  handicap=handicap)
    first = game.moves[0][0] if game.moves else game.to_move
    if first == WHITE:
        record.first_player = WHITE
    return sgf.write_sgf(record, application=application)


def write_text(path, text):
    """Writes `text` (UTF-8) to `path`; GtpError when it cannot."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        raise GtpError(f"cannot write file {path!r}") from None
