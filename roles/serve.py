"""The server role (`fastgo serve`): the batching inference server on its own. Says
Role.SERVE.ready and its endpoint on stdout once it answers; SIGTERM or SIGINT stops it after
answering every request it holds."""
import dataclasses
import os

from inference_server.binding import StartupError
from roles.flags import SERVE, setting_overrides
from roles.registry import Role
from roles.start import run_role
from rundata.config import ConfigError, ServerConfig, load_config, parse_section, to_dict
from rundata.rundir import RunDir


def config_from_args(args):
    """The Config of `args.config` with --set and then the server options applied (the flags
    of roles.flags.SERVE that stand for a server setting, then --checkpoint); raises
    ConfigError naming the key."""

    config = load_config(args.config, overrides=getattr(args, "overrides", ()))
    overrides = setting_overrides(args, SERVE.values(), "server")
    if args.checkpoint:
        checkpoints = dict(config.server.checkpoints)
        for item in args.checkpoint:
            slot, sep, path = item.partition("=")
            if not sep:
                raise ConfigError(f"--checkpoint {item!r}: expected SLOT=PATH")
            checkpoints[slot] = path
        overrides["checkpoints"] = checkpoints
    if overrides:
        merged = {**to_dict(config.server), **overrides}
        server = parse_section(ServerConfig, merged, source=f"{args.config} + command line", prefix="server")
        config = dataclasses.replace(config, server=server)
    return config


def calibration_shards(args, config):
    """The shard folder int8 is calibrated on: --shards, else the `shards` folder of the run
    directory holding a slot's checkpoint (rundata.rundir layout), else None."""

    if getattr(args, "shards", None):
        return args.shards
    for path in config.server.checkpoints.values():
        folder = os.path.dirname(os.path.abspath(path))
        run = RunDir(os.path.dirname(folder))
        if run.checkpoints == folder and os.path.isdir(run.shards):
            return run.shards
    return None


def run(args) -> int:
    """The server's body under roles.start.run_role; `args`: `fastgo serve`'s parsed options.
    Its log is server.log_file (there is no run directory); exit status 0 once stopped."""
    return run_role(Role.SERVE, args, _serve, config=_config, run_dir=False,
                    log_file=lambda config: (config.server.log_file,
                                             f"{args.config}: server.log_file"),
                    signals=False, on_disk_full=None)


def _config(args):
    """config_from_args once the options that need no config are answered."""

    if getattr(args, "make_curve_key", None):
        raise ConfigError("--make-curve-key: use `fastgo keys new NAME` to write a key pair "
                          "(NAME.key_secret is the server's curve_secret_key_file)")
    if not args.config:
        raise ConfigError("--config is required")
    return config_from_args(args)


def _serve(ctx) -> int:
    """Starts the server (a start-up problem: one line, exit status 2) on server.threads torch
    threads (0: torch's own) and serves until SIGTERM or SIGINT, after answering every request
    it holds."""

    args, config, log = ctx.args, ctx.config, ctx.log
    # torch (3 CPU seconds to import) only once the config is known good: a usage error is
    # answered at once
    import torch

    from inference_server.startup import start_server
    from network.backend_choice import BackendSetup
    from network.checkpoint import CheckpointError

    if config.server.threads:           # 0: torch's own count
        torch.set_num_threads(config.server.threads)
    shards = calibration_shards(args, config)
    if shards:
        log.info("int8 calibration and fp32 checks on the games of %s", shards)
    # the ready line waits for `auto`'s timing (seconds a backend; more on a loaded machine):
    # each step says so, and the supervisor waits on while these lines come
    setup = BackendSetup(shards=shards,
                         progress=lambda text: print(f"{Role.SERVE.starting}{text}", flush=True))
    try:
        server = start_server(config, setup)
    except (StartupError, CheckpointError, ConfigError) as err:
        raise ConfigError(f"{args.config}: {err}") from None
    ctx.stop_on_signals(server.stop)
    log.info("serving %s on %s: %s", list(server.slots), server.endpoint,
             next(iter(server.slots.values())).runner.describe())
    print(f"{Role.SERVE.ready}{server.endpoint}", flush=True)
    server.serve_forever()
    log.info("stopped")
    return 0
