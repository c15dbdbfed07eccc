"""The two sides of an arena match (play.arena.plan.ArenaPlan): each from its player spec
(play.specs; a checkpoint through play.network_player with its side's PlayerSettings and a name
that says its step, pace and changed search), their names checked for the ratings table, the
board size both play, a GTP engine started (and refused when it cannot start), and, at equal
time, each network side paced by its measured speed (play.equal_time.pace_sides). ArenaError for
anything that keeps the match from being played."""
from __future__ import annotations

import os

from fastgo.player_spec import SPEC_FORMS
from fastgo.variants import Search, Use
from network.loading import NetworkError, match_threads, set_torch_threads
from play.arena.plan import NAME_SUFFIXES, PROG, ArenaError, ArenaPlan, one_line
from play.equal_time import pace_sides
from play.gtp.side import GtpEngineError, GtpSide
from play.match import SearchSide
from play.network_player import load_player_network, make_search_side
from play.player_settings import PLAYER_SEARCH, PlayerSettings
from play.specs import make_spec_side
from rundata.ratings_table import TableError, check_name, table_name


def arena_checkpoint_side(path, plan: ArenaPlan, seed, which):
    """A SearchSide over the checkpoint's network; ArenaError when it is not a checkpoint."""
    if not os.path.exists(path):
        raise ArenaError(f"{which} {path!r}: no such checkpoint file (players are "
                         f"{SPEC_FORMS})")
    if not os.path.isfile(path):
        raise ArenaError(f"{which} {path!r}: not a checkpoint file")
    settings = plan.settings(which)
    try:        # the checkpoint's file is checked before torch is imported
        network = load_player_network(path, Use.MATCH, settings)
    except NetworkError as exc:
        raise ArenaError(f"{which} {path!r}: {one_line(exc)}") from None
    set_torch_threads(match_threads(settings.threads))     # the match's process: one a side
    return make_search_side(network, settings, seed=seed,
                            name=checkpoint_name(path, network.step, plan, settings))


def checkpoint_name(path, step, plan: ArenaPlan, settings: PlayerSettings):
    """PATH#STEP@PACE, then xLEAVES past one leaf, -SEARCH past puct and -cpuctX / -fpuX /
    -vbiasX for the constants it changes from a player's (play.player_settings.PLAYER_SEARCH):
    two sides that play differently never share a name."""
    search = settings.search
    name = f"{os.path.normpath(path)}#{step}@{plan.pace(settings.visits)}" + (
        f"x{search.leaves_per_game}" if search.leaves_per_game > 1 else "")
    if search.search != Search.PUCT:
        name += f"-{search.search}"
    return name + "".join(f"-{suffix}{getattr(search, field):g}"
                          for field, suffix in NAME_SUFFIXES.items()
                          if getattr(search, field) != getattr(PLAYER_SEARCH, field))


def make_arena_side(spec, plan: ArenaPlan, seed, which):
    """A match side from a player spec (play.specs); ArenaError naming what is wrong."""
    try:        # a reference player (ref:NAME) runs on the side's backend at its own visits
        return make_spec_side(spec, seed=seed, move_seconds=plan.move_seconds,
                              backend=plan.settings(which).backend,
                              checkpoint_side=lambda path, seed: arena_checkpoint_side(
                                  path, plan, seed, which))
    except ValueError as exc:            # ArenaError from the loader passes as it is
        if isinstance(exc, ArenaError):
            raise
        raise ArenaError(f"{which}: {one_line(exc)}") from None


def pace_line(which, rate, visits, seconds):
    """The line that says a network side's measured speed (and its visits a move)."""
    line = f"{PROG}: {which} searches {rate:,.0f} visits/s on one thread"
    return line if visits is None else f"{line}: {visits:,} visits a move in {seconds:g} s"


def make_sides(plan: ArenaPlan, opened: list, out=print):
    """(A, B, board size) of the plan's match, each side appended to `opened` as it is made
    (the caller closes them, also when this raises): named, the names checked for the ratings
    table, the size both play, GTP engines started, network sides paced at equal time (a line
    for each to `out`)."""
    for which, spec, offset in (("A", plan.a, 1), ("B", plan.b, 2)):
        opened.append(make_arena_side(spec, plan, (plan.seed + offset) % (1 << 64), which))
    a, b = opened
    for which, side, given in (("A", a, plan.names[0]), ("B", b, plan.names[1])):
        # given, or from the spec (e.g. a long GTP command line: shortened, escaped)
        side.name = given if given else table_name(side.name)
        try:                         # refused now, not once the match has been played
            check_name(side.name, f"--name-{which.lower()}")
        except TableError as exc:
            raise ArenaError(str(exc)) from None
    sizes = {s.board_size for s in opened} - {None}
    if len(sizes) > 1:
        raise ArenaError(f"the networks play different board sizes: {sorted(sizes)}")
    size = plan.size if plan.size is not None else (sizes.pop() if sizes else 9)
    for which, side in (("A", a), ("B", b)):
        net_size = side.board_size
        if net_size is not None and net_size != size:
            raise ArenaError(f"--size {size}: {which} plays {net_size}x{net_size} only")
        if isinstance(side, GtpSide):    # a GTP engine: start it now, refuse it if it cannot
            try:
                side.prepare(plan.at_once, size, plan.komi)
            except GtpEngineError as exc:
                raise ArenaError(f"{which}: {one_line(exc)}") from None
    if plan.move_seconds is not None or plan.game_seconds is not None:
        timed = [(which, side) for which, side in (("A", a), ("B", b))   # not ref:NAME
                 if isinstance(side, SearchSide) and not side.fixed_visits]
        pace_sides(timed, plan.move_seconds, size, plan.komi,
                   report=lambda which, rate, visits: out(
                       pace_line(which, rate, visits, plan.move_seconds)))
    return a, b, size
