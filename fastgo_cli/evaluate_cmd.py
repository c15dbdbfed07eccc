"""`fastgo evaluate --config C --run-dir DIR [--once] [--quiet]`: the evaluator role of a run
(evaluation.evaluator): new checkpoints against earlier ones and the anchors, ratings, curve.png.
Parses the options (the role's own: roles.flags.EVALUATE); the role's body is roles.evaluate."""


def parents():
    from fastgo_cli.parser import config_options, logging_options, run_dir_options
    return (config_options(sections="[model], [evaluator], [selfplay]"),
            run_dir_options(help="the run directory"), logging_options())


def add_arguments(parser):
    from fastgo_cli.parser import add_flags
    from roles.flags import EVALUATE
    add_flags(parser, EVALUATE)


def run(args) -> int:
    from roles import evaluate
    return evaluate.run(args)
