"""One line of KataGo's JSON analysis protocol (docs/Analysis_Engine.md) -> a checked query.

`parse_query(raw, limits)` takes the raw bytes of one input line and returns a Parsed: the
error and warning objects to print (KataGo's shapes: {"error"} for a line without an id,
{"id", "field", "error" | "warning"} for a field), and either a Query (positions to analyse,
every turn already replayed and legal), an action ('query_version', 'clear_cache',
'terminate', 'terminate_all', 'query_models'), or nothing when the line was refused. Any
input gives a Parsed, never an exception: wrong types, unknown rules, illegal moves, sizes the
network does not play, too many moves, non-UTF-8 bytes, NaN, deep nesting.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from fastgo import bounded_json, coords
from fastgo.board import BLACK, WHITE
from fastgo.constants import MAX_BOARD_SIZE, MIN_BOARD_SIZE
from fastgo.game import Game, IllegalMoveError
from play.analysis.lines import MAX_LINE_BYTES, MAX_NESTING, nesting
from play.analysis.rules import RulesError, parse_rules, substitution_warning

PERSPECTIVES = ("SIDETOMOVE", "BLACK", "WHITE")
ACTIONS = ("query_version", "query_models", "clear_cache", "terminate", "terminate_all")
MAX_PRIORITY = 0x3FFFFFFFFFFFFFFF
MAX_ID_CHARS = 1000

# Fields KataGo reads (analysis.cpp's expectedKeys); anything else draws KataGo's warning.
SUPPORTED = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize",
             "boardYSize", "analyzeTurns", "maxVisits", "analysisPVLen", "includeOwnership",
             "includeMovesOwnership", "includePolicy", "avoidMoves", "allowMoves",
             "overrideSettings", "reportDuringSearchEvery", "firstReportDuringSearchAfter",
             "priority", "priorities", "action"}
IGNORED = {"whiteHandicapBonus", "rootPolicyTemperature", "rootFpuReductionMax",
           "includeOwnershipStdev", "includeMovesOwnershipStdev", "includePVVisits",
           "includeNoResultValue"}
SETTINGS = {"reportAnalysisWinratesAs", "maxTime", "maxVisits", "wideRootNoise", "analysisPVLen"}


@dataclass(frozen=True)
class Limits:
    """What one engine accepts: the board sizes its network plays, the visits cap (larger
    maxVisits are clamped to it, with a warning), the default visits and PV length."""
    sizes: tuple = (9,)
    max_visits: int = 100_000
    default_visits: int = 500
    pv_len: int = 15
    model_komi: float | None = None     # komi the network learnt at; others draw a warning


@dataclass
class Query:
    id: str
    size: int
    komi: float
    rules: dict
    turns: list                       # [(turn number, Game at that turn)], in turn order
    priorities: dict                  # turn -> priority
    max_visits: int
    max_time: float | None = None
    perspective: str = "SIDETOMOVE"
    pv_len: int = 15
    include_ownership: bool = False
    include_moves_ownership: bool = False
    include_policy: bool = False
    report_every: float | None = None
    first_report_after: float | None = None
    avoid: dict = field(default_factory=dict)    # color -> set of moves banned at the root
    allow: dict = field(default_factory=dict)    # color -> set of the only moves at the root


@dataclass
class Parsed:
    messages: list = field(default_factory=list)   # error / warning objects, in order
    query: Query | None = None
    action: dict | None = None                      # the action line's object, to echo


class Refused(Exception):
    """One field's error: the line is answered with it and nothing else happens."""

    def __init__(self, field_name, message):
        super().__init__(message)
        self.field = field_name


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def _shown(text, limit=200):
    return text if len(text) <= limit else text[:limit] + "..."


def parse_query(raw, limits=Limits()):
    """See the module docstring. `raw`: bytes (or str) of one line, without its newline."""
    out = Parsed()
    if isinstance(raw, (bytes, bytearray)):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            out.messages.append({"error": f"Request line is not valid UTF-8 (byte {exc.start}), "
                                          f"ignoring it"})
            return out
    else:
        text = raw
    deepest, field, ident = nesting(text)
    if deepest > MAX_NESTING:
        message = f"nested deeper than {MAX_NESTING} arrays and objects"
        if ident is not None and len(ident) <= MAX_ID_CHARS:
            out.messages.append({"id": ident, "field": field or "", "error": message})
        else:
            out.messages.append({"error": f"{message} - could not parse input line as json "
                                          f"request: {_shown(text)}"})
        return out
    try:
        value = bounded_json.loads(text, max_depth=MAX_NESTING, max_size=MAX_LINE_BYTES,
                                   parse_constant=_no_constants)
    except ValueError as exc:
        out.messages.append({"error": f"{_shown(str(exc))} - could not parse input line as json "
                                      f"request: {_shown(text)}"})
        return out
    if not isinstance(value, dict):
        out.messages.append({"error": "Request line was valid json but was not an object, "
                                      f"ignoring: {_shown(json.dumps(value))}"})
        return out
    ident = value.get("id")
    if not isinstance(ident, str) or len(ident) > MAX_ID_CHARS:
        out.messages.append({"error": "Request must have a string \"id\" field"
                                      + ("" if not isinstance(ident, str) else
                                         f" of at most {MAX_ID_CHARS} characters")})
        return out
    try:
        if "action" in value:
            out.action = _action(value)
        else:
            out.query = _query(value, ident, limits, out.messages)
    except Refused as exc:
        out.messages.append({"id": ident, "field": exc.field, "error": str(exc)})
        out.query = out.action = None
    return out


def _action(value):
    action = value["action"]
    if action not in ACTIONS:
        raise Refused("action", "'action' field must be 'query_version' or 'query_models' or "
                                "'clear_cache' or 'terminate' or 'terminate_all'")
    if action == "terminate" and not isinstance(value.get("terminateId"), str):
        raise Refused("terminateId", "Requests for a terminate action must have a string "
                                     "\"terminateId\" field")
    if action in ("terminate", "terminate_all") and "turnNumbers" in value:
        turns = value["turnNumbers"]
        if not isinstance(turns, list) or not all(_is_int(t) for t in turns):
            raise Refused("turnNumbers", "If provided, must be an array of integers indicating "
                                         "turns to terminate")
    return value


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _integer(value, name, low, high, message, field=None):
    """value[name] by the one strict reader (coords.json_number): an int in [low, high], else
    Refused(field or name, message)."""
    try:
        return coords.json_number(value[name], low=low, high=high, what=name, integer=True)
    except ValueError:
        raise Refused(field or name, message) from None


def _number(value, name, low, high, message, field=None):
    """value[name] as a float in [low, high] (an int of any length refused by its range, never
    by OverflowError), else Refused(field or name, message)."""
    try:
        return coords.json_number(value[name], low=low, high=high, what=name)
    except ValueError:
        raise Refused(field or name, message) from None


def _boolean(value, name):
    if name not in value:
        return False
    if not isinstance(value[name], bool):
        raise Refused(name, "Must be a boolean")
    return value[name]


def _color(text, name):
    if isinstance(text, str) and text.strip().lower() in ("b", "black"):
        return BLACK
    if isinstance(text, str) and text.strip().lower() in ("w", "white"):
        return WHITE
    raise Refused(name, "Must be \"b\" or \"w\"")


def _vertex(text, size, name, allow_pass):
    if not isinstance(text, str):
        raise Refused(name, "Must be an array of GTP board vertices")
    try:
        move = coords.from_gtp(text, size)
    except ValueError:
        move = None
    if move is None or (move == size * size and not allow_pass):
        raise Refused(name, f"Could not parse board location: {_shown(text, 40)}")
    return move


def _moves(value, name, size, cap, allow_pass):
    pairs = value[name]
    shape = "Must be an array of pairs of the form: [\"b\" or \"w\", GTP board vertex]"
    if not isinstance(pairs, list):
        raise Refused(name, shape)
    if len(pairs) > cap:
        raise Refused(name, f"Must hold at most {cap} entries on a {size}x{size} board")
    out = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
            raise Refused(name, shape)
        try:
            color = _color(pair[0], name)
        except Refused:
            raise Refused(name, f"Could not parse player: {_shown(pair[0], 40)}") from None
        out.append((color, _vertex(pair[1], size, name, allow_pass)))
    return out


def _query(value, ident, limits, messages):
    def warn(name, text):
        messages.append({"id": ident, "field": name, "warning": text})

    sizes_text = " or ".join(str(s) for s in limits.sizes)
    for name in ("boardXSize", "boardYSize"):
        if name not in value:
            raise Refused(name, "Must provide an integer from 2 to 19")
        _integer(value, name, MIN_BOARD_SIZE, MAX_BOARD_SIZE,
                 f"Must provide an integer from {MIN_BOARD_SIZE} to {MAX_BOARD_SIZE}")
    size = value["boardXSize"]
    if value["boardYSize"] != size:
        raise Refused("boardYSize", "Only square boards are supported (boardXSize = boardYSize)")
    if size not in limits.sizes:
        raise Refused("boardXSize", f"The network plays {sizes_text} only, not {size}")
    cap = 2 * size * size                     # the move cap: a game ends there
    stones = _moves(value, "initialStones", size, size * size, False) \
        if "initialStones" in value else []
    if "moves" not in value:
        raise Refused("moves", "Must specify an array of [player,location] pairs")
    moves = _moves(value, "moves", size, cap, True)
    initial = _color(value["initialPlayer"], "initialPlayer") if "initialPlayer" in value else None
    turns_asked = _turns(value, len(moves))
    priorities = _priorities(value, turns_asked)
    if "rules" not in value:
        raise Refused("rules", "Must specify rules string, such as \"chinese\" or "
                               "\"tromp-taylor\", or a JSON object with detailed rules parameters.")
    try:
        rules = parse_rules(value["rules"])
    except RulesError as exc:
        raise Refused("rules", str(exc)) from None
    komi = 7.5
    if "komi" in value:
        message = "Must be a integer or half-integer from -400.0 to 400.0"
        komi = _number(value, "komi", -400.0, 400.0, message)
        if komi * 2 != int(komi * 2):
            raise Refused("komi", message)
    query = Query(id=ident, size=size, komi=komi, rules=rules, turns=[], priorities=priorities,
                  max_visits=limits.default_visits, pv_len=limits.pv_len)
    _settings(value, query, limits, warn)
    if "maxVisits" in value:
        query.max_visits = _integer(value, "maxVisits", 1, 1 << 50,
                                    "Must be an integer from 1 to 2^50")
    if query.max_visits > limits.max_visits:
        warn("maxVisits", f"maxVisits {query.max_visits} is above this engine's cap; "
                          f"using {limits.max_visits}")
        query.max_visits = limits.max_visits
    if "analysisPVLen" in value:
        query.pv_len = _integer(value, "analysisPVLen", 1, 1000, "Must be an integer from 1 to 1000")
    query.include_ownership = _boolean(value, "includeOwnership")
    query.include_moves_ownership = _boolean(value, "includeMovesOwnership")
    query.include_policy = _boolean(value, "includePolicy")
    for name in ("reportDuringSearchEvery", "firstReportDuringSearchAfter"):
        if name in value:
            seconds = _number(value, name, 0.001, 1_000_000.0,
                              "Must be number of seconds from 0.001 to 1000000.0")
            if name == "reportDuringSearchEvery":
                query.report_every = seconds
            else:
                query.first_report_after = seconds
    if query.report_every is not None and query.first_report_after is None:
        query.first_report_after = query.report_every
    _moves_filter(value, query, size, warn)
    for name in sorted(set(value) - SUPPORTED):
        if name in IGNORED:
            warn(name, "Not supported by fastgo, ignored")
        else:
            warn(name, "Unexpected or unused field, do you have a typo?")
    text = substitution_warning(rules)
    if text:
        warn("rules", text)
    if limits.model_komi is not None and komi != limits.model_komi:
        warn("komi", f"The network learnt at komi {limits.model_komi:g}: its win rates are for "
                     f"that komi; scores are shifted to komi {komi:g}")
    query.turns = _replay(size, komi, stones, moves, initial, turns_asked)
    return query


def _turns(value, count):
    if "analyzeTurns" not in value:
        return [count]
    turns = value["analyzeTurns"]
    if not isinstance(turns, list) or not all(_is_int(t) for t in turns):
        raise Refused("analyzeTurns", "Must specify an array of integers indicating turns to analyze")
    for turn in turns:
        if not 0 <= turn <= count:
            raise Refused("analyzeTurns", f"Invalid turn number: {turn}")
    return sorted(set(turns))


def _priorities(value, turns):
    if "priority" in value and "priorities" in value:
        raise Refused("priority", "Cannot specify both priority and priorities")
    if "priority" in value:
        p = _integer(value, "priority", -MAX_PRIORITY, MAX_PRIORITY,
                     "Must be a number between -2^62 and 2^62")
        return {t: p for t in turns}
    if "priorities" in value:
        items = value["priorities"]
        if not isinstance(items, list) or not all(_is_int(p) for p in items):
            raise Refused("priorities", "Must specify an array of integers indicating priorities")
        if "analyzeTurns" not in value:
            raise Refused("priorities", "Can only specify when also specifying analyzeTurns")
        asked = value["analyzeTurns"]
        if len(items) != len(asked):
            raise Refused("priorities", "Must be of matching length to analyzeTurns")
        if any(not -MAX_PRIORITY <= p <= MAX_PRIORITY for p in items):
            raise Refused("priorities", "Invalid priority")
        return dict(zip(asked, items))
    return {t: 0 for t in turns}


def _settings(value, query, limits, warn):
    if "overrideSettings" not in value:
        return
    settings = value["overrideSettings"]
    if not isinstance(settings, dict):
        raise Refused("overrideSettings", "Must be an object")
    unknown = sorted(k for k in settings if k not in SETTINGS)
    if unknown:
        warn("overrideSettings", "Unknown config params: " + _shown(",".join(unknown)))
    bad = "Could not set settings: "
    if "reportAnalysisWinratesAs" in settings:
        side = settings["reportAnalysisWinratesAs"]
        if not isinstance(side, str) or side.upper() not in PERSPECTIVES:
            raise Refused("overrideSettings", bad + "reportAnalysisWinratesAs must be BLACK, "
                                                    "WHITE or SIDETOMOVE")
        query.perspective = side.upper()
    checked = {}
    for name, low, high in (("maxTime", 0.0, 1e20), ("wideRootNoise", 0.0, 5.0)):
        if name in settings:
            checked[name] = _number(settings, name, low, high, bad + f"{name} must be a number "
                                    f"from {low:g} to {high:g}", field="overrideSettings")
    if checked.get("maxTime", 0) > 0:
        query.max_time = checked["maxTime"]
    if checked.get("wideRootNoise", 0) > 0:
        warn("overrideSettings", "wideRootNoise is not applied by fastgo (its search has no "
                                 "root noise in analysis)")
    for name, high in (("maxVisits", 1 << 50), ("analysisPVLen", 1000)):
        if name in settings:
            x = _integer(settings, name, 1, high, bad + f"{name} must be an integer from 1 to "
                         f"{high}", field="overrideSettings")
            if name == "maxVisits":
                query.max_visits = x
            else:
                query.pv_len = x


def _moves_filter(value, query, size, warn):
    has_allow, has_avoid = "allowMoves" in value, "avoidMoves" in value
    if not (has_allow or has_avoid):
        return
    if has_allow and has_avoid:
        raise Refused("allowMoves", "Cannot specify both allowMoves and avoidMoves")
    name = "allowMoves" if has_allow else "avoidMoves"
    entries = value[name]
    shape = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
    if not isinstance(entries, list) or len(entries) > 64:
        raise Refused(name, shape)
    if has_allow and len(entries) > 2:
        raise Refused(name, "Currently allowMoves only allows at most one entry per player")
    deep = False
    target = query.allow if has_allow else query.avoid
    for entry in entries:
        if not isinstance(entry, dict) or not {"player", "moves", "untilDepth"} <= set(entry):
            raise Refused(name, shape)
        color = _color(entry["player"], name)
        locs = entry["moves"]
        if not isinstance(locs, list) or len(locs) > size * size + 1:
            raise Refused(name, "Must be an array of GTP board vertices")
        moves = {_vertex(v, size, name, True) for v in locs}
        depth = entry["untilDepth"]
        if not _is_int(depth) or not 1 <= depth <= 1_000_000_000:
            raise Refused(name, "Must be a positive integer")
        if has_allow and color in target:
            raise Refused(name, "Cannot specify allowMoves more than once for the same player")
        deep = deep or depth > 1
        target.setdefault(color, set()).update(moves)
    if deep:
        warn(name, "fastgo applies avoidMoves / allowMoves at the root only (untilDepth 1)")


def _replay(size, komi, stones, moves, initial, turns_asked):
    """[(turn, Game)] for the asked turns, replaying `moves` after `stones`. A move by the
    colour not to move is played as given (KataGo's rule: the history continues)."""
    game = Game(size=size, komi=komi, superko=True)
    if stones:
        black = [m for c, m in stones if c == BLACK]
        white = [m for c, m in stones if c == WHITE]
        if len(set(black) | set(white)) != len(stones):
            raise Refused("initialStones", "A point is given more than once")
        try:
            game.setup(black=black, white=white)
        except ValueError as exc:
            raise Refused("initialStones", f"Illegal initial stones: {_shown(str(exc))}") from None
    if initial is None:
        initial = moves[0][0] if moves else (WHITE if stones and all(c == BLACK for c, _ in stones)
                                             and len(stones) > 1 else BLACK)
    if game.to_move != initial:
        game.to_move = initial
    wanted = set(turns_asked)
    out = []
    for turn in range(len(moves) + 1):
        if turn in wanted:
            out.append((turn, game.copy()))
        if turn == len(moves):
            break
        color, move = moves[turn]
        if color != game.to_move:
            game.to_move = color
        try:
            game.play(move)
        except IllegalMoveError:
            raise Refused("moves", f"Illegal move {turn}: {coords.to_gtp(move, size)}") from None
    return out
