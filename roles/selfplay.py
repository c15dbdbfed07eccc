"""The self-play worker role (`fastgo selfplay`): one worker process playing games through the
inference server and writing shards into RUN/shards, or sending them to the recorder; the
policy-only worker under the AlphaGo pipeline's algorithms."""

import dataclasses

from fastgo import bounded_json
from recorder.sink import RemoteSink
from roles.flags import SELFPLAY, check_flags
from roles.registry import Role, Worker, selfplay_worker
from roles.start import run_role
from rundata.config import ConfigError, endpoint_problem, load_config
from rundata.shards import remove_stale_temporaries
from selfplay_workers.policy_worker import PolicyWorker
from selfplay_workers.worker import SelfplayWorker
from wire import protocol
from wire.client import ClientStopped, InferenceClient, ServerError, ServerUnavailable
from wire.keys import CurveKeyError, client_keys, read_public_key


def run(args) -> int:
    """The worker's body under roles.start.run_role; `args`: `fastgo selfplay`'s parsed
    options."""
    return run_role(Role.SELFPLAY, args, _play, config=_config, worker_id=args.worker_id,
                    signals=False)


def _config(args):
    """The config with --visits applied, the role's flags checked (roles.flags.SELFPLAY: their
    ranges and the bounds of the settings they stand for; --seed is in selfplay.seed's range,
    fastgo.bounds.SEED, once parsed)."""

    config = load_config(args.config, overrides=args.overrides)
    check_flags(args, SELFPLAY.values())
    if args.visits is not None:
        config = dataclasses.replace(
            config, selfplay=dataclasses.replace(config.selfplay, visits=args.visits))
    return config


def _play(ctx) -> int:
    args, config, run_dir, log = ctx.args, ctx.config, ctx.run_dir, ctx.log
    removed = remove_stale_temporaries(run_dir.shards, f"w{args.worker_id}")
    if removed:
        log.info("removed %d unfinished shard(s) of an earlier run of worker %d", removed, args.worker_id)
    endpoint = args.server or config.server.endpoint
    server_key, key_pair = _curve_client_keys(config)
    client = InferenceClient(endpoint, slot=config.trainer.publish_slot,
                             timeout_s=config.selfplay.timeout_s, retries=5,
                             server_public_key=server_key, key_pair=key_pair)
    sink = _remote_sink(args, config, run_dir, key_pair)
    status = Role.SELFPLAY.status_file(run_dir, args.worker_id)
    worker: PolicyWorker | SelfplayWorker
    if selfplay_worker(config.trainer.algorithm) is Worker.POLICY:
        # AlphaGo pipeline: moves sampled from the policy, no search
        worker = PolicyWorker(config, client, run_dir=run_dir, worker_id=args.worker_id,
                              games=args.games_at_once, seed=args.seed, status=status, sink=sink,
                              sgf_dir=run_dir.sgf)
        how = (f"policy-only ({config.trainer.algorithm}, floor {config.selfplay.policy_floor:g}, "
               f"seed {worker.seed})")
    else:
        worker = SelfplayWorker(config, client, shard_dir=run_dir.shards, worker_id=args.worker_id,
                                games=args.games_at_once, seed=args.seed, sgf_dir=run_dir.sgf,
                                status=status, sink=sink)
        sp = config.selfplay
        how = (f"visits by training step {', '.join(sp.visits_schedule)}" if sp.visits_schedule
               else f"{sp.visits} visits")

    def stop():
        worker.stop_requested = True
    ctx.stop_on_signals(stop)
    client.should_stop = lambda: worker.stop_requested     # a silent server cannot keep us
    log.info("worker %d: %d games at once, %s, server %s", args.worker_id, worker.games, how,
             endpoint)
    try:
        stats = worker.run(max_games=args.max_games, seconds=args.seconds)
    except ClientStopped as err:
        log.info("%s", err)
        stats = worker.stats()
    except ServerUnavailable as err:
        log.error("server %s unavailable: %s", endpoint, err)
        return 1
    except ServerError as err:
        if err.code not in (protocol.BAD_SHAPE, protocol.UNKNOWN_SLOT, protocol.TOO_LARGE):
            raise
        # the server serves another board, encoding or slot than this config: no retry helps
        raise ConfigError(f"{args.config}: the server at {endpoint} refuses this worker's "
                          f"requests: {err.message}") from None
    finally:
        client.close()
        if sink is not None:
            sink.flush(5.0)
            sink.close()
    log.info("stats %s", bounded_json.dumps(stats))
    print("fastgo selfplay: stats " + bounded_json.dumps(stats), flush=True)
    return 0


def _curve_client_keys(config):
    """(server public key or None, this worker's key pair or None) from [selfplay]."""

    sp = config.selfplay
    if not (sp.server_public_key or sp.curve_key_file):
        return None, None
    try:
        return client_keys(sp.curve_key_file, sp.server_public_key,
                           "selfplay.curve_key_file / server_public_key")
    except CurveKeyError as err:
        raise ConfigError(str(err)) from None


def _remote_sink(args, config, run_dir, key_pair):
    """The sink to the recorder when --recorder or selfplay.recorder names one, else None
    (local shards). Unconfirmed games wait in RUN_DIR/outbox-wID."""

    sp = config.selfplay
    endpoint = args.recorder if args.recorder is not None else sp.recorder
    if not endpoint:
        return None
    problem = endpoint_problem(endpoint)
    if problem or endpoint.startswith("inproc://"):
        raise ConfigError(f"--recorder / selfplay.recorder: {endpoint[:100]!r}: "
                          f"{problem or 'expected tcp://HOST:PORT or ipc://PATH'}")
    games = args.games_at_once or sp.games
    if sp.max_unconfirmed < games:
        raise ConfigError(f"selfplay.max_unconfirmed: {sp.max_unconfirmed} is below the games "
                          f"played at once ({games})")
    recorder_key = None
    if sp.recorder_public_key:
        try:
            recorder_key = read_public_key(sp.recorder_public_key)
        except CurveKeyError as err:
            raise ConfigError(f"selfplay.recorder_public_key: {err}") from None
    return RemoteSink(endpoint, outbox=run_dir.outbox(args.worker_id),
                      worker_id=args.worker_id, max_unconfirmed=sp.max_unconfirmed,
                      timeout_s=sp.shard_seconds + sp.recorder_timeout_s,
                      max_game_bytes=config.recorder.max_game_bytes,
                      server_public_key=recorder_key, key_pair=key_pair)
