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

`parse_spec` checks a text and says what it names; `make_side` builds a match side from it. This
package never imports torch: the network behind a checkpoint comes from the caller's function.
"""
from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass

from fastgo.coords import parse_int
from play.gtp.side import GtpSide, parse_gtp_spec
from play.players import MAX_PLAYOUTS, RandomPlayer, UctPlayer

KINDS = ("random", "mcts", "gnugo", "gtp", "katago", "checkpoint")
GNUGO_PROGRAM = "gnugo"
GNUGO_LEVELS = (0, 10)
# Our matches are scored by Tromp-Taylor area: every stone left on the board counts as alive.
# Under its default (Japanese) rules GNU Go passes as soon as it judges its opponent's stones
# dead, and those stones then count for the opponent. CGOS, which scores 9x9 games the same way,
# runs GNU Go with --chinese-rules --capture-all-dead: it removes dead stones before it passes.
# --positional-superko: the repetition rule our games are played under.
GNUGO_OPTIONS = ("--chinese-rules", "--capture-all-dead", "--positional-superko")
SPEC_FORMS = "random, mcts:N, gnugo:LEVEL, gtp:\"COMMAND\", katago:VISITS or a checkpoint path"


@dataclass(frozen=True)
class Spec:
    """What a spec names. `kind` one of KINDS; `count` the playouts of mcts:N, the level of
    gnugo:LEVEL or the visits of katago:VISITS (else None); `argv` the engine's command line of
    gnugo and gtp specs (else ()); `path` the checkpoint's path, or katago's network when the
    spec names one (else None); `temperature` katago's move temperature of katago:VISITS,t=T
    (else None); `random_share` the share of katago's moves played at random (r=P, else
    None); `name` the player's name in tables and output (a checkpoint's is its path:
    the loader may name it otherwise)."""
    kind: str
    text: str
    name: str
    count: int | None = None
    argv: tuple = ()
    path: str | None = None
    temperature: float | None = None
    random_share: float | None = None


def _shown(text, limit=60):
    return repr(text[:limit])


def gnugo_argv(level: int, program: str | None = None) -> list:
    """GNU Go's GTP command line at `level` with CGOS's options (GNUGO_OPTIONS)."""
    return [program or GNUGO_PROGRAM, "--mode", "gtp", "--level", str(int(level)),
            *GNUGO_OPTIONS]


def gnugo_installed(program: str | None = None) -> str | None:
    """The path of GNU Go's program (on PATH, or Debian's /usr/games), or None."""
    program = program or GNUGO_PROGRAM
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


def parse_spec(text) -> Spec:
    """The Spec of `text` (surrounding blanks ignored, the kind case-insensitive); ValueError
    of one line naming the spec for a malformed one. A text that names no built-in kind is a
    checkpoint path: only a text with a colon that is not a file and does not end in .ckpt
    is refused as an unknown spec."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"empty player spec (expected {SPEC_FORMS})"
                         if isinstance(text, str) else f"player spec must be a string, not "
                         f"{str(text)[:40]!r}")
    text = text.strip()
    kind, colon, rest = text.partition(":")
    kind = kind.lower()
    if kind == "random":
        if colon:
            raise ValueError(f"player spec {_shown(text)}: random takes no argument")
        return Spec("random", text, "random")
    if kind in ("mcts", "gnugo", "gtp", "katago") and not colon and not os.path.exists(text):
        argument = {"mcts": "N", "gnugo": "LEVEL", "gtp": '"COMMAND"', "katago": "VISITS"}[kind]
        raise ValueError(f"unknown player spec {_shown(text)}: expected {kind}:{argument}")
    if kind == "mcts":
        try:
            playouts = parse_int(rest.strip(), low=1, high=MAX_PLAYOUTS, what="playouts")
        except ValueError:
            raise ValueError(f"player spec {_shown(text)}: playouts must be an integer in "
                             f"1..{MAX_PLAYOUTS} (mcts:N)") from None
        return Spec("mcts", text, f"mcts:{playouts}", count=playouts)
    if kind == "gnugo":
        low, high = GNUGO_LEVELS
        try:
            level = parse_int(rest.strip(), low=low, high=high, what="level")
        except ValueError:
            raise ValueError(f"player spec {_shown(text)}: GNU Go is gnugo:LEVEL with LEVEL in "
                             f"{low}..{high}") from None
        return Spec("gnugo", text, f"gnugo:{level}", count=level, argv=tuple(gnugo_argv(level)))
    if kind == "katago":
        return _katago_spec(text, rest)
    if kind == "gtp" and colon:
        argv = parse_gtp_spec(text)
        return Spec("gtp", text, "gtp:" + shlex.join(argv), argv=tuple(argv))
    if colon and not os.path.exists(text) and not text.endswith(".ckpt"):
        raise ValueError(f"unknown player spec {_shown(text)} (expected {SPEC_FORMS})")
    return Spec("checkpoint", text, os.path.normpath(text), path=text)


def _katago_option(text, option, seen):
    """One `KEY=VALUE` of katago:VISITS,... into `seen` (t: temperature 0..MAX_TEMPERATURE,
    r: random share 0..1), each key once; ValueError of one line naming the spec."""
    from play.katago.config import MAX_TEMPERATURE

    key, _, value = option.partition("=")
    key = key.strip().lower()
    ranges = {"t": (MAX_TEMPERATURE, f"KataGo's temperature is katago:VISITS,t=T with T in "
                                     f"0..{MAX_TEMPERATURE:g}"),
              "r": (1.0, "KataGo's share of random moves is katago:VISITS,r=P with P in 0..1")}
    if key not in ranges or key in seen:
        raise ValueError(f"player spec {_shown(text)}: katago:VISITS takes the options t=T "
                         f"(temperature) and r=P (random moves), each at most once")
    high, form = ranges[key]
    try:
        if len(value) > 20:
            raise ValueError
        number = float(value)
        if not 0.0 <= number <= high:        # also refuses nan
            raise ValueError
    except ValueError:
        raise ValueError(f"player spec {_shown(text)}: {form}") from None
    seen[key] = number


def _katago_spec(text, rest):
    """katago:VISITS, katago:VISITS,t=T, katago:VISITS,r=P (or both), each with an optional
    :MODEL."""
    from play.katago.config import MAX_VISITS

    field, colon, model = rest.partition(":")
    visits_text, *options = field.split(",", 3)
    try:
        visits = parse_int(visits_text.strip(), low=1, high=MAX_VISITS, what="visits")
    except ValueError:
        raise ValueError(f"player spec {_shown(text)}: KataGo is katago:VISITS with VISITS in "
                         f"1..{MAX_VISITS:,} (or katago:VISITS,t=T, katago:VISITS,r=P, "
                         f"katago:VISITS:MODEL)") from None
    seen = {}
    for option in options:
        _katago_option(text, option, seen)
    if colon and not model.strip():
        raise ValueError(f"player spec {_shown(text)}: katago:VISITS:MODEL names no network")
    model = model.strip() or None
    temperature, share = seen.get("t"), seen.get("r")
    name = (f"katago:{visits}" + ("" if temperature is None else f",t={temperature:g}")
            + ("" if share is None else f",r={share:g}")
            + (f":{os.path.basename(model)}" if model else ""))
    return Spec("katago", text, name, count=visits, path=model, temperature=temperature,
                random_share=share)


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
