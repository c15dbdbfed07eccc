"""`fastgo serve --config NAME|PATH [...]`: run the batching inference server on its own.

Prints "fastgo serve: ready on ENDPOINT" on stdout once it answers; SIGTERM or SIGINT stops it
after answering every request it holds (exit status 0). A config or start-up problem is one
line on stderr and exit status 2; any other failure is logged with its traceback, status 1.

Parses the options; the role's body is roles.serve.
"""
from fastgo.variants import Device


def parents():
    from fastgo_cli.parser import config_options, logging_options
    return (config_options(required=False, sections="[model], [server]"),
            logging_options(log_file="override server.log_file"))


def add_arguments(parser):
    import argparse

    from fastgo_cli.parser import alias
    parser.add_argument("--make-curve-key", metavar="FILE", help=argparse.SUPPRESS)  # see run()
    parser.add_argument("--bind", metavar="ENDPOINT",
                        help="override server.endpoint, the address to listen on "
                             "(tcp://127.0.0.1:* picks a free port)")
    alias(parser, "--endpoint", dest="bind")
    parser.add_argument("--device", choices=Device.choices(), help="override server.device")
    parser.add_argument("--threads", type=int, help="override server.threads")
    parser.add_argument("--max-batch", type=int, help="override server.max_batch")
    parser.add_argument("--max-wait-us", type=int, help="override server.max_wait_us")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="SLOT=PATH",
                        help="override the watched checkpoint of a slot (repeatable)")
    parser.add_argument("--shards", metavar="DIR",
                        help="the run's shard folder: int8 backends are calibrated, and every "
                             "backend checked against fp32, on positions of its newest games "
                             "(default: RUN/shards when a slot's checkpoint is in "
                             "RUN/checkpoints/; none: random-game positions)")


def run(args) -> int:
    from roles import serve
    return serve.run(args)
