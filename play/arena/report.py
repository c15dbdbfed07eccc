"""What an arena match leaves: its summary (the --json file's fields), the report's text, the
--json file, the row appended to the ratings table (rundata.ratings_table) and every game as an SGF
file. Each file is written whole or not at all (fastgo.files.atomic_write)."""
from __future__ import annotations

import os

from fastgo import bounded_json
from fastgo.files import atomic_write
from fastgo.sgf import record_from_game, write_sgf
from play.arena.plan import PROG, ArenaPlan, one_line
from play.gtp.side import GtpSide
from play.match import SearchSide
from rundata import ratings_table


def summary(result, sprt=None):
    """The JSON summary of a MatchResult (and the SPRT state when one ran)."""
    low, high = result.wilson()
    elo, elo_low, elo_high = result.elo()
    out = {
        "a": result.name_a, "b": result.name_b,
        "games": result.games, "wins_a": result.wins_a, "wins_b": result.wins_b,
        "draws": result.draws,
        "win_rate_a": round(result.score_a, 6), "win_rate_ci": [round(low, 6), round(high, 6)],
        "elo_diff": round(elo, 2), "elo_ci": [round(elo_low, 2), round(elo_high, 2)],
        "games_a_black": result.games_a_black,
        "wins_a_black": result.wins_a_black, "wins_a_white": result.wins_a_white,
        "wins_b_black": result.wins_b_black, "wins_b_white": result.wins_b_white,
        "forfeits": list(result.forfeits),
    }
    for which in ("a", "b"):
        seconds, visits = result.per_move(which)
        out[f"seconds_per_move_{which}"] = None if seconds is None else round(seconds, 4)
        out[f"visits_per_move_{which}"] = None if visits is None else round(visits, 1)
        charged = result.clock_per_move(which)
        out[f"clock_per_move_{which}"] = None if charged is None else round(charged, 4)
    if sprt is not None:
        out["sprt"] = sprt
    return out


def report_lines(result, sprt):
    """The report of a MatchResult (and the SPRT state) as lines of text."""
    s = summary(result, sprt)
    a_white = result.games - result.games_a_black
    lines = [f"games: {result.games}",
             f"A {result.name_a}: {result.wins_a} wins ({result.wins_a_black} of "
             f"{result.games_a_black} as Black, {result.wins_a_white} of {a_white} as White)",
             f"B {result.name_b}: {result.wins_b} wins ({result.wins_b_black} of {a_white} as "
             f"Black, {result.wins_b_white} of {result.games_a_black} as White)"]
    if result.draws:
        lines.append(f"draws: {result.draws}")
    low, high = s["win_rate_ci"]
    lines.append(f"win rate of A: {s['win_rate_a']:.3f} (95% interval {low:.3f} .. {high:.3f})")
    elo_low, elo_high = s["elo_ci"]
    elo, elo_low, elo_high = (round(v) + 0 for v in (s["elo_diff"], elo_low, elo_high))
    lines.append(f"Elo of A - B: {elo:+d} (95% interval {elo_low:+d} .. {elo_high:+d})")
    for which in ("a", "b"):
        seconds, visits = result.per_move(which)
        if seconds is not None:
            charged = result.clock_per_move(which)
            lines.append(f"time per move {which.upper()}: {seconds:.3f} s"
                         + (f", {visits:,.0f} visits" if visits is not None else "")
                         + (f", {charged:.3f} s on its game clock" if charged is not None
                            else ""))
    if result.forfeits:
        by_player = {}
        for f in result.forfeits:
            by_player.setdefault(f["player"], []).append(f)
        for player, items in by_player.items():
            lines.append(f"forfeits: {player} lost {len(items)} game(s) by fault; the match "
                         "went on:")
            lines.extend(f"  game {f['game']} ({f['color']}, move {f['move']}): {f['reason']}"
                         for f in items)
    if sprt is not None:
        verdict = {"H1": f"H1 accepted: A - B = {sprt['elo1']:g} Elo rather than {sprt['elo0']:g}",
                   "H0": f"H0 accepted: A - B = {sprt['elo0']:g} Elo rather than {sprt['elo1']:g}",
                   None: "no decision"}[sprt["accepted"]]
        lines.append(f"SPRT {sprt['elo0']:g},{sprt['elo1']:g}: LLR {sprt['llr']:+.3f} (bounds "
                     f"{sprt['lower']:+.3f} .. {sprt['upper']:+.3f}) after {result.games} games: "
                     f"{verdict}")
    return lines


def _write_atomic(path, text):
    atomic_write(path, lambda handle: handle.write(text), binary=False)


def write_sgfs(result, directory, stamp):
    """The games of `result` (records kept) as DIR/arena-STAMP-NNNN.sgf, NNNN each game's
    number in the match; a game lost by forfeit has RE[B+F] / RE[W+F] and the reason in its
    root comment."""
    forfeits = {f["game"]: f for f in result.forfeits}
    for k, game in enumerate(result.records):
        number = result.numbers[k]
        a_black = result.a_black[k]
        black, white = (result.name_a, result.name_b) if a_black else (result.name_b, result.name_a)
        comment = f"fastgo arena game {number}: A {result.name_a} vs B {result.name_b}"
        record = record_from_game(game, black_player=black, white_player=white,
                                  rules="Tromp-Taylor (positional superko)")
        fault = forfeits.get(number)
        if fault is not None:
            record.result = ("W" if fault["color"] == "B" else "B") + "+F"
            comment += f"; {fault['player']} forfeits: {fault['reason']}"
        record.comments[0] = comment
        _write_atomic(os.path.join(directory, f"arena-{stamp}-{number:04d}.sgf"), write_sgf(record))


def report(plan: ArenaPlan, a, b, size, total, sprt, interrupted, out=print, err=print):
    """Says the report (`out`), writes the --json file and appends to the ratings table (a
    failure to append: one line to `err`, status 1); the exit status (130 when interrupted)."""
    if sprt is not None:
        sprt["llr"] = round(sprt["llr"], 6)
    for line in report_lines(total, sprt):
        out(line)
    for side in (a, b):
        if isinstance(side, GtpSide) and side.restarts:
            out(f"engine restarts: {side.name}: {side.restarts}")
    status = 130 if interrupted else 0
    if plan.json_path is not None:
        data = summary(total, sprt)
        data.update(size=size, komi=plan.komi, visits=plan.visits,
                    move_seconds=plan.move_seconds, game_seconds=plan.game_seconds,
                    interrupted=interrupted)
        _write_atomic(plan.json_path, bounded_json.dumps(data, indent=2) + "\n")
    if plan.table is not None and total.games > 0:
        try:
            ratings_table.append_result(plan.table, total.name_a, total.name_b, total.wins_a,
                                        total.wins_b, total.draws,
                                        **table_meta(plan, a, b, size, total, sprt, interrupted))
            out(f"appended to the ratings table {plan.table}")
        except (OSError, ValueError) as exc:       # ValueError: ratings_table.TableError
            err(f"{PROG}: cannot append to the ratings table {plan.table}: {one_line(exc)}")
            status = status or 1
    return status


def table_meta(plan: ArenaPlan, a, b, size, total, sprt, interrupted):
    """The ratings table row's fields besides the players and the counts: size, komi, the source,
    the pace (visits only where a side plays at the match's visits), forfeits, SPRT, interrupted."""
    meta = {"size": size, "komi": plan.komi, "source": "arena"}
    if plan.move_seconds is not None:
        meta["move_seconds"] = plan.move_seconds
    elif plan.game_seconds is not None:
        meta["game_seconds"] = plan.game_seconds
    elif any(isinstance(side, SearchSide) and not side.fixed_visits
             for side in (a, b)):                   # a reference player's are its own
        meta["visits"] = plan.visits
    if total.forfeits:
        meta["forfeits"] = len(total.forfeits)
    if sprt is not None:
        meta["sprt"] = [sprt["elo0"], sprt["elo1"], sprt["accepted"]]
    if interrupted:
        meta["interrupted"] = True
    return meta
