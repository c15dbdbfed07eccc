"""Player specs played: what each spec of the grammar (fastgo.player_spec, the grammar's one
owner and its one documentation: parse_spec reads a text and says what it names) becomes here.
`make_player` gives a Player for random and mcts:N (play.players.RandomPlayer, UctPlayer);
`make_spec_side` gives a match side for every spec: a GtpSide (play.gtp.side) for gnugo:LEVEL
and gtp:COMMAND, a KataGoSide (play.katago.side) for katago:VISITS, a reference player's network
at its own visits for ref:NAME (`reference_side`, loaded and played through
play.network_player), and, for a checkpoint, the side the caller's checkpoint_side(path, seed)
builds (the arena and the evaluator each give theirs). `missing` says why a player cannot play
on this machine and the command that adds it.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from fastgo import player_spec
from fastgo.files import escaped
from fastgo.player_spec import Spec, _shown, parse_spec
from fastgo.reference_players import read_reference, reference
from fastgo.variants import Use
from network.checkpoint_file import CheckpointError, check_archive
from network.loading import match_threads, set_torch_threads
from play.gtp.side import GtpSide
from play.katago.locate import KataGoMissing, locate
from play.katago.side import KataGoSide
from play.network_player import load_player_network, make_search_side
from play.player_settings import PlayerSettings
from play.players import RandomPlayer, UctPlayer


def gnugo_installed(program: str | None = None) -> str | None:
    """The path of GNU Go's program (on PATH, or Debian's /usr/games), or None."""
    program = program or player_spec.GNUGO_PROGRAM
    found = shutil.which(program)
    if found:
        return found
    games = os.path.join("/usr/games", program)
    return games if os.sep not in program and os.access(games, os.X_OK) else None


def katago_missing(spec: Spec, env=None) -> str:
    """Why KataGo cannot play the katago spec `spec` here (its program or network not found,
    play.katago.locate), or '' when it can."""
    try:
        locate(spec.path, env)
    except KataGoMissing as err:
        return str(err)
    return ""


REFERENCE_OPENING_MOVES = 2       # a reference player samples its first moves by visits, as
                                  # the arena's and the evaluator's networks do


@dataclass(frozen=True)
class Missing:
    """Why a player cannot be played on this machine: `what` is missing (GNU Go, KataGo, a
    checkpoint), `why` in one line, `command` the one command that adds it ('' when none
    does)."""
    what: str
    why: str
    command: str = ""


GNUGO_COMMAND = "apt-get install gnugo"
KATAGO_COMMAND = "fastgo katago fetch"


def missing(spec: Spec, env=None) -> Missing | None:
    """What keeps `spec` from playing here (a gnugo spec without GNU Go, a katago spec
    without KataGo or its network, a checkpoint whose file is not there, a reference player
    whose file cannot be read from its folder or is not as its index says: reference_bytes,
    its one line naming the file and what is wrong), or None when nothing does. A reference
    player's network is not loaded here (no torch): that its board size is the index's is
    checked where it is loaded (reference_side, check_reference_size)."""
    if spec.kind == "gnugo" and gnugo_installed(spec.argv[0]) is None:
        return Missing("GNU Go", "GNU Go is not installed (on PATH or in /usr/games)",
                       GNUGO_COMMAND)
    if spec.kind == "katago":
        why = katago_missing(spec, env)
        if why:
            return Missing("KataGo", why, "" if spec.path else KATAGO_COMMAND)
    if spec.kind == "checkpoint":
        assert spec.path is not None        # parse_spec: a checkpoint's path is its text
        if not os.path.isfile(spec.path):
            return Missing("checkpoint", "no such checkpoint file")
    if spec.kind == "ref":
        try:
            reference_bytes(spec)
        except ValueError as err:
            return Missing("reference player", escaped(err, 500, one_line=True))
    return None


def reference_bytes(spec: Spec):
    """(fastgo.reference_players.Reference, the bytes of its file) of reference player `spec`,
    without torch: the file read from the index's folder only (read_reference: a regular
    file, no symbolic link, bounded), its sha256 checked against the index, then its archive
    as a checkpoint's (network.checkpoint_file.check_archive). ValueError of one line naming
    the file and what is wrong (an unreadable index too)."""
    ref = reference(spec.name.partition(":")[2])
    data = read_reference(ref)
    try:
        check_archive(ref.path, data)
    except CheckpointError as err:
        raise ValueError(f"reference player {ref.spec}: "
                         f"{escaped(err, 300, one_line=True)}") from None
    return ref, data


def check_reference_size(ref, size: int) -> None:
    """ValueError of one line unless reference player `ref`'s network (loaded: `size` its
    board size) plays the board size its index says."""
    if size != ref.board_size:
        raise ValueError(f"reference player {ref.spec}: {escaped(ref.path)} holds a network "
                         f"of {size}x{size}, the index says {ref.board_size}x{ref.board_size}")


def check_reference(spec: Spec, size: int | None = None):
    """The Reference of reference player `spec` when it can play here, checked in full before
    hours are spent on it: reference_bytes, its index's board size `size` (None: any), and its
    network read from those bytes (network.checkpoint.load_checkpoint, torch) of that size.
    ValueError of one line naming the file and what is wrong."""
    ref, data = reference_bytes(spec)
    if size is not None and size != ref.board_size:
        raise ValueError(f"reference player {ref.spec} plays {ref.board_size}x{ref.board_size} "
                         f"(its index), not {size}x{size}")
    from network.checkpoint import load_checkpoint

    try:
        checkpoint = load_checkpoint(ref.path, data=data)
    except CheckpointError as err:
        raise ValueError(f"reference player {ref.spec}: "
                         f"{escaped(err, 300, one_line=True)}") from None
    check_reference_size(ref, checkpoint.config.board_size)
    return ref


def reference_side(spec: Spec, *, seed=0, backend=None, capacity=None):
    """The match side of reference player `spec` (kind "ref"): its file read from its folder
    and its sha256 checked against the index (reference_bytes), loaded through
    play.network_player.load_player_network (the usual checkpoint checks and canaries) on
    `backend`, sized for `capacity` (None: a player's defaults, play.player_settings), and
    played with a player's search at the index's visits with REFERENCE_OPENING_MOVES, named
    ref:NAME. Its `fixed_visits` is True: equal-time modes leave its visits alone. ValueError
    of one line when the file is missing, damaged or replaced."""
    ref, data = reference_bytes(spec)
    runs_on = {key: value for key, value in (("backend", backend), ("capacity", capacity))
               if value is not None}
    settings = PlayerSettings(visits=ref.visits, opening_moves=REFERENCE_OPENING_MOVES,
                              **runs_on)
    network = load_player_network(ref.path, Use.MATCH, settings, data=data, what=ref.spec)
    set_torch_threads(match_threads(settings.threads))     # a match's process: one a side
    check_reference_size(ref, network.config.board_size)
    return make_search_side(network, settings, seed=seed, name=ref.spec, fixed_visits=True)


def make_player(text, *, seed=None):
    """A Player (genmove(game)) from 'random' or 'mcts:N'; ValueError naming the spec for any
    other text (GTP engines and checkpoints are match sides: make_spec_side)."""
    spec = parse_spec(text)
    if spec.kind == "random":
        return RandomPlayer(seed=seed)
    if spec.kind == "mcts":
        return UctPlayer(playouts=spec.count, seed=seed)
    raise ValueError(f"unknown player spec {_shown(spec.text)}: expected 'random' or 'mcts:N' "
                     "(N playouts per move)")


def make_spec_side(text, *, seed=None, checkpoint_side=None, move_timeout=None,
                   start_timeout=None, move_seconds=None, backend=None, capacity=None):
    """A match side (play.match.play_match) for the spec `text` (or a Spec): a Player for random
    and mcts:N, a GtpSide (started by its first prepare) for gnugo:LEVEL, gtp:COMMAND and
    katago:VISITS (play.katago.side.KataGoSide: KataGoMissing, a ValueError, when KataGo or
    its network is not found), reference_side for ref:NAME (on `backend`, sized for
    `capacity` positions), and checkpoint_side(path, seed) for a checkpoint. ValueError of
    one line for a malformed spec, or a checkpoint where no checkpoint_side is given.
    move_seconds: a GTP engine's time a move (GtpSide; the equal-time mode of
    play.equal_time)."""
    spec = text if isinstance(text, Spec) else parse_spec(text)
    if spec.kind in ("random", "mcts"):
        return make_player(spec.text, seed=seed)
    if spec.kind == "ref":
        return reference_side(spec, seed=0 if seed is None else seed, backend=backend,
                              capacity=capacity)
    if spec.kind in ("gnugo", "gtp", "katago"):
        options = {key: value for key, value in (("move_timeout", move_timeout),
                                                 ("start_timeout", start_timeout),
                                                 ("move_seconds", move_seconds))
                   if value is not None}
        if spec.kind == "katago":
            return KataGoSide(spec.count, model=spec.path, seed=seed, name=spec.name,
                              temperature=spec.temperature, random_share=spec.random_share,
                              **options)
        return GtpSide(list(spec.argv), name=spec.name, **options)
    if checkpoint_side is None:
        raise ValueError(f"player spec {_shown(spec.text)}: a checkpoint cannot be played here "
                         "(expected random, mcts:N, gnugo:LEVEL, gtp:\"COMMAND\", katago:VISITS or "
                         "ref:NAME)")
    return checkpoint_side(spec.path, seed)
