"""The one start of every role (open_spiel's @watcher): run_role loads the config, opens the run
directory, logs to the role's own file in it (and to stderr), installs the stop signals with
the disk-full policy, hands the body one RoleContext and maps how it ends to the exit status. A
config error, or an unusable run directory or log file, is one line and REFUSED (2; no restart
helps); a full disk is one line and fastgo.diskfull.EXIT_STATUS (the supervisor waits for space
or stops the run, cluster.on_disk_full, and counts no crash); any other exception is logged with
its traceback and is 1."""
from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastgo import diskfull
from fastgo.files import NotRegularFile, escaped, printable, reason
from roles.registry import Role
from rundata.config import Config, ConfigError, load_config
from rundata.rundir import RunDir, open_run_dir
from rundata.stop_signals import stop_on_signals

REFUSED = 2                   # a config or start-up problem: one line, no restart helps
FAILED = 1                    # anything else: logged with its traceback
INTERRUPTED = 130             # a SIGINT no handler took (before the stop signals are installed)
MAX_ERROR_CHARS = 2000        # a one-line error longer than this shows its start and its length
CONFIG_POLICY = "config"      # the disk-full policy of cluster.on_disk_full
MAX_LOG_BYTES = 16 << 20      # a role's log file at most; past it the file is renamed LOG.1
                              # (the one before dropped) and a new one started: 32 MB a role
                              # in a run of any length (a 2-core hour writes about 40 KB a role)


def _no_signal():
    return None


@dataclass
class RoleContext:
    """What a role body receives. `config`: the role's validated Config; `run_dir`: the run
    directory, opened (None for the server, which has none); `log`: the logger "fastgo.<role>";
    `stopping()`: None until SIGTERM or SIGINT, then the latest one's name (always None before
    stop_on_signals()); `disk_full`: the disk-full policy the stop signals turn on ("wait" or
    "stop"; None: left off)."""
    role: Role
    args: Any
    config: Config
    run_dir: RunDir | None
    log: logging.Logger
    disk_full: str | None
    stopping: Callable[[], str | None] = _no_signal

    def stop_on_signals(self, then=None):
        """SIGTERM and SIGINT ask the role to stop instead of killing it (`then()`: the role's
        own stop, a server's or recorder's loop), and from now on a full disk is met with the
        role's policy, a wait for space ending on such a signal. Returns `stopping`."""
        self.stopping = stop_on_signals(then)
        if self.disk_full is not None:
            diskfull.configure(self.disk_full, should_stop=self.stopping)
        return self.stopping


def run_role(role: Role, args, body, *, config=None, run_dir=True, worker_id=None,
             log_file=None, signals=True, on_disk_full=CONFIG_POLICY) -> int:
    """Starts `role` and runs body(context) -> exit status under exit_status().

    config(args) -> Config: the role's own reading of its config and options (ConfigError
    naming the key or flag), by default args.config with args.overrides (--set); run_dir: the
    run directory args.run_dir is opened and the log is the role's file in it (a worker's by
    `worker_id`; stderr too unless args.quiet); otherwise log_file(config) -> (path or None,
    the setting naming it); signals: the stop signals (and the disk-full policy) installed now,
    else by the body once it holds what stops (RoleContext.stop_on_signals); on_disk_full:
    CONFIG_POLICY (cluster.on_disk_full), "stop" (an optional step that must never wait for
    space) or None (left off)."""
    def start():
        cfg = (config or _load)(args)
        if run_dir:
            try:
                folder = open_run_dir(args.run_dir)
            except OSError as err:
                if diskfull.disk_full(err) is not None:
                    raise
                raise ConfigError(f"--run-dir {args.run_dir}: {err}") from None
            path, setting, quiet = role.log(folder, worker_id), f"--run-dir {args.run_dir}", args.quiet
        else:
            folder = None
            (path, setting), quiet = log_file(cfg), bool(getattr(args, "quiet", False))
        try:
            setup_logging(path, quiet=quiet)
        except OSError as err:
            if diskfull.disk_full(err) is not None:
                raise
            raise ConfigError(f"{setting}: cannot open {path}: {reason(err)}") from None
        log = logging.getLogger(f"fastgo.{role.value}")
        yield_cores(role, cfg, log)
        policy = cfg.cluster.on_disk_full if on_disk_full == CONFIG_POLICY else on_disk_full
        context = RoleContext(role, args, cfg, folder, log, policy)
        if signals:
            context.stop_on_signals()
        return body(context)
    return exit_status(role, start)


NICER_ROLES = (Role.SERVE, Role.SELFPLAY)     # the roles cluster.selfplay_nice lowers


def yield_cores(role: Role, config: Config, log: logging.Logger) -> int:
    """cluster.selfplay_nice: the server and the self-play workers lower their own priority by
    that much (os.nice) before they start work; other roles, and 0, change nothing. Returns the
    process's niceness after."""
    step = config.cluster.selfplay_nice
    if not step or role not in NICER_ROLES:
        return os.getpriority(os.PRIO_PROCESS, 0)
    try:
        now = os.nice(step)
    except OSError as err:          # a platform or sandbox without it: the run goes on as is
        log.warning("cluster.selfplay_nice = %d: cannot lower this process's priority (%s); "
                    "running at the usual one", step, reason(err))
        return os.getpriority(os.PRIO_PROCESS, 0)
    group = _lower_autogroup(step, log)
    log.info("cluster.selfplay_nice: running at niceness %d%s", now,
             "" if group is None else f" in a scheduling group at niceness {group}")
    return now


AUTOGROUP = "/proc/self/autogroup"


def _lower_autogroup(step: int, log: logging.Logger) -> int | None:
    """Linux's autogroup (kernel.sched_autogroup_enabled): a process's nice value orders it only
    against the processes of its own session, and each role the supervisor starts leads a
    session of its own, so the session's group is lowered by `step` too (its nice value in
    /proc/self/autogroup). Only a session leader does it: a role started from a shell would
    lower the shell's whole session. Returns the group's niceness, None where left alone."""
    if os.getsid(0) != os.getpid():
        return None
    try:
        with open(AUTOGROUP, encoding="ascii") as handle:      # "/autogroup-123 nice 0"
            words = handle.read(200).split()
        now = int(words[words.index("nice") + 1])
    except (OSError, ValueError, IndexError):                 # no autogroup on this kernel
        return None
    target = min(19, now + step)
    try:
        with open(AUTOGROUP, "w", encoding="ascii") as handle:
            handle.write(str(target))
    except OSError as err:
        log.warning("cluster.selfplay_nice: cannot lower this session's scheduling group (%s); "
                    "the process's own niceness orders it only within its session", reason(err))
        return None
    return target


def _load(args) -> Config:
    return load_config(args.config, overrides=getattr(args, "overrides", ()))


def exit_status(name, body) -> int:
    """body() -> exit status, with every way it can end mapped: ConfigError, or NotRegularFile
    (something other than a file where the role reads or writes one): one line, REFUSED; a full
    disk (fastgo.diskfull: a stop, or a write that does not wait): one line,
    diskfull.EXIT_STATUS; KeyboardInterrupt: INTERRUPTED; any other exception: logged with its
    traceback, FAILED."""
    try:
        return int(body() or 0)
    except ConfigError as err:
        print(f"fastgo {name}: {escaped(err, MAX_ERROR_CHARS, one_line=True)}", file=sys.stderr)
        return REFUSED
    except NotRegularFile as err:        # a folder, FIFO or device where a file goes: no restart helps
        print(f"fastgo {name}: {printable(err.filename)}: {reason(err)}", file=sys.stderr)
        return REFUSED
    except diskfull.DiskFullStop as err:
        _say_on_full_disk(f"fastgo {name}: {err}")
        return diskfull.EXIT_STATUS
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as err:
        full = diskfull.disk_full(err)
        if full is not None:
            _say_on_full_disk(f"fastgo {name}: disk full ({diskfull.describe(full)}) writing "
                              f"{printable(full.filename or 'a file')}: stopped")
            return diskfull.EXIT_STATUS
        logging.getLogger(f"fastgo.{name}").exception("fastgo %s failed", name)
        return FAILED


def _say_on_full_disk(line):
    """`line` on stderr, which a supervisor keeps on the disk that is full: a line it cannot
    take is lost, and the streams are pointed at /dev/null so that flushing them at exit
    cannot turn the exit status into another."""
    try:
        print(line, file=sys.stderr, flush=True)
        sys.stdout.flush()
    except OSError:
        null = open(os.devnull, "w")      # noqa: SIM115 (the streams keep it till exit)
        sys.stdout, sys.stderr = null, null


def setup_logging(log_path: str | None, *, quiet: bool = False):
    """The root logger at INFO to `log_path` (appended) and to stderr; `quiet`: the file only
    (stderr still when there is no file). Replaces any handlers set before."""
    handlers: list[logging.Handler] = []
    if log_path:
        handlers.append(_LogFile(log_path))
    if not quiet or not handlers:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


class _LogFile(logging.handlers.RotatingFileHandler):
    """A role's log file, MAX_LOG_BYTES at most and the one before it kept as LOG.1: a line the
    full disk cannot take is lost, with no traceback about it on stderr (which is on the same
    disk under a supervisor)."""

    def __init__(self, path):
        super().__init__(path, maxBytes=MAX_LOG_BYTES, backupCount=1)

    def handleError(self, record):
        if diskfull.disk_full(sys.exc_info()[1]) is None:
            super().handleError(record)
