"""Player specs: the one grammar that names a player wherever one is named (`fastgo arena` A and
B, `fastgo compare --opponents`, the evaluator's anchors, `fastgo gtp --player`):

    random          uniform over the legal moves that fill no own eye (players.RandomPlayer)
    mcts:N          pure MCTS with N random playouts per move, 1..MAX_PLAYOUTS (players.UctPlayer)
    gnugo:LEVEL     GNU Go at LEVEL 0..10 as a GTP engine, run as CGOS runs it (gnugo_argv)
    gtp:COMMAND     any GTP engine; COMMAND is split as a shell would (gtp_side.GtpSide)
    katago:VISITS   KataGo with VISITS a move, 1..10,000,000 (play.katago); katago:VISITS:MODEL
                    with the network file MODEL instead of the one play.katago.locate finds;
                    katago:VISITS,t=T every move sampled at temperature T (0..5) from its
                    search's visits (at 1 visit: its raw policy); katago:VISITS,r=P a share P
                    (0..1) of its moves played by `random` instead; both may be given
                    (katago:1,t=4,r=0.1): the ladder's weaker rungs
    anything else   a checkpoint path, played by the side the caller's checkpoint_side(path,
                    seed) builds

`parse_spec` (fastgo.player_spec, the grammar's one owner) checks a text and says what it names;
`make_side` builds a match side from it. This package never imports torch: the network behind a
checkpoint comes from the caller's function.
"""
from __future__ import annotations

import os
import shutil

import fastgo.player_spec as grammar
from fastgo.player_spec import Spec, _shown, parse_spec
from play.gtp.side import GtpSide
from play.players import RandomPlayer, UctPlayer


def gnugo_installed(program: str | None = None) -> str | None:
    """The path of GNU Go's program (on PATH, or Debian's /usr/games), or None."""
    program = program or grammar.GNUGO_PROGRAM
    found = shutil.which(program)
    if found:
        return found
    games = os.path.join("/usr/games", program)
    return games if os.sep not in program and os.access(games, os.X_OK) else None


def katago_missing(spec: Spec, env=None) -> str:
    """Why KataGo cannot play the katago spec `spec` here (its program or network not found,
    play.katago.locate), or '' when it can."""
    from play.katago.locate import KataGoMissing, locate

    try:
        locate(spec.path, env)
    except KataGoMissing as err:
        return str(err)
    return ""


def make_player(text, *, seed=None):
    """A Player (genmove(game)) from 'random' or 'mcts:N'; ValueError naming the spec for any
    other text (GTP engines and checkpoints are match sides: make_side)."""
    spec = parse_spec(text)
    if spec.kind == "random":
        return RandomPlayer(seed=seed)
    if spec.kind == "mcts":
        return UctPlayer(playouts=spec.count, seed=seed)
    raise ValueError(f"unknown player spec {_shown(spec.text)}: expected 'random' or 'mcts:N' "
                     "(N playouts per move)")


def make_side(text, *, seed=None, checkpoint_side=None, move_timeout=None, start_timeout=None,
              move_seconds=None):
    """A match side (play.match.play_match) for the spec `text` (or a Spec): a Player for random
    and mcts:N, a GtpSide (started by its first prepare) for gnugo:LEVEL, gtp:COMMAND and
    katago:VISITS (play.katago.side.KataGoSide: KataGoMissing, a ValueError, when KataGo or
    its network is not found), and
    checkpoint_side(path, seed) for a checkpoint. ValueError of one line for a malformed spec, or
    a checkpoint where no checkpoint_side is given. move_seconds: a GTP engine's time a move
    (GtpSide; the equal-time mode of play.equal_time)."""
    spec = text if isinstance(text, Spec) else parse_spec(text)
    if spec.kind in ("random", "mcts"):
        return make_player(spec.text, seed=seed)
    if spec.kind in ("gnugo", "gtp", "katago"):
        options = {key: value for key, value in (("move_timeout", move_timeout),
                                                 ("start_timeout", start_timeout),
                                                 ("move_seconds", move_seconds))
                   if value is not None}
        if spec.kind == "katago":
            from play.katago.side import KataGoSide
            return KataGoSide(spec.count, model=spec.path, seed=seed, name=spec.name,
                              temperature=spec.temperature, random_share=spec.random_share,
                              **options)
        return GtpSide(list(spec.argv), name=spec.name, **options)
    if checkpoint_side is None:
        raise ValueError(f"player spec {_shown(spec.text)}: a checkpoint cannot be played here "
                         "(expected random, mcts:N, gnugo:LEVEL, gtp:\"COMMAND\" or katago:VISITS)")
    return checkpoint_side(spec.path, seed)
