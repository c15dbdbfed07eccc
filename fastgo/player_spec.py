"""Player specs: the one grammar that names a player wherever one is named (`fastgo arena` A and
B, `fastgo compare --opponents`, the evaluator's anchors and `evaluator.anchors` in a config,
`fastgo gtp --player`):

    random          uniform over the legal moves that fill no own eye (play.players.RandomPlayer)
    mcts:N          pure MCTS with N random playouts per move, 1..MAX_PLAYOUTS
    gnugo:LEVEL     GNU Go at LEVEL 0..10 as a GTP engine, run as CGOS runs it (gnugo_argv)
    gtp:COMMAND     any GTP engine; COMMAND is split as a shell would (parse_gtp_spec)
    katago:VISITS   KataGo with VISITS a move, 1..MAX_KATAGO_VISITS (play.katago);
                    katago:VISITS:MODEL with the network file MODEL; katago:VISITS,t=T every
                    move sampled at temperature T (0..MAX_TEMPERATURE) from its search's visits
                    (at 1 visit: its raw policy); katago:VISITS,r=P a share P (0..1) of its
                    moves played by `random` instead; both may be given (katago:1,t=4,r=0.1)
    ref:NAME        a reference player shipped with the project: its network at its own fixed
                    visits (fastgo.reference_players; an unknown NAME is refused, naming the
                    known ones)
    anything else   a checkpoint path

This docstring is the grammar's one documentation (play.specs, which plays the specs, points
here). `parse_spec` checks a text and says what it names; play.specs builds a player or a match
side from it. The grammar lives here, in the kernel's layer, so that rundata.config checks
`evaluator.anchors` by the same grammar the arena plays by.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from fastgo.coords import parse_float, parse_int
from fastgo.reference_players import ReferenceIndexError, reference

MAX_PLAYOUTS = 10_000_000      # mcts:N
MAX_KATAGO_VISITS = 10_000_000     # katago:VISITS
MAX_TEMPERATURE = 5.0          # KataGo refuses a chosenMoveTemperature outside 0..5

KINDS = ("random", "mcts", "gnugo", "gtp", "katago", "ref", "checkpoint")
GNUGO_PROGRAM = "gnugo"
GNUGO_LEVELS = (0, 10)
# Our matches are scored by Tromp-Taylor area: every stone left on the board counts as alive.
# Under its default (Japanese) rules GNU Go passes as soon as it judges its opponent's stones
# dead, and those stones then count for the opponent. CGOS, which scores 9x9 games the same way,
# runs GNU Go with --chinese-rules --capture-all-dead: it removes dead stones before it passes.
# --positional-superko: the repetition rule our games are played under.
GNUGO_OPTIONS = ("--chinese-rules", "--capture-all-dead", "--positional-superko")
SPEC_FORMS = ("random, mcts:N, gnugo:LEVEL, gtp:\"COMMAND\", katago:VISITS, ref:NAME or a "
              "checkpoint path")


@dataclass(frozen=True)
class Spec:
    """What a spec names. `kind` one of KINDS; `count` the playouts of mcts:N, the level of
    gnugo:LEVEL or the visits of katago:VISITS or of a reference player (else None); `argv`
    the engine's command line of gnugo and gtp specs (else ()); `path` the checkpoint's path
    (a reference player's file), or katago's network when the spec names one (else None);
    `temperature` katago's move temperature of katago:VISITS,t=T (else None); `random_share`
    the share of katago's moves played at random (r=P, else None); `name` the player's name
    in tables and output (a checkpoint's is its path: the loader may name it otherwise; a
    reference player's is ref:NAME)."""
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


def parse_gtp_spec(spec):
    """'gtp:COMMAND' (COMMAND split as a shell would, quotes allowed) -> argv list.
    ValueError when it is not such a spec or the command is empty."""
    if not isinstance(spec, str) or not spec.lower().startswith("gtp:"):
        raise ValueError(f"not a GTP player spec: {str(spec)[:60]!r} (expected gtp:\"COMMAND\")")
    try:
        argv = shlex.split(spec[4:])
    except ValueError as exc:
        raise ValueError(f"GTP player spec {spec[:60]!r}: {exc}") from None
    if not argv or not argv[0].strip():        # gtp: alone, or gtp:"" (an empty program)
        raise ValueError(f"GTP player spec {spec[:60]!r} has no command")
    return argv


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
    if kind in ("mcts", "gnugo", "gtp", "katago", "ref") and not colon \
            and not os.path.exists(text):
        argument = {"mcts": "N", "gnugo": "LEVEL", "gtp": '"COMMAND"', "katago": "VISITS",
                    "ref": "NAME"}[kind]
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
    if kind == "ref" and colon and not os.path.exists(text):
        try:
            found = reference(rest)
        except ReferenceIndexError as err:
            raise ValueError(f"player spec {_shown(text)}: {err}") from None
        return Spec("ref", text, found.spec, count=found.visits, path=found.path)
    if kind == "gtp" and colon:
        argv = parse_gtp_spec(text)
        return Spec("gtp", text, "gtp:" + shlex.join(argv), argv=tuple(argv))
    if colon and not os.path.exists(text) and not text.endswith(".ckpt"):
        raise ValueError(f"unknown player spec {_shown(text)} (expected {SPEC_FORMS})")
    return Spec("checkpoint", text, os.path.normpath(text), path=text)


def _katago_option(text, option, seen):
    """One `KEY=VALUE` of katago:VISITS,... into `seen` (t: temperature 0..MAX_TEMPERATURE,
    r: random share 0..1), each key once; ValueError of one line naming the spec."""
    key, _, value = option.partition("=")
    key = key.strip().lower()
    ranges = {"t": (MAX_TEMPERATURE, f"KataGo's temperature is katago:VISITS,t=T with T in "
                                     f"0..{MAX_TEMPERATURE:g}"),
              "r": (1.0, "KataGo's share of random moves is katago:VISITS,r=P with P in 0..1")}
    if key not in ranges or key in seen:
        raise ValueError(f"player spec {_shown(text)}: katago:VISITS takes the options t=T "
                         f"(temperature) and r=P (random moves), each at most once")
    high, form = ranges[key]
    try:       # the strict reader: ASCII digits only, no '_', nan or inf (float() takes them)
        seen[key] = parse_float(value.strip(), low=0.0, high=high, what=key)
    except ValueError:
        raise ValueError(f"player spec {_shown(text)}: {form}") from None


def _katago_spec(text, rest):
    """katago:VISITS, katago:VISITS,t=T, katago:VISITS,r=P (or both), each with an optional
    :MODEL."""
    field, colon, model = rest.partition(":")
    visits_text, *options = field.split(",", 3)
    try:
        visits = parse_int(visits_text.strip(), low=1, high=MAX_KATAGO_VISITS, what="visits")
    except ValueError:
        raise ValueError(f"player spec {_shown(text)}: KataGo is katago:VISITS with VISITS in "
                         f"1..{MAX_KATAGO_VISITS:,} (or katago:VISITS,t=T, katago:VISITS,r=P, "
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
