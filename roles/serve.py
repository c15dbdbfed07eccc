"""The server role (`fastgo serve`): the batching inference server on its own. Says
Role.SERVE.ready and its endpoint on stdout once it answers; SIGTERM or SIGINT stops it after
answering every request it holds."""
from roles.registry import Role


def config_from_args(args):
    """The Config of `args.config` with --set and then the server options applied; raises
    ConfigError naming the key."""
    import dataclasses

    from fastgo.run.config import ConfigError, ServerConfig, load_config, parse_section, to_dict

    config = load_config(args.config, overrides=getattr(args, "overrides", ()))
    overrides = {}
    for key, dest in (("endpoint", "bind"), ("device", "device"), ("threads", "threads"),
                      ("max_batch", "max_batch"), ("max_wait_us", "max_wait_us"),
                      ("log_file", "log_file")):
        value = getattr(args, dest, None)
        if value is not None:
            overrides[key] = value
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
    directory holding a slot's checkpoint (fastgo.run.rundir layout), else None."""
    import os

    from fastgo.run.rundir import RunDir

    if getattr(args, "shards", None):
        return args.shards
    for path in config.server.checkpoints.values():
        folder = os.path.dirname(os.path.abspath(path))
        run = RunDir(os.path.dirname(folder))
        if run.checkpoints == folder and os.path.isdir(run.shards):
            return run.shards
    return None


def run(args) -> int:
    """The server's body; `args`: `fastgo serve`'s parsed options. Exit status 0 once stopped,
    2 for a config or start-up problem (one line), 1 for any other failure (logged)."""
    import logging
    import sys

    from fastgo.run.config import ConfigError
    from fastgo.files import escaped, reason
    from fastgo.run.role_entry import on_stop_signals, setup_logging

    log = logging.getLogger("fastgo.serve")
    if getattr(args, "make_curve_key", None):
        print("fastgo serve: --make-curve-key: use `fastgo keys new NAME` to write a key pair "
              "(NAME.key_secret is the server's curve_secret_key_file)", file=sys.stderr)
        return 2
    if not args.config:
        print("fastgo serve: --config is required", file=sys.stderr)
        return 2
    try:
        config = config_from_args(args)
    except ConfigError as err:
        print(f"fastgo serve: {escaped(err, 500, one_line=True)}", file=sys.stderr)
        return 2
    try:
        setup_logging(config.server.log_file)
    except OSError as err:
        print(f"fastgo serve: {args.config}: server.log_file: cannot open "
              f"{config.server.log_file}: {reason(err)}", file=sys.stderr)
        return 2
    # torch (3 CPU seconds to import) only once the config is known good: a usage error is
    # answered at once
    from network.checkpoint import CheckpointError
    from network.runner import set_calibration_shards
    from inference_server.server import StartupError, start_server

    shards = calibration_shards(args, config)
    if shards:
        log.info("int8 calibration and fp32 checks on the games of %s", shards)
    set_calibration_shards(shards)
    # the ready line waits for `auto`'s timing (seconds a backend; more on a loaded machine):
    # each step says so, and the supervisor waits on while these lines come
    from network.backend_choice import set_progress
    set_progress(lambda text: print(f"{Role.SERVE.starting}{text}", flush=True))
    try:
        server = start_server(config)
    except (StartupError, CheckpointError, ConfigError) as err:
        print(f"fastgo serve: {args.config}: {escaped(err, 500, one_line=True)}", file=sys.stderr)
        return 2
    except Exception:
        log.exception("fastgo serve failed to start")
        return 1
    try:
        on_stop_signals(server.stop)
        log.info("serving %s on %s: %s", list(server.slots), server.endpoint,
                 next(iter(server.slots.values())).runner.describe())
        print(f"{Role.SERVE.ready}{server.endpoint}", flush=True)
        server.serve_forever()
        log.info("stopped")
        return 0
    except Exception:
        log.exception("fastgo serve failed")
        return 1


