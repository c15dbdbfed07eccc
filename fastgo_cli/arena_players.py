"""The players of `fastgo arena`: a checkpoint's SearchSide built from the command's per-side
flags (visits, leaves, backend, root search, PUCT's constants), any other player spec through
play.specs. Bad arguments raise ArgumentError (one line, exit status 2)."""
from __future__ import annotations

import dataclasses
import os

from fastgo.run.config import SelfplayConfig
from fastgo.search_settings import SearchSettings

PLAYER_SEARCH = SearchSettings.for_play()     # every player's search unless a flag changes it


def _puct_flag(field, suffix, what):
    """(field, suffix in a player's name, what it is, low, high): the range is the config's
    selfplay.FIELD's, the one place these constants are bounded."""
    meta = {f.name: f for f in dataclasses.fields(SelfplayConfig)}[field].metadata
    return field, suffix, what, meta["min"], meta["max"]


# per-side flags (FLAG-a, FLAG-b) of the players' PUCT constants, by their SearchSettings field
PUCT_FLAGS = {
    "--c-puct": _puct_flag("c_puct", "cpuct", "PUCT's exploration constant"),
    "--fpu": _puct_flag("fpu_reduction", "fpu", "first-play urgency reduction (an unvisited "
                        "move's value: its parent's minus X x sqrt(the visited moves' prior))"),
}


class ArgumentError(ValueError):
    """A bad argument: one line for stderr, exit status 2."""


def checkpoint_side(path, args, seed, which):
    """A SearchSide over the checkpoint's network; ArgumentError when it is not a checkpoint."""
    if not os.path.exists(path):
        from fastgo.player_spec import SPEC_FORMS
        raise ArgumentError(f"{which} {path!r}: no such checkpoint file (players are "
                            f"{SPEC_FORMS})")
    if not os.path.isfile(path):
        raise ArgumentError(f"{which} {path!r}: not a checkpoint file")
    from network.loading import NetworkError, load_network
    from play.network_player import network_side

    backend = args.backend_b if which == "B" else args.backend_a
    try:        # the checkpoint's file is checked before torch is imported
        network = load_network(path, "match", device="cpu", backend=backend)
    except NetworkError as exc:
        raise ArgumentError(f"{which} {path!r}: {one_line(exc)}") from None
    visits = args.visits_b if which == "B" and args.visits_b is not None else args.visits
    visits = 1 if visits is None else visits          # equal time: set by time_network_side
    leaves = args.leaves_b if which == "B" else args.leaves_a
    pace = _pace(args, visits)
    name = f"{os.path.normpath(path)}#{network.step}@{pace}" + (
        f"x{leaves}" if leaves > 1 else "")
    search = args.search_b if which == "B" and args.search_b is not None else args.search_a
    if search != "puct":
        name += f"-{search}"
    changes = search_changes(args, which)
    suffixes = {field: suffix for field, suffix, *_ in PUCT_FLAGS.values()}
    name += "".join(f"-{suffixes[field]}{value:g}" for field, value in changes.items())
    return network_side(network, visits=visits, search=search, leaves=leaves, seed=seed,
                        opening_moves=args.opening_moves, pass_rule=args.pass_rule, name=name,
                        changes=changes)


def search_changes(args, which):
    """The player's search fields that side `which` changes from every player's defaults
    (B takes A's where it gives none), as SearchSettings fields."""
    changes = {}
    for flag, (field, *_) in PUCT_FLAGS.items():
        a, b = puct_flag(args, flag, "a"), puct_flag(args, flag, "b")
        value = b if which == "B" and b is not None else a
        if value is not None and value != getattr(PLAYER_SEARCH, field):
            changes[field] = float(value)
    return changes


def puct_flag(args, flag, side):
    """The value of FLAG-a or FLAG-b (side 'a' or 'b') of a PUCT_FLAGS flag; None: not given."""
    return getattr(args, f"{flag[2:].replace('-', '_')}_{side}")


def _pace(args, visits):
    """A network player's pace in its name: v64 (visits), 1s (a move), 60s-game (a clock)."""
    if args.game_seconds is not None:
        return f"{args.game_seconds:g}s-game"
    return f"v{visits}" if args.move_seconds is None else f"{args.move_seconds:g}s"


def make_side(spec, args, seed, which):
    """A match side from a player spec (play.specs); ArgumentError naming what is wrong."""
    from play.specs import make_side as side_from_spec

    try:        # a reference player (ref:NAME) runs on the side's backend at its own visits
        return side_from_spec(spec, seed=seed, move_seconds=args.move_seconds,
                              backend=args.backend_b if which == "B" else args.backend_a,
                              checkpoint_side=lambda path, seed: checkpoint_side(
                                  path, args, seed, which))
    except ValueError as exc:            # ArgumentError from the loader passes as it is
        if isinstance(exc, ArgumentError):
            raise
        raise ArgumentError(f"{which}: {one_line(exc)}") from None


def one_line(exc):
    """An error's text on one line, shortened (fastgo.files.escaped)."""
    from fastgo.files import escaped
    return escaped(exc, 300, one_line=True)
