"""`fastgo train --config C --run-dir DIR`: the trainer. Reads DIR/shards as they appear,
writes DIR/checkpoints and DIR/metrics.csv, and asks the server to hot-reload each checkpoint.

`fastgo train --config C --run-dir DIR --sgf DIR_OR_FILES`: supervised pretraining on game
records instead (trainer.supervised): imports them into DIR/sgf_shards, trains the policy (and
with --value the value) head, writes checkpoints in the same place and format.
Parses the options (the role's own: roles.flags.TRAIN); the role's body is roles.train."""


def parents():
    from fastgo_cli.parser import config_options, duration_options, logging_options, run_dir_options
    return (config_options(sections="[model], [trainer], [selfplay]"), run_dir_options(),
            duration_options(), logging_options())


def add_arguments(parser):
    from fastgo_cli.parser import add_flags
    from roles.flags import TRAIN
    add_flags(parser, TRAIN)


def run(args) -> int:
    from roles import train
    return train.run(args)
