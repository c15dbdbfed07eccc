"""The evaluator's pictures (evaluation.curves): the first ratings drawn at once, newer ones at
most once in redraw_s (the newest only), what is pending drawn when told, nothing drawn twice."""
import logging

import pytest

from evaluation import curves as eval_curves
from evaluation.curves import REDRAW_S, Curves
from rundata.rundir import open_run_dir


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def drawn(monkeypatch):
    """The ratings each drawing was made for, in order (no picture is drawn)."""
    out = []
    monkeypatch.setattr(eval_curves, "draw_curve",
                        lambda path, evaluations, ratings, *a, **k: out.append(ratings))
    monkeypatch.setattr(eval_curves, "draw_losses", lambda *a, **k: None)
    return out


def curves(tmp_path, clock, redraw_s=REDRAW_S):
    return Curves(open_run_dir(tmp_path / "run"), [], lambda: {}, logging.getLogger("test"),
                  redraw_s=redraw_s, clock=clock)


def test_drawn_at_once_then_at_most_once_a_redraw_interval(tmp_path, drawn):
    clock = Clock()
    pictures = curves(tmp_path, clock)
    pictures.redraw({"ckpt-1": 1})
    assert drawn == [{"ckpt-1": 1}]
    clock.now = REDRAW_S / 2
    pictures.redraw({"ckpt-2": 2})
    pictures.redraw({"ckpt-3": 3})
    pictures.draw_pending(when_due=True)
    assert drawn == [{"ckpt-1": 1}]                              # within the interval: waiting
    clock.now = REDRAW_S + 1.0
    pictures.draw_pending(when_due=True)
    assert drawn == [{"ckpt-1": 1}, {"ckpt-3": 3}]               # the newest, once due
    pictures.draw_pending()
    assert len(drawn) == 2                                       # nothing pending
    clock.now += 1.0
    pictures.redraw({"ckpt-4": 4})
    assert len(drawn) == 2
    pictures.draw_pending()                                      # a refinement ended
    assert drawn[-1] == {"ckpt-4": 4}


def test_without_an_interval_only_when_told(tmp_path, drawn):
    """redraw_s None (`fastgo evaluate --once`): never by time, only by draw_pending()."""
    clock = Clock()
    pictures = curves(tmp_path, clock, redraw_s=None)
    pictures.redraw({"ckpt-5": 5})
    clock.now = 10 * REDRAW_S
    pictures.draw_pending(when_due=True)
    assert drawn == []
    pictures.draw_pending()
    assert drawn == [{"ckpt-5": 5}]


def test_a_failing_drawing_is_a_warning(tmp_path, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise ValueError("no font")
    monkeypatch.setattr(eval_curves, "draw_curve", broken)
    with caplog.at_level(logging.WARNING):
        curves(tmp_path, Clock()).redraw({"ckpt-1": 1})
    assert "could not draw the curves: no font" in caplog.text
