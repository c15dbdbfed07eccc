"""The trainer role (`fastgo train`): reads RUN/shards as they appear, writes RUN/checkpoints
and RUN/metrics.csv and asks the server to hot-reload each checkpoint; or, with --sgf,
supervised pretraining on game records (trainer.supervised) into the same checkpoints."""
import sys

from fastgo.variants import Device
from roles.flags import PRETRAINING, TRAIN, check_flags
from roles.registry import Role
from roles.start import REFUSED, run_role
from rundata.config import ConfigError, load_config
from trainer.sgf_import import SgfInputError, find_sgf_files
from wire.client import InferenceClient
from wire.keys import CurveKeyError, client_keys


def run(args) -> int:
    """The trainer's body under roles.start.run_role; `args`: `fastgo train`'s parsed
    options."""
    return run_role(Role.TRAIN, args, _train, config=_config)


def _config(args):
    """The config, with the options checked before the run directory is opened: the role's
    flags in their ranges (roles.flags.TRAIN; the pretraining's with --sgf only), and with
    --sgf the game records (a missing path or a non-SGF file before anything else);
    trainer.device "cuda" needs a CUDA device torch sees."""

    config = load_config(args.config, overrides=args.overrides)
    pretraining = args.sgf is not None
    check_flags(args, [flag for flag in TRAIN.values()
                       if pretraining or flag.group != PRETRAINING])
    if pretraining and args.epochs is not None and args.steps is not None:
        raise ConfigError("--epochs and --steps: give one of them")
    if config.trainer.device == Device.CUDA:
        import torch
        if not torch.cuda.is_available():
            raise ConfigError(f"{args.config}: trainer.device: 'cuda' but torch sees no CUDA device")
    if args.sgf is not None:
        try:
            find_sgf_files(args.sgf)
        except SgfInputError as err:
            raise ConfigError(str(err)) from None
    return config


def _train(ctx) -> int:
    if ctx.args.sgf is not None:
        return _pretrain(ctx)
    args, config, run_dir, log, stopping = ctx.args, ctx.config, ctx.run_dir, ctx.log, ctx.stopping
    publisher = None
    client = None
    if config.trainer.publish and not args.no_publish:
        endpoint = args.server or config.server.endpoint
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

    from trainer.factory import make_trainer
    from trainer.training_core import CheckpointsRefused, NonFiniteTraining, ResumeError
    try:
        trainer = make_trainer(config, run_dir, publisher=publisher,
                               status=Role.TRAIN.status_file(run_dir))
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
        return REFUSED
    finally:
        if client is not None:
            client.close()
    log.info("stopped at step %d", trainer.step)
    print(f"fastgo train: stopped at step {trainer.step}", flush=True)
    return 0


def _pretrain(ctx) -> int:
    """Supervised pretraining on the game records of --sgf (trainer.supervised)."""
    from trainer.supervised import pretrain
    from trainer.training_core import ResumeError

    args, run_dir, stopping = ctx.args, ctx.run_dir, ctx.stopping
    try:
        result = pretrain(ctx.config, run_dir, args.sgf, holdout=args.holdout, epochs=args.epochs,
                          steps=args.steps, value=args.value, log_every=args.log_every,
                          seconds=args.seconds, should_stop=stopping,
                          status=Role.TRAIN.status_file(run_dir),
                          out=lambda line: print(line, flush=True))
    except (ResumeError, SgfInputError) as err:
        raise ConfigError(str(err)) from None
    trainer, evaluation = result["trainer"], result["evaluation"]
    held = (f"held-out top-1 {evaluation['heldout_top1']:.4f} top-5 "
            f"{evaluation['heldout_top5']:.4f} on {evaluation['heldout_positions']} positions"
            if evaluation else "no games held out")
    ctx.log.info("stopped at step %d", trainer.step)
    print(f"fastgo train: stopped at step {trainer.step}; {held}; {run_dir.latest}", flush=True)
    return 0
