"""`fastgo train --config C --run-dir DIR`: the trainer. Reads DIR/shards as they appear,
writes DIR/checkpoints and DIR/metrics.csv, and asks the server to hot-reload each checkpoint."""
import signal


def add_arguments(parser):
    parser.add_argument("--config", required=True, help="TOML config ([model], [trainer], [selfplay])")
    parser.add_argument("--run-dir", required=True, help="the run directory (created if missing)")
    parser.add_argument("--server", help="server endpoint to publish to (default: server.endpoint)")
    parser.add_argument("--no-publish", action="store_true", help="write checkpoints only")
    parser.add_argument("--max-steps", type=int, help="stop at this training step")
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--quiet", action="store_true", help="log to the run directory only")


def run(args) -> int:
    from fastgo_cli.role import run_role
    return run_role("train", lambda: _run(args))


def _run(args) -> int:
    import logging

    from fastgo.config import ConfigError, load_config
    from fastgo.rundir import open_run_dir
    from fastgo_cli.role import setup_logging

    config = load_config(args.config)
    if args.max_steps is not None and not 0 <= args.max_steps <= 1 << 62:
        raise ConfigError(f"--max-steps: must be in 0..2**62, got {args.max_steps}")
    if args.seconds is not None and not args.seconds > 0:
        raise ConfigError(f"--seconds: must be > 0, got {args.seconds}")
    if config.trainer.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ConfigError(f"{args.config}: trainer.device: 'cuda' but torch sees no CUDA device")
    run_dir = open_run_dir(args.run_dir)
    setup_logging(run_dir.log("train"), quiet=args.quiet)
    log = logging.getLogger("fastgo.train")
    stop = {"flag": False}

    def handler(signum, frame):
        stop["flag"] = True
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)

    publisher = None
    client = None
    if config.trainer.publish and not args.no_publish:
        from inference_server.client import InferenceClient
        endpoint = args.server or config.server.endpoint
        client = InferenceClient(endpoint, timeout_s=10.0, retries=1)
        slot = config.trainer.publish_slot

        def publisher(path, data, step):
            # While stopping, a short wait: the checkpoint is on disk and the server watches it.
            version = client.reload(slot, path, data=data, timeout_s=2.0 if stop["flag"] else 30.0)
            log.info("published step %d to %s slot %s (server version %s)", step, endpoint, slot, version)

    from fastgo.rundir import StatusFile
    from trainer.loop import ResumeError, Trainer
    try:
        trainer = Trainer(config, run_dir, publisher=publisher, status=StatusFile(run_dir, "train"))
    except ResumeError as err:
        raise ConfigError(str(err)) from None
    log.info("training %s on %s from step %d, %s", config.model.name, trainer.device, trainer.step,
             run_dir.root)
    try:
        trainer.run(max_steps=args.max_steps, seconds=args.seconds, should_stop=lambda: stop["flag"])
    finally:
        if client is not None:
            client.close()
    log.info("stopped at step %d", trainer.step)
    print(f"fastgo train: stopped at step {trainer.step}", flush=True)
    return 0
