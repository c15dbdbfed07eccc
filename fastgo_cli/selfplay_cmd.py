"""`fastgo selfplay --config C --run-dir DIR [--server ENDPOINT] [--games-at-once G]`: one self-play
worker process writing shards into DIR/shards through the inference server.
Parses the options (the role's own: roles.flags.SELFPLAY); the role's body is roles.selfplay."""


def parents():
    from fastgo_cli.parser import (
        config_options,
        duration_options,
        logging_options,
        run_dir_options,
        seed_options,
    )
    return (config_options(sections="[model], [selfplay], [server]"), run_dir_options(),
            seed_options(help="override selfplay.seed"), duration_options(), logging_options())


def add_arguments(parser):
    from fastgo_cli.parser import add_flags
    from roles.flags import SELFPLAY
    add_flags(parser, SELFPLAY)


def run(args) -> int:
    from roles import selfplay
    return selfplay.run(args)
