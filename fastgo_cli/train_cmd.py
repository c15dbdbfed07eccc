"""`fastgo train --config C --run-dir DIR`: the trainer. Reads DIR/shards as they appear,
writes DIR/checkpoints and DIR/metrics.csv, and asks the server to hot-reload each checkpoint.

`fastgo train --config C --run-dir DIR --sgf DIR_OR_FILES`: supervised pretraining on game
records instead (trainer.supervised): imports them into DIR/sgf_shards, trains the policy (and
with --value the value) head, writes checkpoints in the same place and format.
Parses the options; the role's body is roles.train."""


def parents():
    from fastgo_cli.parser import config_options, duration_options, logging_options, run_dir_options
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
    from roles import train
    return train.run(args)
