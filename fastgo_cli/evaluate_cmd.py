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
    from fastgo.run.role_entry import run_role
    return run_role("evaluate", lambda: run_evaluator(args.config, args.run_dir, once=args.once,
                                                      quiet=args.quiet, overrides=args.overrides))


def run_evaluator(config_path, run_dir_path, *, once=False, quiet=False, overrides=()) -> int:
    """The role's main loop: logs to RUN/logs/evaluate.log (and stderr unless quiet), beats
    RUN/logs/evaluate.status.json (with the CPU share), evaluates what pending() names until
    SIGTERM or SIGINT (with `once`: the newest checkpoint not yet evaluated, whatever
    cluster.evaluate_every, outside the CPU budget: neither waiting on it nor counted in it);
    `overrides`: --set items for the config. Returns 0; ConfigError for a bad config."""
    import logging
    import time

    from cluster.eval_curves import REDRAW_S
    from cluster.evaluator import IDLE_S, Evaluator
    from fastgo.run.config import load_config
    from fastgo.run.role_entry import on_disk_full, setup_logging, stop_on_signals
    from fastgo.run.rundir import StatusFile, open_run_dir

    config = load_config(config_path, overrides=overrides)
    run_dir = open_run_dir(run_dir_path)
    setup_logging(run_dir.log("evaluate"), quiet=quiet)
    log = logging.getLogger("fastgo.evaluate")
    stopping = stop_on_signals()
    # the final rating is optional: on a full disk it stops at once (exit status 75), never waits
    on_disk_full(config, policy="stop" if once else None)
    status = StatusFile(run_dir, "evaluate")
    # --once draws the curves once, at its end
    evaluator = Evaluator(config, run_dir, log, status, stopping=stopping, enforce_budget=not once,
                          outside_budget=once, redraw_s=None if once else REDRAW_S)
    if once:
        log.info("--once: the newest checkpoint not yet rated, outside the CPU budget")
    while not stopping():
        evaluator.beat()
        evaluator.curves.draw_pending(when_due=True)
        if not evaluator.work(once):
            if once:
                break
            time.sleep(IDLE_S)
    evaluator.stop_refining()           # the games of a pairing cut short are recorded
    evaluator.curves.draw_pending()
    evaluator.beat(force=True)
    budget = evaluator.budget
    log.info("evaluator CPU: %.1f s in %.1f s, %.3f of a core on average (budget %g)",
             budget.cpu_s(), budget.wall_s(), budget.used_share(), budget.share)
    return 0
