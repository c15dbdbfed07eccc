"""Each role's own flags, declared once: the option, how the parser takes it, its help and
default, the range its body checks and the config key it stands for. `fastgo ROLE` adds them to
its parser (fastgo_cli.parser.add_flags), the body checks them (check_flags) and reads the
settings they override (setting_overrides), and the supervisor writes them (Flag.argv in
roles.registry.role_argv). The options every role shares (CONFIG, OVERRIDES, RUN_DIR, QUIET:
--config, --set, --run-dir, --quiet) are declared here too, for fastgo_cli.parser to add and
whoever starts a role to write; the other options many commands share (--seed, --duration,
--json) are fastgo_cli.parser's. Stdlib and fastgo only, the config loaded only once a body
checks: the parser and the supervisor import this at no cost.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastgo.bounds import STEPS, Bounds
from fastgo.variants import Device


@dataclass(frozen=True)
class Flag:
    """One option of a role's command line. `type`, `default`, `metavar`, `action`, `nargs`,
    `choices` and `help` are argparse's; `aliases`: old spellings, accepted and hidden;
    `group`: the heading it is listed under in --help ("": the command's own options);
    `hidden`: left out of --help; `bounds`: the range the body checks a given value against;
    `setting`: the config key (SECTION.KEY) whose value it overrides for this process, its
    bounds the schema's."""
    option: str
    help: str = ""
    type: Callable | None = None
    default: Any = None
    metavar: str | None = None
    action: str | None = None
    nargs: str | None = None
    choices: tuple | None = None
    aliases: tuple[str, ...] = ()
    group: str = ""
    hidden: bool = False
    bounds: Bounds | None = None
    setting: str = ""
    field: str = ""

    @property
    def dest(self) -> str:
        """The field of the parsed options it sets: `field` where given, else the option's
        name (--max-games -> max_games)."""
        return self.field or self.option[2:].replace("-", "_")

    def argv(self, value) -> list[str]:
        """The command-line words that give `value`: none for None, False, "" or [] (the
        option left out), the option alone for True (a switch), the option and each element of
        a list (a repeatable option), else the option and str(value)."""
        if value is None or value is False or (isinstance(value, (str, list, tuple)) and not value):
            return []
        if value is True:
            return [self.option]
        if isinstance(value, (list, tuple)):
            return [word for item in value for word in (self.option, str(item))]
        return [self.option, str(value)]


# -- the options every role's command takes (fastgo_cli.parser adds them; role_argv writes them)

CONFIG = Flag("--config", metavar="NAME|PATH",
              help="a shipped config by name (quickstart, 9x9_cpu, ...) or a TOML file")
OVERRIDES = Flag("--set", field="overrides", action="append", metavar="SECTION.KEY=VALUE",
                 help="override one config value: a TOML value, or plain text for a string "
                      "(selfplay.visits=64, server.device=cpu); repeatable; checked like the file")
RUN_DIR = Flag("--run-dir", metavar="DIR", help="the run directory (created if missing)")
QUIET = Flag("--quiet", action="store_true",
             help="log to the log file only (the run directory's, or --log-file), not to stderr")


def flag_table(*flags: Flag) -> dict[str, Flag]:
    """A role's flags by their dest, in the order --help lists them."""
    return {flag.dest: flag for flag in flags}


def check_flags(args, flags) -> None:
    """ConfigError `OPTION: must be in RANGE, got V` for the first flag of `flags` (Flag
    objects) given a value outside its bounds, or outside the bounds of the setting it
    overrides (`(as SECTION.KEY)`); a flag not given (None) passes."""
    # lazy: the config reads the ladder (numpy); the registry and --help need none of it
    from rundata.config import ConfigError, check_setting_flag

    for flag in flags:
        value = getattr(args, flag.dest, None)
        if value is None:
            continue
        if flag.bounds is not None and value not in flag.bounds:
            raise ConfigError(f"{flag.option}: must be in {flag.bounds}, got {value}")
        if flag.setting:
            check_setting_flag(flag.option, value, flag.setting)


def setting_overrides(args, flags, section: str) -> dict:
    """{KEY: value} of the flags given (not None) that override a setting of [section]."""
    out = {}
    for flag in flags:
        where, _, key = flag.setting.partition(".")
        value = getattr(args, flag.dest, None)
        if where == section and value is not None:
            out[key] = value
    return out


SERVE = flag_table(
    Flag("--make-curve-key", metavar="FILE", hidden=True),      # refused: `fastgo keys new`
    Flag("--bind", metavar="ENDPOINT", aliases=("--endpoint",), setting="server.endpoint",
         help="override server.endpoint, the address to listen on "
              "(tcp://127.0.0.1:* picks a free port)"),
    Flag("--device", choices=Device.choices(), setting="server.device",
         help="override server.device"),
    Flag("--threads", type=int, setting="server.threads", help="override server.threads"),
    Flag("--max-batch", type=int, setting="server.max_batch", help="override server.max_batch"),
    Flag("--max-wait-us", type=int, setting="server.max_wait_us",
         help="override server.max_wait_us"),
    Flag("--checkpoint", action="append", default=[], metavar="SLOT=PATH",
         help="override the watched checkpoint of a slot (repeatable)"),
    Flag("--shards", metavar="DIR",
         help="the run's shard folder: int8 backends are calibrated, and every backend checked "
              "against fp32, on positions of its newest games (default: RUN/shards when a "
              "slot's checkpoint is in RUN/checkpoints/; none: random-game positions)"),
    Flag("--log-file", metavar="FILE", setting="server.log_file",
         help="override server.log_file"),
)

PRETRAINING = "supervised pretraining on SGF game records"      # TRAIN's group of --sgf flags
TRAIN = flag_table(
    Flag("--server", help="server endpoint to publish to (default: server.endpoint)"),
    Flag("--no-publish", action="store_true", help="write checkpoints only"),
    Flag("--steps", type=int, metavar="N", bounds=STEPS,
         help="train N steps from the step the run directory holds, then stop "
              "(default: until stopped; with --sgf: one epoch, or --epochs)"),
    Flag("--sgf", nargs="+", metavar="DIR_OR_FILE", group=PRETRAINING,
         help="train on these SGF files (directories are searched for *.sgf) "
              "instead of self-play shards; games go to RUN/sgf_shards"),
    Flag("--holdout", type=float, default=0.1, group=PRETRAINING,
         bounds=Bounds(0.0, 1.0, high_open=True),
         help="with --sgf: fraction of the games held out for move-prediction accuracy"),
    Flag("--epochs", type=float, group=PRETRAINING, bounds=Bounds(0.0, 1e6, low_open=True),
         help="with --sgf: passes over the training positions "
              "(default 1 when --steps is not given)"),
    Flag("--value", action="store_true", group=PRETRAINING,
         help="with --sgf: train the value head on the results too (and ownership "
              "where the final position gives it)"),
    Flag("--log-every", type=int, metavar="K", group=PRETRAINING,
         bounds=Bounds(1, STEPS.high),
         help="with --sgf: steps between held-out evaluations (default: "
              "trainer.checkpoint_every)"),
)

SELFPLAY = flag_table(
    Flag("--server", help="server endpoint (default: server.endpoint of the config)"),
    Flag("--games-at-once", type=int, metavar="G", setting="selfplay.games",
         help="games this worker plays at the same time (default: selfplay.games)"),
    Flag("--visits", type=int, setting="selfplay.visits",
         help="root visits of a full search (default: selfplay.visits)"),
    Flag("--worker-id", type=int, default=0, bounds=Bounds(0, 1_000_000),
         help="this worker's number (names its shards)"),
    Flag("--max-games", type=int, bounds=Bounds(1, 1 << 40),
         help="stop after this many finished games"),
    Flag("--recorder", help="send finished games to this recorder (tcp://HOST:PORT) "
                            "instead of writing shards (default: selfplay.recorder)"),
)

EVALUATE = flag_table(
    Flag("--once", action="store_true",
         help="evaluate the newest pending checkpoint, then exit (no CPU budget)"),
)

RECORDER = flag_table(
    Flag("--bind", setting="recorder.endpoint",
         help="endpoint to bind, tcp://IP:PORT (PORT * = any free port); "
              "default: recorder.endpoint of the config"),
)
