"""`fastgo train --config C --run-dir DIR`: the trainer. Reads DIR/shards as they appear,
writes DIR/checkpoints and DIR/metrics.csv, and asks the server to hot-reload each checkpoint.

`fastgo train --config C --run-dir DIR --sgf DIR_OR_FILES`: supervised pretraining on game
records instead (trainer.supervised): imports them into DIR/sgf_shards, trains the policy (and
with --value the value) head, writes checkpoints in the same place and format."""
import sys

MAX_STEPS = 1 << 40          # --steps of one command


def parents():
    from fastgo_cli.parser import (config_options, duration_options, logging_options,
                                   run_dir_options)
    return (config_options(sections="[model], [trainer], [selfplay]"), run_dir_options(),
            duration_options(), logging_options())


def add_arguments(parser):
    parser.add_argument("--server", help="server endpoint to publish to (default: server.endpoint)")
    parser.add_argument("--no-publish", action="store_true", help="write checkpoints only")
    parser.add_argument("--steps", type=int, metavar="N",
                        help="train N steps from the step the run directory holds, then stop "
                             "(default: until stopped; with --sgf: one epoch, or --epochs)")
    sgf = parser.add_argument_group("supervised pretraining on SGF game records")
    sgf.add_argument("--sgf", nargs="+", metavar="DIR_OR_FILE",
                     help="train on these SGF files (directories are searched for *.sgf) "
                          "instead of self-play shards; games go to RUN/sgf_shards")
    sgf.add_argument("--holdout", type=float, default=0.1,
                     help="with --sgf: fraction of the games held out for move-prediction accuracy")
    sgf.add_argument("--epochs", type=float, help="with --sgf: passes over the training positions "
                                                  "(default 1 when --steps is not given)")
    sgf.add_argument("--value", action="store_true",
                     help="with --sgf: train the value head on the results too (and ownership "
                          "where the final position gives it)")
    sgf.add_argument("--log-every", type=int, metavar="K",
                     help="with --sgf: steps between held-out evaluations (default: "
                          "trainer.checkpoint_every)")


def run(args) -> int:
    from fastgo.run.role_entry import run_role
    return run_role("train", lambda: _run(args))


def _run(args) -> int:
    import logging

    from fastgo.run.config import ConfigError, load_config
    from fastgo.run.rundir import open_run_dir
    from fastgo.run.role_entry import on_disk_full, setup_logging, stop_on_signals

    config = load_config(args.config, overrides=args.overrides)
    if args.sgf is not None:
        return _run_supervised(args, config)
    _check_steps(args)
    if config.trainer.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ConfigError(f"{args.config}: trainer.device: 'cuda' but torch sees no CUDA device")
    run_dir = open_run_dir(args.run_dir)
    setup_logging(run_dir.log("train"), quiet=args.quiet)
    log = logging.getLogger("fastgo.train")
    stopping = stop_on_signals()
    on_disk_full(config)

    publisher = None
    client = None
    if config.trainer.publish and not args.no_publish:
        from inference_server.client import InferenceClient
        endpoint = args.server or config.server.endpoint
        from inference_server.keys import CurveKeyError, client_keys
        try:
            server_key, key_pair = client_keys(config.trainer.curve_key_file,
                                               config.trainer.server_public_key,
                                               "trainer.curve_key_file / server_public_key")
        except CurveKeyError as err:
            raise ConfigError(str(err)) from None
        client = InferenceClient(endpoint, timeout_s=10.0, retries=1,
                                 server_public_key=server_key, key_pair=key_pair,
                                 should_stop=stopping)
        slot = config.trainer.publish_slot

        def publisher(path, data, step):
            # While stopping, a short wait: the checkpoint is on disk and the server watches it.
            version = client.reload(slot, path, data=data, timeout_s=2.0 if stopping() else 30.0)
            log.info("published step %d to %s slot %s (server version %s)", step, endpoint, slot, version)

    from fastgo.run.rundir import StatusFile
    from trainer.training_core import CheckpointsRefused, NonFiniteTraining, ResumeError
    from trainer.factory import make_trainer
    try:
        trainer = make_trainer(config, run_dir, publisher=publisher,
                               status=StatusFile(run_dir, "train"))
    except ResumeError as err:
        raise ConfigError(str(err)) from None
    log.info("training %s (%s) on %s from step %d, %s", config.model.name,
             config.trainer.algorithm, trainer.device, trainer.step, run_dir.root)
    try:
        max_steps = None if args.steps is None else trainer.step + args.steps
        trainer.run(max_steps=max_steps, seconds=args.seconds, should_stop=stopping)
    except (CheckpointsRefused, NonFiniteTraining) as err:
        log.error("%s", err)
        print(f"fastgo train: stopped at step {trainer.step}: {err}", file=sys.stderr, flush=True)
        return 2
    finally:
        if client is not None:
            client.close()
    log.info("stopped at step %d", trainer.step)
    print(f"fastgo train: stopped at step {trainer.step}", flush=True)
    return 0


def _check_steps(args):
    from fastgo.run.config import ConfigError
    if args.steps is not None and not 0 <= args.steps <= MAX_STEPS:
        raise ConfigError(f"--steps: must be in 0..2**40, got {args.steps}")


def _run_supervised(args, config) -> int:
    import logging

    from fastgo.run.config import ConfigError
    from fastgo.run.rundir import StatusFile, open_run_dir
    from fastgo.run.role_entry import on_disk_full, setup_logging, stop_on_signals

    if not 0.0 <= args.holdout < 1.0:
        raise ConfigError(f"--holdout: must be in [0, 1), got {args.holdout}")
    if args.epochs is not None and args.steps is not None:
        raise ConfigError("--epochs and --steps: give one of them")
    if args.epochs is not None and not 0 < args.epochs <= 1e6:
        raise ConfigError(f"--epochs: must be in (0, 1e6], got {args.epochs}")
    _check_steps(args)
    if args.log_every is not None and not 1 <= args.log_every <= 1 << 40:
        raise ConfigError(f"--log-every: must be in 1..2**40, got {args.log_every}")
    if config.trainer.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ConfigError(f"{args.config}: trainer.device: 'cuda' but torch sees no CUDA device")
    from trainer.sgf_import import SgfInputError, find_sgf_files
    try:
        find_sgf_files(args.sgf)         # a missing path or a non-SGF file: before anything else
    except SgfInputError as err:
        raise ConfigError(str(err)) from None
    run_dir = open_run_dir(args.run_dir)
    setup_logging(run_dir.log("train"), quiet=args.quiet)
    log = logging.getLogger("fastgo.train")
    stopping = stop_on_signals()
    on_disk_full(config)

    from trainer.training_core import ResumeError
    from trainer.supervised import pretrain
    try:
        result = pretrain(config, run_dir, args.sgf, holdout=args.holdout, epochs=args.epochs,
                          steps=args.steps, value=args.value, log_every=args.log_every,
                          seconds=args.seconds, should_stop=stopping,
                          status=StatusFile(run_dir, "train"),
                          out=lambda line: print(line, flush=True))
    except (ResumeError, SgfInputError) as err:
        raise ConfigError(str(err)) from None
    trainer, evaluation = result["trainer"], result["evaluation"]
    held = (f"held-out top-1 {evaluation['heldout_top1']:.4f} top-5 "
            f"{evaluation['heldout_top5']:.4f} on {evaluation['heldout_positions']} positions"
            if evaluation else "no games held out")
    log.info("stopped at step %d", trainer.step)
    print(f"fastgo train: stopped at step {trainer.step}; {held}; {run_dir.latest}", flush=True)
    return 0
