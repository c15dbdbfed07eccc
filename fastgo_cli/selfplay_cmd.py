"""`fastgo selfplay --config C --run-dir DIR [--server ENDPOINT] [--games-at-once G]`: one self-play
worker process writing shards into DIR/shards through the inference server.
Parses the options; the role's body is roles.selfplay."""


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
    parser.add_argument("--server", help="server endpoint (default: server.endpoint of the config)")
    parser.add_argument("--games-at-once", type=int, metavar="G",
                        help="games this worker plays at the same time (default: selfplay.games)")
    parser.add_argument("--visits", type=int, help="root visits of a full search (default: selfplay.visits)")
    parser.add_argument("--worker-id", type=int, default=0, help="this worker's number (names its shards)")
    parser.add_argument("--max-games", type=int, help="stop after this many finished games")
    parser.add_argument("--recorder", help="send finished games to this recorder (tcp://HOST:PORT) "
                                           "instead of writing shards (default: selfplay.recorder)")


def run(args) -> int:
    from roles import selfplay
    return selfplay.run(args)
