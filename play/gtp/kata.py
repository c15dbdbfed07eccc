"""KataGo's GTP extensions (docs/GTP_Extensions.md) for Lizzie, Sabaki and KaTrain's GTP side:
`kata-analyze`, `kata-genmove_analyze`, `kata-get-rules`, `kata-set-rules`.

`kata-analyze [color] [interval] [key value ...]` streams lines like

    info move E5 visits 40 edgeVisits 40 utility 0.12 winrate 0.56 scoreMean 1.5 scoreLead 1.5
    scoreSelfplay 1.5 prior 0.31 lcb 0.52 order 0 pv E5 D4 ... info move ... rootInfo visits 81
    winrate 0.55 scoreLead 1.4 utility 0.1 ownership 0.1 -0.3 ... (N*N values)

every interval (centiseconds) until the next command, all from the side to move's view. Keys:
`interval`, `minmoves` / `maxmoves` (accepted), `ownership true`, `rootInfo true`, and KataGo's
other true/false keys (accepted; fields fastgo has no figure for, such as ownershipStdev, are
left out). Scores and ownership come from the network's heads over the searched tree
(play.tree_stats); a player without them prints win rates alone. The rules commands speak
play.analysis.rules: fastgo plays one rule set and refuses to set another.
"""
from __future__ import annotations

import time

from fastgo import coords
from fastgo.gtp import GtpError, color_name, int_arg
from play.analysis.rules import FASTGO_RULES, RulesError, differences, parse_rules, rules_json
from play.gtp.analyze import MAX_INTERVAL_CS, leading_color_and_interval
from play.tree_stats import lead_of, tree_stats

FLAGS = ("ownership", "ownershipStdev", "movesOwnership", "movesOwnershipStdev", "rootInfo",
         "pvVisits", "pvEdgeVisits", "noResultValue")


class RawResponse(str):
    """A handler's complete response text (the GTP engine sends it as it is)."""


def parse_kata_args(args):
    """kata-analyze / kata-genmove_analyze arguments -> (color or None, interval in seconds,
    set of the flags set true). GtpError('syntax error') for anything else."""
    words, flags = list(args), set()
    color, interval_cs = leading_color_and_interval(words)
    while words:
        key = words.pop(0)
        if not words:
            raise GtpError("syntax error")
        value = words.pop(0)
        if key == "interval":
            interval_cs = int_arg(value, 0, MAX_INTERVAL_CS)
        elif key in ("minmoves", "maxmoves"):
            int_arg(value, 0, 10_000)
        elif key in FLAGS and value.lower() in ("true", "false"):
            if value.lower() == "true":
                flags.add(key)
        else:
            raise GtpError("syntax error")
    return color, interval_cs / 100.0, flags


def _f(x):
    return f"{x:.6g}"


def kata_line(player, game, flags):
    """One kata-analyze line for the AnalysingPlayer's current search of `game`, or '' when it
    has none. Uses player.analysis_heads() (a play.heads_cache.HeadsCache) where it has them."""
    rows = player.analysis()
    search = player.search
    if not rows or search is None:
        return ""
    size = game.board.size
    heads = player.analysis_heads
    stats = None
    if heads is not None:
        stats = tree_stats(search, 0, heads(), model_komi=player.model_komi,
                           ownership="ownership" in flags)
    parts = []
    for order, row in enumerate(rows):
        win = float(row["winrate"])
        extra = stats.moves.get(row["move"]) if stats is not None else None
        words = ["info move", coords.to_gtp(row["move"], size), "visits", str(row["visits"]),
                 "edgeVisits", str(row["visits"]), "utility", _f(2 * win - 1), "winrate", _f(win)]
        if extra is not None and extra.score is not None:
            words += ["scoreMean", _f(extra.score), "scoreLead", _f(lead_of(extra)),
                      "scoreSelfplay", _f(extra.score)]
        lcb = extra.lcb if extra is not None and extra.lcb is not None else win
        words += ["prior", _f(float(row["prior"])), "lcb", _f(lcb), "order", str(order), "pv"]
        words += [coords.to_gtp(m, size) for m in row["pv"]]
        parts.append(" ".join(words))
    if "rootInfo" in flags:
        win = 0.5 + 0.5 * float(search.root_value(0))
        visits = stats.root_visits if stats is not None else int(search.root_visits(0).sum()) + 1
        words = ["rootInfo visits", str(visits), "winrate", _f(win),
                 "utility", _f(2 * win - 1)]
        if stats is not None and stats.score is not None:
            words += ["scoreMean", _f(stats.score), "scoreLead", _f(lead_of(stats))]
        parts.append(" ".join(words))
    if "ownership" in flags and stats is not None and stats.ownership is not None:
        parts.append("ownership " + " ".join(_f(round(float(v), 6)) for v in stats.ownership))
    return " ".join(parts)


def reporter(flags):
    """The `report(player, game)` of play.gtp.analyze.stream for kata-analyze."""
    return lambda player, game: kata_line(player, game, flags)


def genmove_analyze(engine, args):
    """kata-genmove_analyze: the search of a genmove in steps, a kata-analyze line every
    interval (written at once where the engine has a live output), then 'play VERTEX'."""
    color, interval, flags = parse_kata_args(args)
    if color is None:
        color = engine.game.to_move
    player, game = engine.player, engine.game
    head = "=" + ("" if engine.command_id is None else str(engine.command_id)) + "\n"
    out = engine.live_output
    text = []

    def write(chunk):
        if out is not None:
            out.write(chunk)
            out.flush()
        else:
            text.append(chunk)

    write(head)
    if not game.is_over():
        engine._set_to_move(color)
        last = time.monotonic()
        while player.ponder(game, 32, player.visits):
            if interval > 0 and time.monotonic() - last >= interval:
                line = kata_line(player, game, flags)
                if line:
                    write(line + "\n")
                last = time.monotonic()
        line = kata_line(player, game, flags)
        if line:
            write(line + "\n")
    try:
        move = engine.cmd_genmove([color_name(color)])
    except GtpError as exc:
        move = f"error {exc}"
    write(f"play {move}\n\n")
    return RawResponse("".join(text))


def get_rules(args):
    return rules_json(FASTGO_RULES)


def set_rules(args):
    if not args:
        raise GtpError("syntax error")
    try:
        rules = parse_rules(" ".join(args))
    except RulesError as exc:
        raise GtpError(str(exc)) from None
    fields = differences(rules)
    if fields:
        raise GtpError(f"fastgo plays {rules_json(FASTGO_RULES)} only ({', '.join(fields)} "
                       f"differ)")
    return ""
