"""SGF FF[4] writing: an `SgfGame` record as text (one game tree, no variations), and the record
of a finished or running fastgo.game.Game."""
from fastgo import coords
from fastgo.sgf.record import COLOR_LETTERS, SgfGame

_WRITE_LINE_MOVES = 12    # move nodes per line in written files


def escape_text(value):
    """Escapes ']' and '\\' for a property value."""
    return str(value).replace("\\", "\\\\").replace("]", "\\]")


def _format_komi(komi):
    """Plain decimal, never an exponent: '7.5', '0', '-3.5', '6.25'."""
    text = f"{float(komi):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def write_sgf(record, *, application="fastgo"):
    """The record as FF[4] SGF text (one game tree, no variations, ends with a newline)."""
    size = record.size
    root = [f"FF[4]GM[1]CA[UTF-8]AP[{escape_text(application)}]SZ[{size}]"]
    if record.komi is not None:
        root.append(f"KM[{_format_komi(record.komi)}]")
    for ident, value in (("RU", record.rules), ("PB", record.black_player),
                         ("PW", record.white_player), ("DT", record.date), ("RE", record.result)):
        if value:
            root.append(f"{ident}[{escape_text(value)}]")
    if record.handicap:
        root.append(f"HA[{int(record.handicap)}]")
    for ident, points in (("AB", record.setup_black), ("AW", record.setup_white)):
        if points:
            root.append(ident + "".join(f"[{coords.to_sgf(p, size)}]" for p in points))
    if record.first_player is not None:
        root.append(f"PL[{COLOR_LETTERS[record.first_player]}]")
    if record.comments.get(0):
        root.append(f"C[{escape_text(record.comments[0])}]")
    out = ["(;" + "".join(root)]
    line = []
    for k, (color, move) in enumerate(record.moves, start=1):
        node = f";{COLOR_LETTERS[color]}[{coords.to_sgf(move, size)}]"
        if record.comments.get(k):
            node += f"C[{escape_text(record.comments[k])}]"
        line.append(node)
        if len(line) == _WRITE_LINE_MOVES or record.comments.get(k):
            out.append("".join(line))
            line = []
    if line:
        out.append("".join(line))
    return "\n".join(out) + ")\n"


def record_from_game(game, *, setup_black=(), setup_white=(), handicap=0, black_player="",
                     white_player="", rules="", date="", comments=None):
    """An SgfGame for a fastgo.game.Game: its size, komi, moves and result (RE only once the
    game is over). Game does not keep its setup stones: the caller passes them. Resignations
    are not moves: they show in RE."""
    moves = [(int(color), int(move)) for color, move in game.moves if move >= 0]
    result = game.result_string() if game.is_over() else ""
    # Board keeps komi as a C float: 6.3 comes back as 6.300000190734863, hence the rounding.
    komi = round(float(game.komi), 4)
    return SgfGame(size=game.size, komi=komi, rules=rules, black_player=black_player,
                   white_player=white_player, result=result, date=date, handicap=handicap,
                   setup_black=list(setup_black), setup_white=list(setup_white),
                   moves=moves, comments=dict(comments or {}))
