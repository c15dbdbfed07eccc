"""The one argument parser of the `fastgo` command: every usage error is one line on stderr
(`fastgo CMD: error: ...`) and exit status 2; parent parsers for the options several commands
share; hidden aliases for old spellings; `--config NAME|PATH` and `--set SECTION.KEY=VALUE`.

A command module may define `parents()` -> a tuple of the parent parsers below; fastgo_cli.main
builds `Parser(parents=module.parents())`, calls `module.add_arguments(parser)`, parses, then
`prepare(parser, args)` before `module.run(args)`. Imports only the standard library and
fastgo's pure-Python modules (rundata.config once a parsed command names a config).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys

from fastgo import bounded_json
from fastgo.bounds import KOMI, LEAVES, SEED, Bounds
from fastgo.constants import SIZE_RANGE
from fastgo.variants import PassRule, check_pass_rule
from roles.flags import CONFIG, OVERRIDES, QUIET, RUN_DIR

# A duration: a positive number with an optional unit (none or s: seconds; m, h, d), in
# MIN_DURATION_S..MAX_DURATION_S (every run length: selfplay, train, cluster, compare).
DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)")
UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MIN_DURATION_S = 1.0
MAX_DURATION_S = 365 * 86400.0
MAX_MOVE_SECONDS = 86_400.0       # --move-seconds of any command
MAX_ERROR_CHARS = 500


class DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Help texts end with the default, except where there is none (None, False, [])."""

    def _get_help_string(self, action):
        if action.default in (None, False, [], argparse.SUPPRESS):
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: `PROG: error: MESSAGE` on stderr, exit status 2.
    An unknown option gets the nearest known one suggested. No abbreviations: `--games` is
    never taken for `--games-at-once`."""

    def __init__(self, *args, formatter_class=DefaultsShown, allow_abbrev=False, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, allow_abbrev=allow_abbrev,
                         **kwargs)

    def error(self, message):
        text = " ".join(str(message).split())
        if len(text) > MAX_ERROR_CHARS:
            text = text[:MAX_ERROR_CHARS] + "..."
        sys.stderr.write(f"{self.prog}: error: {text}{self._suggestion(text)}\n")
        sys.exit(2)

    def _suggestion(self, text):
        """' (did you mean --visits?)' for the first unknown option close to a visible one."""
        if not text.startswith("unrecognized arguments:"):
            return ""
        known = [option for action in self._actions if action.help is not argparse.SUPPRESS
                 for option in action.option_strings if option.startswith("--")]
        for word in text.split(":", 1)[1].split():
            if word.startswith("--"):
                close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.7)
                if close:
                    return f" (did you mean {close[0]}?)"
        return ""


def alias(parser, *spellings, dest, **kwargs):
    """Old spellings of an option, accepted but hidden from --help (and suggested never). They
    store into `dest` like the visible option; its default stays the one that counts."""
    parser.add_argument(*spellings, dest=dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS,
                        **kwargs)


def add_flags(parser, flags):
    """A role's flags (roles.flags: {dest: Flag}) as options of `parser`, each under its
    group's heading, its old spellings as hidden aliases."""
    groups = {}
    for flag in flags.values():
        target = parser
        if flag.group:
            if flag.group not in groups:
                groups[flag.group] = parser.add_argument_group(flag.group)
            target = groups[flag.group]
        options = {"type": flag.type, "default": flag.default, "metavar": flag.metavar,
                   "action": flag.action, "nargs": flag.nargs, "choices": flag.choices,
                   "help": argparse.SUPPRESS if flag.hidden else flag.help}
        target.add_argument(flag.option, **{key: value for key, value in options.items()
                                            if value is not None})
        if flag.aliases:
            alias(target, *flag.aliases, dest=flag.dest,
                  **({"type": flag.type} if flag.type else {}))


# --- value types ------------------------------------------------------------------------------

def parse_duration(text: str) -> float:
    """Seconds from '90', '90s', '15m', '2h' or '1.5d', in MIN_DURATION_S..MAX_DURATION_S (1 s
    to 365 days); ValueError naming the text otherwise."""
    match = DURATION.fullmatch(text.strip().lower()) if len(text) <= 32 else None
    if not match:
        raise ValueError(f"{text[:40]!r}: expected a number of seconds, or a number with s, m, "
                         "h or d (e.g. 90s, 15m, 2h)")
    seconds = float(match.group(1)) * UNITS[match.group(2)]
    if not MIN_DURATION_S <= seconds <= MAX_DURATION_S:
        raise ValueError(f"{text!r}: must be at least {MIN_DURATION_S:g} s and at most 365 days")
    return seconds


def duration(text: str) -> float:
    """parse_duration as an argparse type (a usage error names the option)."""
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def option_type(name: str, bounds: Bounds, number=int):
    """An argparse type called `name`: number(text) within `bounds` (fastgo.bounds), a usage
    error naming the range otherwise; text that is no number is argparse's 'invalid NAME
    value'."""
    def parse(text: str):
        value = number(text)
        if value not in bounds:
            raise argparse.ArgumentTypeError(f"must be in {bounds}, got {text[:40]}")
        return value
    parse.__name__ = name
    return parse


komi = option_type("komi", KOMI, float)          # --komi of every command
seed = option_type("seed", SEED)                 # --seed of every command
leaves = option_type("leaves", LEAVES)           # --leaves of every command that searches


def move_seconds(text: str) -> float:
    """Seconds one move may take, in (0, MAX_MOVE_SECONDS]."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: expected a number of seconds") from None
    if not 0 < seconds <= MAX_MOVE_SECONDS:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: must be in (0, {MAX_MOVE_SECONDS:g}] "
                                         "seconds")
    return seconds


def game_seconds(text: str) -> float:
    """A game clock: seconds for all of one side's moves of a game (play.equal_time)."""
    from play.equal_time import check_game_seconds
    try:
        return check_game_seconds(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: expected seconds in (0, 86400]") from None


# --- parent parsers ---------------------------------------------------------------------------

def _parent():
    return Parser(add_help=False)


def config_options(*, required=True, default=None, sections=""):
    """--config NAME|PATH (a shipped config by name, or a TOML file), --set (repeatable) and
    --print-config. `sections` names what the command reads, e.g. '[model], [trainer]'."""
    parent = _parent()
    what = f" ({sections})" if sections else ""
    parent.add_argument(CONFIG.option, required=required, default=default, metavar=CONFIG.metavar,
                        help=CONFIG.help + what)
    parent.add_argument(OVERRIDES.option, dest=OVERRIDES.dest, action=OVERRIDES.action,
                        default=[], metavar=OVERRIDES.metavar, help=OVERRIDES.help)
    parent.add_argument("--print-config", action="store_true",
                        help="print the effective config (the file with --set applied) as JSON "
                             "and exit")
    return parent


def run_dir_options(*, required=True, help=RUN_DIR.help):
    """--run-dir DIR."""
    parent = _parent()
    parent.add_argument(RUN_DIR.option, required=required, metavar=RUN_DIR.metavar, help=help)
    return parent


def size_options(*, default=None, dest="size", help=f"board size, {SIZE_RANGE}"):
    """--size N, with --board and --board-size as hidden aliases."""
    parent = _parent()
    parent.add_argument("--size", type=int, default=default, dest=dest, metavar="N", help=help)
    alias(parent, "--board", "--board-size", dest=dest, type=int)
    return parent


def seed_options(*, default=None, help="random seed", low=SEED.low):
    """--seed N, in fastgo.bounds.SEED (from `low` up, for a command where a smaller seed
    means something else)."""
    parent = _parent()
    option = seed if low == SEED.low else option_type("seed", Bounds(low, SEED.high))
    parent.add_argument("--seed", type=option, default=default, metavar="N", help=help)
    return parent


def duration_options(*, help="stop after this long: 90 (seconds), 90s, 15m, 2h"):
    """--duration D: a run's length (seconds in `args.seconds`)."""
    parent = _parent()
    parent.add_argument("--duration", type=duration, dest="seconds", metavar="D", help=help)
    return parent


def move_seconds_options(*, default=None, help):
    """--move-seconds S: the most seconds one move may take (`help` says what happens then)."""
    parent = _parent()
    parent.add_argument("--move-seconds", type=move_seconds, default=default, metavar="S",
                        help=help)
    return parent


def game_seconds_options(*, help):
    """--game-seconds T: a game clock, T seconds for all of a side's moves of a game."""
    parent = _parent()
    parent.add_argument("--game-seconds", type=game_seconds, metavar="T", help=help)
    return parent


def json_options(what="the results"):
    """--json FILE: also write `what` as JSON to FILE (every command's JSON output)."""
    parent = _parent()
    parent.add_argument("--json", metavar="FILE", help=f"also write {what} as JSON to FILE")
    return parent


def out_options(*, help, default=None, metavar="PATH"):
    """-o/--out PATH: where a command writes what it makes (a file or a folder, as `help` says)."""
    parent = _parent()
    parent.add_argument("-o", "--out", default=default, metavar=metavar, help=help)
    return parent


def logging_options():
    """--quiet: log to the log file only (the run directory's, or a role's --log-file)."""
    parent = _parent()
    parent.add_argument(QUIET.option, action=QUIET.action, help=QUIET.help)
    return parent


# --- after parsing ----------------------------------------------------------------------------

def prepare(parser, args) -> bool:
    """Resolves `args.config` (a shipped name or a path) to a path; with --set or --print-config,
    loads the config with the overrides so that a bad one is a usage error now. Returns True
    when the command is done (--print-config printed the effective config). A --json FILE
    that is a folder, FIFO or device is a usage error before the command does any work."""
    if isinstance(getattr(args, "json", None), str):
        from fastgo.files import check_regular, printable, reason
        try:
            check_regular(args.json)
        except OSError as err:
            parser.error(f"--json {printable(args.json)}: {reason(err)}")
    if not isinstance(getattr(args, "config", None), str):
        return False
    from rundata.config import ConfigError, load_config, resolve_config

    try:
        args.config = str(resolve_config(args.config))
    except ConfigError as err:
        parser.error(str(err))
    overrides = tuple(getattr(args, "overrides", None) or ())
    if not overrides and not getattr(args, "print_config", False):
        return False
    try:
        config = load_config(args.config, overrides=overrides)
    except ConfigError as err:
        parser.error(str(err))
    if getattr(args, "print_config", False):
        from rundata.config import to_dict
        try:
            print(bounded_json.dumps(to_dict(config), indent=2), flush=True)
        except BrokenPipeError:          # `| head`: the reader left; nothing more to say
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return True
    return False


PASS_RULE_METAVAR = "|".join(PassRule.choices())    # --pass-rule's metavar


def pass_rule(text: str) -> PassRule:
    """A pass rule (fastgo.variants.PassRule) as an argparse type; an old spelling is refused
    with the new one named."""
    try:
        return check_pass_rule(text[:40], "pass rule")
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
