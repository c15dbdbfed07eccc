"""`fastgo serve --config NAME|PATH [...]`: run the batching inference server on its own.

Prints "fastgo serve: ready on ENDPOINT" on stdout once it answers; SIGTERM or SIGINT stops it
after answering every request it holds (exit status 0). A config or start-up problem is one
line on stderr and exit status 2; any other failure is logged with its traceback, status 1.

Parses the options (the role's own: roles.flags.SERVE); the role's body is roles.serve.
"""


def parents():
    from fastgo_cli.parser import config_options, logging_options
    return (config_options(required=False, sections="[model], [server]"), logging_options())


def add_arguments(parser):
    from fastgo_cli.parser import add_flags
    from roles.flags import SERVE
    add_flags(parser, SERVE)


def run(args) -> int:
    from roles import serve
    return serve.run(args)
