"""`fastgo recorder --config C --run-dir D [--bind tcp://IP:PORT]`: takes finished games from
workers on other hosts (`fastgo selfplay --recorder tcp://HOST:PORT`) and writes them into
D/shards. Prints "fastgo recorder: ready on ENDPOINT" once it listens (a port of * is chosen
then). Logs to D/logs/recorder.log, heartbeat in D/logs/recorder.status.json.
Parses the options (the role's own: roles.flags.RECORDER); the role's body is roles.recorder."""


def parents():
    from fastgo_cli.parser import config_options, logging_options, run_dir_options
    return (config_options(sections="[model], [selfplay], [recorder]"), run_dir_options(),
            logging_options())


def add_arguments(parser):
    from fastgo_cli.parser import add_flags
    from roles.flags import RECORDER
    add_flags(parser, RECORDER)


def run(args) -> int:
    from roles import recorder
    return recorder.run(args)
