"""The evaluator's pictures (evaluation.evaluator): RUN/curve.png and RUN/loss.png, redrawn at most
once in REDRAW_S. The first ratings are drawn at once; newer ones wait, the newest only, until
the interval has passed or draw_pending() is told to draw (a checkpoint's refinement ended, the
role stops). A drawing costs about 2 CPU-s on a 2-core AMD EPYC (Zen 3), a sixth of what an
evaluator budget of 0.2 of a core allows in a minute; the dashboard and the status line read the
results, not the pictures."""
import time

from evaluation.plots import draw_curve, draw_losses
from rundata.strength import read_strength

REDRAW_S = 60.0


class Curves:
    """curve.png and loss.png of `run_dir` for the evaluations in `evaluations` (a list the
    evaluator appends to) and its anchors (`anchors()`, in rising strength). `redraw_s`: the
    least time between two drawings; None: only when draw_pending() is told to draw."""

    def __init__(self, run_dir, evaluations, anchors, log, *, redraw_s=REDRAW_S,
                 clock=time.monotonic):
        self.run_dir, self.evaluations, self.anchors, self.log = run_dir, evaluations, anchors, log
        self.redraw_s, self.clock = redraw_s, clock
        self.drawn_at = None                  # when the curves were last drawn
        self.undrawn = None                   # ratings newer than the curves

    def redraw(self, ratings):
        """The curves of `ratings`, now if they are due (draw_pending's `when_due`)."""
        self.undrawn = ratings
        self.draw_pending(when_due=True)

    def draw_pending(self, when_due=False):
        """Draws the newest ratings not drawn yet, if any (`when_due`: only once redraw_s has
        passed since the last drawing, or before the first; never when redraw_s is None)."""
        if self.undrawn is None or (when_due and (
                self.redraw_s is None or (self.drawn_at is not None
                                          and self.clock() - self.drawn_at < self.redraw_s))):
            return
        ratings, self.undrawn = self.undrawn, None
        self.drawn_at = self.clock()
        try:
            draw_curve(self.run_dir.curve, self.evaluations, ratings, list(self.anchors()),
                       strength=read_strength(self.run_dir.ratings_table))
            draw_losses(self.run_dir.losses, self.run_dir.metrics)
        except Exception as err:        # a plot must never stop the evaluator
            self.log.warning("could not draw the curves: %s", err)
