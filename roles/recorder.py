"""The recorder role (`fastgo recorder`): takes finished games from workers on other hosts and
writes them into RUN/shards; says Role.RECORDER.ready and its endpoint once it listens, beats
RUN/logs/recorder.status.json."""
import json

from fastgo import bounded_json
from fastgo.run.role_entry import run_role
from roles.registry import Role


def run(args) -> int:
    """The recorder's body under fastgo.run.role_entry.run_role; `args`: `fastgo recorder`'s
    parsed options."""
    return run_role(Role.RECORDER, lambda: _run(args))


def _run(args) -> int:
    import dataclasses
    import logging

    from fastgo.run.config import ConfigError, RecorderConfig, load_config, parse_section, to_dict
    from fastgo.run.rundir import open_run_dir
    from fastgo.run.role_entry import on_disk_full, on_stop_signals, setup_logging
    from recorder.server import Recorder

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
    setup_logging(Role.RECORDER.log(run_dir), quiet=args.quiet)
    log = logging.getLogger("fastgo.recorder")
    recorder = Recorder(config, run_dir, status=Role.RECORDER.status_file(run_dir))
    on_stop_signals(recorder.stop)
    on_disk_full(config, should_stop=lambda: recorder.stop_requested)
    log.info("recording %dx%d komi %g games on %s into %s (shards of %d games or %gs)",
             recorder.size, recorder.size, recorder.komi, recorder.endpoint, run_dir.shards,
             recorder.shard_games, recorder.shard_seconds)
    print(f"{Role.RECORDER.ready}{recorder.endpoint}", flush=True)
    recorder.serve_forever()
    stats = recorder.stats()
    log.info("stats %s", bounded_json.dumps(stats))
    print("fastgo recorder: stats " + bounded_json.dumps(stats), flush=True)
    return 0
