"""SGF FF[4] reading: the main line of the first game of a file into an `SgfGame` record, and
a record into a fastgo.game.Game.

The reader is a single linear pass with an explicit stack: bounded in time and memory by the
input size (capped by `max_chars`; see parse_sgf for the bounds), so no input can make it hang,
recurse deeply or balloon. Every malformed input is an `SgfError` naming what is wrong and where
(offset and line:col). Pure Python (numbers from fastgo.constants); fastgo.game is imported
only by `to_game`.
"""
import errno
from array import array

from fastgo import coords
from fastgo.board import IllegalMoveError
from fastgo.bounds import KOMI
from fastgo.constants import MAX_BOARD_POINTS
from fastgo.files import escaped, read_bounded
from fastgo.game import Game
from fastgo.sgf.record import BLACK, COLOR_LETTERS, WHITE, SgfError, SgfGame

MAX_CHARS = 8_000_000    # default cap on the input text
MAX_DEPTH = 10_000       # nesting of variations
MAX_NODES = 250_000      # nodes over all variations of the first game
MAX_SETUP_POINTS = 4 * MAX_BOARD_POINTS   # setup points (AB, AW, AE; rectangles by area) in one game
SHOWN_CHARS = 24         # of a property or value an error names


class _MainLine:
    """The main line's nodes and property values, flat: no Python object per node or value.
    Values are kept by the offset of their '[' and read again when used."""
    __slots__ = ("node_at", "value_node", "value_key", "value_at", "keys", "key_ids")

    def __init__(self):
        self.node_at = array("q")      # [nodes] offset of each node's ';'
        self.value_node = array("q")   # [values] index of the value's node (non-decreasing)
        self.value_key = array("l")    # [values] index of the value's identifier in keys
        self.value_at = array("q")     # [values] offset of the value's '['
        self.keys = []                 # identifiers seen on the main line
        self.key_ids = {}              # identifier -> index in keys

    def nodes(self):
        """(offset of ';', {identifier: [offsets of '[']}) per node, in order."""
        j, total = 0, len(self.value_node)
        for i, at in enumerate(self.node_at):
            props = {}
            while j < total and self.value_node[j] == i:
                props.setdefault(self.keys[self.value_key[j]], []).append(self.value_at[j])
                j += 1
            yield at, props


class _Tree:
    __slots__ = ("offset", "nodes", "children", "main")

    def __init__(self, offset, main):
        self.offset = offset
        self.nodes = 0           # nodes read so far
        self.children = 0        # variations opened so far
        self.main = main         # on the main line: the first variation at every branch


_WHITESPACE = " \t\r\n\f\v"


def _read_value(text, pos):
    """text[pos] == '['. Returns (raw value with escapes resolved, position after ']').
    Linear in the value's length: each find starts where the previous one stopped."""
    start = pos
    pos += 1
    parts = []
    n = len(text)
    close = -1        # the next unescaped-candidate ']' at or after pos
    while True:
        if close < pos:
            close = text.find("]", pos)
            if close < 0:
                raise SgfError("unclosed property value: '[' without ']'", text, start)
        slash = text.find("\\", pos, close)
        if slash < 0:
            parts.append(text[pos:close])
            return "".join(parts), close + 1
        parts.append(text[pos:slash])
        char = text[slash + 1]        # exists: slash < close
        pos = slash + 2
        if char in "\r\n":             # soft line break: an escaped newline is removed
            other = "\n" if char == "\r" else "\r"
            if pos < n and text[pos] == other:
                pos += 1
        else:
            parts.append(char)


def _parse_main_line(text, max_depth, max_nodes):
    """The main line of the first game tree as a _MainLine. One pass over the text up to the
    end of that game tree (later games are not read); every node is checked, but only the
    main line's values are kept, as offsets. Raises SgfError."""
    n = len(text)
    pos = 0
    stack = []       # open game trees, innermost last
    main = _MainLine()
    node = None      # index in main of the node receiving properties, -1 off the main line,
                     # None before a node's ';'
    n_nodes = 0
    started = False
    while pos < n:
        ch = text[pos]
        if ch in _WHITESPACE:
            pos += 1
        elif not stack and ch != "(":
            if ch != "\ufeff":
                raise SgfError(f"expected '(' to open a game tree, found {ch!r}", text, pos)
            pos += 1
        elif ch == "(":
            if not stack and started:
                break    # a second game: only the first is read
            if len(stack) >= max_depth:
                raise SgfError(f"variations nested deeper than {max_depth}", text, pos)
            if stack and not stack[-1].nodes:
                raise SgfError("variation '(' before the game tree's first node ';'", text, pos)
            parent = stack[-1] if stack else None
            stack.append(_Tree(pos, parent is None or (parent.main and not parent.children)))
            if parent is not None:
                parent.children += 1
            started = True
            node = None
            pos += 1
        elif ch == ")":
            if not stack[-1].nodes:
                raise SgfError("empty game tree '()'", text, pos)
            stack.pop()
            node = None
            pos += 1
            if not stack:
                break    # text after the game tree is ignored (mail signatures, editors' junk)
        elif ch == ";":
            tree = stack[-1]
            if tree.children:
                raise SgfError("node ';' after a variation in the same game tree", text, pos)
            n_nodes += 1
            if n_nodes > max_nodes:
                raise SgfError(f"more than {max_nodes} nodes", text, pos)
            tree.nodes += 1
            if tree.main:
                node = len(main.node_at)
                main.node_at.append(pos)
            else:
                node = -1
            pos += 1
        elif ch.isascii() and ch.isalpha():
            start = pos
            while pos < n and text[pos].isascii() and text[pos].isalpha():
                pos += 1
            ident = text[start:pos]
            if node is None:
                raise SgfError(f"property {escaped(ident, SHOWN_CHARS, quoted=True)} before "
                               "the node's ';'", text, start)
            # FF[3] allowed lower-case letters in identifiers (AddBlack = AB): keep the capitals.
            key = "".join(c for c in ident if c.isupper())
            if not key:
                raise SgfError(f"property identifier {escaped(ident, SHOWN_CHARS, quoted=True)} "
                               "has no capital letter", text, start)
            while pos < n and text[pos] in _WHITESPACE:
                pos += 1
            if pos >= n or text[pos] != "[":
                raise SgfError(f"property {escaped(ident, SHOWN_CHARS, quoted=True)} has no "
                               "value", text, start)
            key_id = -1
            if node >= 0:
                key_id = main.key_ids.get(key)
                if key_id is None:
                    key_id = main.key_ids[key] = len(main.keys)
                    main.keys.append(key)
            while pos < n and text[pos] == "[":
                if key_id >= 0:
                    main.value_node.append(node)
                    main.value_key.append(key_id)
                    main.value_at.append(pos)
                pos = _read_value(text, pos)[1]
                while pos < n and text[pos] in _WHITESPACE:
                    pos += 1
        else:
            raise SgfError(f"unexpected character {ch!r}", text, pos)
    if stack:
        raise SgfError("unclosed game tree: '(' without ')'", text, stack[-1].offset)
    if not started:
        raise SgfError("no game tree: an SGF file starts with '(;'", text, 0)
    return main


def _values(props, ident, text):
    """(value text, offset of its '[') of each value of property `ident` in a node's props,
    read one at a time."""
    for at in props.get(ident, ()):
        yield _read_value(text, at)[0], at


def _simple_text(value):
    """SimpleText: every whitespace character (newlines included) becomes a space."""
    return "".join(" " if c in _WHITESPACE else c for c in value)


def _text(value):
    """Text: line breaks kept (\\r\\n and \\r become \\n), other whitespace becomes a space."""
    value = value.replace("\r\n", "\n").replace("\n\r", "\n").replace("\r", "\n")
    return "".join(" " if c in " \t\f\v" else c for c in value)


def _points(values, size, ident, text, budget):
    """Point list values (single points or FF[4] rectangles 'aa:cc') -> move indices.
    `budget` is a one-element list: the points still allowed; a rectangle's area is checked
    against it before the rectangle is expanded."""
    points = []
    for value, at in values:
        try:
            if ":" in value:
                first, last = value.split(":", 1)
                a = coords.from_sgf(first, size)
                b = coords.from_sgf(last, size)
                if a == size * size or b == size * size:
                    raise ValueError(f"pass in the rectangle {value!r}")
                r0, r1 = sorted((a // size, b // size))
                c0, c1 = sorted((a % size, b % size))
                area = (r1 - r0 + 1) * (c1 - c0 + 1)
            else:
                point = coords.from_sgf(value, size)
                if point == size * size:
                    raise ValueError(f"pass {value!r} is not a point")
                area = 1
            if area > budget[0]:
                raise ValueError(f"setup stones beyond the limit of {MAX_SETUP_POINTS} points")
            budget[0] -= area
            if ":" in value:
                points.extend(r * size + c for r in range(r0, r1 + 1) for c in range(c0, c1 + 1))
            else:
                points.append(point)
        except ValueError as exc:
            raise SgfError(f"{ident}: {exc}", text, at) from None
    return points


def _one(props, ident, text):
    offsets = props[ident]
    if len(offsets) != 1:
        raise SgfError(f"{ident} takes one value, got {len(offsets)}", text, offsets[1])
    return _read_value(text, offsets[0])[0], offsets[0]


def _number(props, ident, text, parse, low, high, message):
    """A numeric property in [low, high]: `message` for anything not a number, 'is outside'
    for a number out of range."""
    value, at = _one(props, ident, text)
    shown = escaped(value, SHOWN_CHARS)
    try:
        number = parse(value.strip())
    except ValueError:
        raise SgfError(f"{ident}[{shown}] {message}", text, at) from None
    if not low <= number <= high:
        raise SgfError(f"{ident}[{shown}] is outside {low:g}..{high:g}", text, at)
    return number


def _root_properties(game, props, text):
    if "GM" in props:
        value, at = _one(props, "GM", text)
        if value.strip() != "1":
            raise SgfError(f"GM[{escaped(value, SHOWN_CHARS)}] is not a game of Go (GM[1])", text, at)
    if "SZ" in props:
        value, at = _one(props, "SZ", text)
        if ":" in value:
            raise SgfError(f"rectangular board SZ[{escaped(value, SHOWN_CHARS)}] is not "
                           "supported", text, at)
        game.size = _number(props, "SZ", text, coords.parse_int, 2, coords.MAX_GTP_SIZE,
                            "is not a board size")
    if "KM" in props:
        game.komi = _number(props, "KM", text, coords.parse_float, KOMI.low, KOMI.high,
                            "is not a number")
    if "HA" in props:
        game.handicap = _number(props, "HA", text, coords.parse_int, 0, game.size * game.size,
                                "is not a number of stones")
    for ident, attr in (("RU", "rules"), ("PB", "black_player"), ("PW", "white_player"),
                        ("RE", "result"), ("DT", "date")):
        if ident in props:
            setattr(game, attr, _simple_text(_one(props, ident, text)[0]))


def _read_game(main, text):
    game = SgfGame()
    nodes = main.nodes()
    node_at, props = next(nodes)
    _root_properties(game, props, text)
    size = game.size
    black, white = {}, {}     # setup stones, insertion-ordered
    budget = [MAX_SETUP_POINTS]
    comments = {}             # k -> comment texts on the position after k moves
    while props is not None:
        setup = [ident for ident in ("AB", "AW", "AE") if ident in props]
        if setup and game.moves:
            raise SgfError(f"setup property {setup[0]} after the first move is not supported",
                           text, props[setup[0]][0])
        for point in _points(_values(props, "AE", text), size, "AE", text, budget):
            black.pop(point, None)
            white.pop(point, None)
        for ident, own, other in (("AB", black, white), ("AW", white, black)):
            for point in _points(_values(props, ident, text), size, ident, text, budget):
                other.pop(point, None)
                own[point] = True
        if "PL" in props and not game.moves:
            value, at = _one(props, "PL", text)
            letter = value.strip().upper()[:1]
            if letter not in ("B", "W"):
                raise SgfError(f"PL[{escaped(value, SHOWN_CHARS)}] is not B or W", text, at)
            game.first_player = BLACK if letter == "B" else WHITE
        played = [ident for ident in ("B", "W") if ident in props]
        if len(played) == 2:
            raise SgfError("node with both a B and a W move", text, node_at)
        if played:
            ident = played[0]
            value, at = _one(props, ident, text)
            try:
                move = coords.from_sgf(value.strip(), size)
            except ValueError as exc:
                raise SgfError(f"{ident}: {exc}", text, at) from None
            game.moves.append((BLACK if ident == "B" else WHITE, move))
        if "C" in props:
            comments.setdefault(len(game.moves), []).extend(
                _text(value) for value, _ in _values(props, "C", text))
        node_at, props = next(nodes, (None, None))
    game.setup_black = list(black)
    game.setup_white = list(white)
    game.comments = {k: "\n".join(parts) for k, parts in comments.items()}
    return game


def parse_sgf(text, *, max_chars=MAX_CHARS, max_depth=MAX_DEPTH, max_nodes=MAX_NODES):
    """The main line of the first game in an SGF collection. `text` is str or bytes (UTF-8,
    else Latin-1). Raises SgfError.

    Bounds: input of at most `max_chars` characters (refused before it is read), at most
    `max_nodes` nodes and `max_depth` nested variations, at most MAX_SETUP_POINTS setup points
    (a rectangle's area is checked before it is expanded). Time is linear in the input (about
    2.5 us per character or node: a few seconds at the limits); memory is the text plus 8
    bytes per main-line node and 24 per main-line property value (each at least two
    characters: at most 12 bytes per input character), plus the texts of the main line's
    comments, plus while one node is read 40 bytes per value of that node (40 MB at most for a
    2 MB node); nodes off the main line and games after the first are checked or skipped, not
    kept."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_chars:
            raise SgfError(f"SGF is too large: {len(text)} bytes, the limit is {max_chars}")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            text = bytes(text).decode("latin-1")
    if not isinstance(text, str):
        raise SgfError(f"SGF must be text or bytes, not {type(text).__name__}")
    if len(text) > max_chars:
        raise SgfError(f"SGF is too large: {len(text)} characters, the limit is {max_chars}")
    return _read_game(_parse_main_line(text, max_depth, max_nodes), text)


def read_sgf_file(path, *, max_chars=MAX_CHARS):
    """parse_sgf on a file's contents. The path must name a regular file of at most max_chars
    bytes (a FIFO or device is refused without blocking: fastgo.files.read_bounded).
    Raises OSError when it cannot be read, SgfError when it is too large or not an SGF game."""
    try:
        data = read_bounded(path, max_chars)
    except OSError as err:
        if err.errno == errno.EFBIG:
            raise SgfError(f"SGF is too large: {err.strerror}") from None
        raise
    return parse_sgf(data, max_chars=max_chars)


# --- building a game -----------------------------------------------------------------------------

def to_game(record, *, komi=None, superko=True, moves=None):
    """A fastgo.game.Game with the record's setup stones and its first `moves` moves (all when
    None). `komi` overrides the record's; with neither, Game's default. The first player is PL,
    else White after handicap stones (HA), else Black; a move whose color is not the side to
    move is played for that color (as SGF editors do). Raises SgfError for an illegal move or
    setup."""
    if komi is None:
        komi = record.komi
    game = Game(size=record.size, superko=superko) if komi is None else \
        Game(size=record.size, komi=komi, superko=superko)
    if record.setup_black or record.setup_white:
        try:
            game.setup(black=record.setup_black, white=record.setup_white)
        except (ValueError, IllegalMoveError) as exc:
            raise SgfError(f"bad setup stones: {exc}") from None
    if record.first_player is not None:
        game.to_move = record.first_player
    elif record.handicap >= 2 and record.setup_black and not record.setup_white:
        game.to_move = WHITE     # handicap stones: White plays first
    count = len(record.moves) if moves is None else max(0, min(moves, len(record.moves)))
    for number, (color, move) in enumerate(record.moves[:count], start=1):
        if game.to_move != color:
            game.to_move = color
        try:
            game.play(move)
        except IllegalMoveError as exc:
            where = coords.to_sgf(move, record.size)
            raise SgfError(f"move {number} {COLOR_LETTERS[color]}[{where}] is illegal: {exc}") from None
    return game
