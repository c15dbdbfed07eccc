"""The evaluator role (`fastgo evaluate`): new checkpoints of a run against earlier ones and the
anchors (evaluation.evaluator), its ratings and curve.png."""
from fastgo.run.role_entry import run_role
from roles.registry import Role


def run(args) -> int:
    """The evaluator's body under fastgo.run.role_entry.run_role; `args`: `fastgo evaluate`'s
    parsed options."""
    return run_role(Role.EVALUATE, lambda: run_evaluator(
        args.config, args.run_dir, once=args.once, quiet=args.quiet, overrides=args.overrides))


def run_evaluator(config_path, run_dir_path, *, once=False, quiet=False, overrides=()) -> int:
    """The role's main loop: logs to RUN/logs/evaluate.log (and stderr unless quiet), beats
    RUN/logs/evaluate.status.json (with the CPU share), evaluates what pending() names until
    SIGTERM or SIGINT (with `once`: the newest checkpoint not yet evaluated, whatever
    cluster.evaluate_every, outside the CPU budget: neither waiting on it nor counted in it);
    `overrides`: --set items for the config. Returns 0; ConfigError for a bad config."""
    import logging
    import time

    from evaluation.curves import REDRAW_S
    from evaluation.evaluator import IDLE_S, Evaluator
    from fastgo.run.config import load_config
    from fastgo.run.role_entry import on_disk_full, setup_logging, stop_on_signals
    from fastgo.run.rundir import open_run_dir

    config = load_config(config_path, overrides=overrides)
    run_dir = open_run_dir(run_dir_path)
    setup_logging(Role.EVALUATE.log(run_dir), quiet=quiet)
    log = logging.getLogger("fastgo.evaluate")
    stopping = stop_on_signals()
    # the final rating is optional: on a full disk it stops at once (exit status 75), never waits
    on_disk_full(config, policy="stop" if once else None)
    status = Role.EVALUATE.status_file(run_dir)
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
