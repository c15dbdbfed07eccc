"""`fastgo evaluate --config C --run-dir DIR [--once] [--quiet]`: the evaluator role of a run
(cluster.evaluator): new checkpoints against earlier ones and the anchors, ratings, curve.png."""


def parents():
    from fastgo_cli.parser import config_options, logging_options, run_dir_options
    return (config_options(sections="[model], [cluster], [selfplay]"),
            run_dir_options(help="the run directory"), logging_options())


def add_arguments(parser):
    parser.add_argument("--once", action="store_true",
                        help="evaluate the newest pending checkpoint, then exit (no CPU budget)")


def run(args) -> int:
    from cluster.evaluator import run_evaluator
    from fastgo.run.role_entry import run_role
    return run_role("evaluate", lambda: run_evaluator(args.config, args.run_dir, once=args.once,
                                                      quiet=args.quiet, overrides=args.overrides))
