"""`fastgo recorder --config C --run-dir D [--bind tcp://IP:PORT]`: takes finished games from
workers on other hosts (`fastgo selfplay --recorder tcp://HOST:PORT`) and writes them into
D/shards. Prints "fastgo recorder: ready on ENDPOINT" once it listens (a port of * is chosen
then). Logs to D/logs/recorder.log, heartbeat in D/logs/recorder.status.json."""
import json


def parents():
    from fastgo_cli.parser import config_options, logging_options, run_dir_options
    return (config_options(sections="[model], [selfplay], [recorder]"), run_dir_options(),
            logging_options())


def add_arguments(parser):
    parser.add_argument("--bind", help="endpoint to bind, tcp://IP:PORT (PORT * = any free port); "
                                       "default: recorder.endpoint of the config")


def run(args) -> int:
    from fastgo.run.role_entry import run_role
    return run_role("recorder", lambda: _run(args))


def _run(args) -> int:
    import dataclasses
    import logging

    from fastgo.run.config import ConfigError, RecorderConfig, load_config, parse_section, to_dict
    from fastgo.run.rundir import StatusFile, open_run_dir
    from fastgo.run.role_entry import on_disk_full, on_stop_signals, setup_logging
    from selfplay_workers.recorder import Recorder

    config = load_config(args.config, overrides=args.overrides)
    if args.bind is not None:
        merged = {**to_dict(config.recorder), "endpoint": args.bind}
        recorder = parse_section(RecorderConfig, merged, source=f"{args.config} + --bind",
                                 prefix="recorder")
        config = dataclasses.replace(config, recorder=recorder)
    try:
        run_dir = open_run_dir(args.run_dir)
    except OSError as err:
        raise ConfigError(f"--run-dir {args.run_dir}: {err}") from None
    setup_logging(run_dir.log("recorder"), quiet=args.quiet)
    log = logging.getLogger("fastgo.recorder")
    recorder = Recorder(config, run_dir, status=StatusFile(run_dir, "recorder"))
    on_stop_signals(recorder.stop)
    on_disk_full(config, should_stop=lambda: recorder.stop_requested)
    log.info("recording %dx%d komi %g games on %s into %s (shards of %d games or %gs)",
             recorder.size, recorder.size, recorder.komi, recorder.endpoint, run_dir.shards,
             recorder.shard_games, recorder.shard_seconds)
    print(f"fastgo recorder: ready on {recorder.endpoint}", flush=True)
    recorder.serve_forever()
    stats = recorder.stats()
    log.info("stats %s", json.dumps(stats))
    print("fastgo recorder: stats " + json.dumps(stats), flush=True)
    return 0
