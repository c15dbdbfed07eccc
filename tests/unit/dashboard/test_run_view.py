"""How the dashboard names a run's checkpoints (dashboard.run_view.RunView.checkpoint_path): a
file of checkpoints/ or evaluated/ by its file name or by the name the ratings and the curve
give it; anything else, or a name that leaves those folders, is NotFound (also for names
hypothesis draws)."""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.run_view import NotFound, RunView
from rundata.rundir import open_run_dir


def test_a_checkpoint_by_its_file_name_or_its_rated_name(tmp_path):
    run = open_run_dir(tmp_path / "run")
    os.makedirs(run.evaluated)
    for folder, step in ((run.checkpoints, 300), (run.evaluated, 100)):
        with open(os.path.join(folder, f"ckpt-{step:09d}.ckpt"), "wb") as handle:
            handle.write(b"x")
    view = RunView(run.root)
    in_checkpoints = os.path.join(run.checkpoints, "ckpt-000000300.ckpt")
    assert view.checkpoint_path("ckpt-000000300.ckpt") == in_checkpoints
    assert view.checkpoint_path("ckpt-300") == in_checkpoints
    # pruned by the trainer, kept by the evaluator
    assert view.checkpoint_path("ckpt-100") == os.path.join(run.evaluated, "ckpt-000000100.ckpt")
    for name in ("ckpt-200", "ckpt-0300", "ckpt-1234567890", "ckpt--1", "../ckpt-300",
                 "ckpt-300/../../x.ckpt", "ckpt-300.ckpt", 300, None, ["ckpt-300"]):
        with pytest.raises(NotFound):
            view.checkpoint_path(name)


@settings(max_examples=150, deadline=None)
@given(name=st.one_of(st.text(max_size=40),
                      st.from_regex(r"ckpt-[0-9]{1,12}(\.ckpt)?", fullmatch=True),
                      st.integers(), st.none()))
def test_any_name_is_a_file_of_the_two_folders_or_not_found(tmp_path_factory, name):
    root = tmp_path_factory.mktemp("fuzz") / "run"
    run = open_run_dir(root)
    with open(run.checkpoint(300), "wb") as handle:
        handle.write(b"x")
    view = RunView(run.root)
    try:
        path = view.checkpoint_path(name)
    except NotFound:
        return
    assert os.path.dirname(path) in (run.checkpoints, run.evaluated) and os.path.isfile(path)
    assert name in ("ckpt-300", "ckpt-000000300.ckpt")
