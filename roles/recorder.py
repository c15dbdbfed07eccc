"""The recorder role (`fastgo recorder`): takes finished games from workers on other hosts and
writes them into RUN/shards; says Role.RECORDER.ready and its endpoint once it listens, beats
RUN/logs/recorder.status.json."""
import dataclasses

from fastgo import bounded_json
from recorder.server import Recorder
from roles.flags import RECORDER, setting_overrides
from roles.registry import Role
from roles.start import run_role
from rundata.config import RecorderConfig, load_config, parse_section, to_dict


def run(args) -> int:
    """The recorder's body under roles.start.run_role; `args`: `fastgo recorder`'s parsed
    options."""
    return run_role(Role.RECORDER, args, _record, config=_config, signals=False)


def _config(args):
    """The config with --set and then --bind (recorder.endpoint) applied."""

    config = load_config(args.config, overrides=args.overrides)
    overrides = setting_overrides(args, RECORDER.values(), "recorder")
    if not overrides:
        return config
    merged = {**to_dict(config.recorder), **overrides}
    recorder = parse_section(RecorderConfig, merged, source=f"{args.config} + --bind",
                             prefix="recorder")
    return dataclasses.replace(config, recorder=recorder)


def _record(ctx) -> int:
    run_dir, log = ctx.run_dir, ctx.log
    recorder = Recorder(ctx.config, run_dir, status=Role.RECORDER.status_file(run_dir))
    ctx.stop_on_signals(recorder.stop)
    log.info("recording %dx%d komi %g games on %s into %s (shards of %d games or %gs)",
             recorder.size, recorder.size, recorder.komi, recorder.endpoint, run_dir.shards,
             recorder.shard_games, recorder.shard_seconds)
    print(f"{Role.RECORDER.ready}{recorder.endpoint}", flush=True)
    recorder.serve_forever()
    stats = recorder.stats()
    log.info("stats %s", bounded_json.dumps(stats))
    print("fastgo recorder: stats " + bounded_json.dumps(stats), flush=True)
    return 0
