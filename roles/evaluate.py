"""The evaluator role (`fastgo evaluate`): new checkpoints of a run against earlier ones and the
anchors (evaluation.evaluator), its ratings and curve.png."""
import time

from evaluation.curves import REDRAW_S
from evaluation.evaluator import IDLE_S, Evaluator
from roles.registry import Role
from roles.start import CONFIG_POLICY, run_role


def run(args) -> int:
    """The evaluator's body under roles.start.run_role; `args`: `fastgo evaluate`'s parsed
    options. The final rating (--once) is optional: on a full disk it stops at once (exit
    status 75), never waits."""
    return run_role(Role.EVALUATE, args, _evaluate,
                    on_disk_full="stop" if args.once else CONFIG_POLICY)


def _evaluate(ctx) -> int:
    """The role's main loop: beats RUN/logs/evaluate.status.json (with the CPU share),
    evaluates what pending() names until SIGTERM or SIGINT (with --once: the newest checkpoint
    not yet evaluated, whatever evaluator.every, outside the CPU budget: neither waiting
    on it nor counted in it). Returns 0."""

    once, log, stopping = ctx.args.once, ctx.log, ctx.stopping
    status = Role.EVALUATE.status_file(ctx.run_dir)
    # --once draws the curves once, at its end
    evaluator = Evaluator(ctx.config, ctx.run_dir, log, status, stopping=stopping,
                          enforce_budget=not once, outside_budget=once,
                          redraw_s=None if once else REDRAW_S)
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
