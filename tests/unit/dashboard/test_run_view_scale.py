"""What the dashboard says of a run's scale and state (dashboard.run_view): the chart's caption
true to the scale of its points (CGOS's from games against gnugo:10, CGOS's through the ladder's
calibration, Elo over random), the anchors the evaluator skipped with the command that adds each,
a run that has ended, and the reference players offered to play (dashboard.server)."""
import io
import json
import os
import time
import zipfile

import pytest

from dashboard.run_view import RUNNING_S, NotFound, RunView
from dashboard.server import _reference_game
from dashboard.sessions import SessionError
from fastgo import reference_players as refs
from rundata import ladder
from rundata.ratings_table import RatingsTable, append_result
from rundata.rundir import open_run_dir, status_path


def rated_run(root, opponents):
    """A run whose checkpoints ckpt-100 and ckpt-200 played `opponents` [(name, wins, losses)]
    each, and random 10-0."""
    run = open_run_dir(root)
    for step in (100, 200):
        name = f"ckpt-{step}"
        append_result(run.ratings_table, name, "random", 10, 0)
        for other, wins, losses in opponents:
            append_result(run.ratings_table, name, other, wins, losses)
        with open(run.evaluations, "a") as handle:
            handle.write(json.dumps({"player": name, "step": step, "wall_s": step,
                                     "games": step, "opponents": ["random"]}) + "\n")
    return run


def test_the_caption_says_which_scale_the_points_are_on(tmp_path, monkeypatch):
    direct = RunView(rated_run(tmp_path / "a", [("gnugo:10", 4, 6)]).root).strength()
    assert direct["scale"] == "cgos" and all(p["cgos"] for p in direct["points"])
    assert "CGOS's 9x9 scale (gnugo:10 = 1800, from the run's games against it)" in \
        direct["scale_note"]
    alone = RunView(rated_run(tmp_path / "b", []).root).strength()
    assert alone["scale"] == "elo" and not any(p["cgos"] for p in alone["points"])
    assert alone["scale_note"].startswith("Points: each checkpoint's Elo over random")
    assert "not on CGOS's scale" in alone["scale_note"]
    # a rung calibrated against gnugo:10 (rows made up for the test), never gnugo:10 itself
    table = RatingsTable([{"a": "ref:low", "b": "gnugo:10", "wins_a": 6, "wins_b": 10,
                           "draws": 0, "games": 16}])
    monkeypatch.setattr(ladder, "calibration", lambda: table)
    through = RunView(rated_run(tmp_path / "c", [("ref:low", 8, 8)]).root).strength()
    assert through["scale"] == "cgos" and all(p["cgos"] for p in through["points"])
    assert "through the ladder's calibration games" in through["scale_note"]
    assert "from the run's games" not in through["scale_note"]


def write_status(run, role, data, age_s=0.0):
    path = status_path(run, role)
    with open(path, "w") as handle:
        json.dump(data, handle)
    if age_s:
        stamp = time.time() - age_s
        os.utime(path, (stamp, stamp))


def test_skipped_anchors_and_whether_the_run_is_running(tmp_path):
    run = open_run_dir(tmp_path / "run")
    view = RunView(run.root)
    assert view.status()["running"] is False and view.status()["updated"] is None
    skipped = [{"what": "GNU Go", "anchors": ["gnugo:1", "gnugo:10"],
                "command": "apt-get install gnugo", "why": "GNU Go is not installed"},
               {"what": "KataGo", "anchors": "katago:1"}]                    # malformed: left out
    write_status(run, "evaluate", {"cpu_share": 0.1, "cpu_budget": 0.2,
                                   "skipped_anchors": skipped})
    status = view.status()
    assert status["running"] is True and status["skipped_anchors"] == skipped[:1]
    # every status file older than RUNNING_S: the run has ended
    write_status(run, "evaluate", {"skipped_anchors": skipped}, age_s=RUNNING_S + 60)
    write_status(run, "train", {"step": 5}, age_s=RUNNING_S + 30)
    status = view.status()
    assert status["running"] is False
    assert abs(status["updated"] - (time.time() - RUNNING_S - 30)) < 5
    assert view.snapshot()["status"]["running"] is False


def stored_zip(payload):
    """The bytes of a zip archive of one stored entry (what a checkpoint file's check reads)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("data.pkl", payload)
    return out.getvalue()


@pytest.fixture
def folder(tmp_path, monkeypatch, reference_folder):
    folder = reference_folder(tmp_path / "refs", [("low", 12)])
    monkeypatch.setenv(refs.REFERENCES_ENV, str(folder))
    return folder


def test_the_page_offers_the_reference_players_at_their_visits(tmp_path, folder):
    view = RunView(open_run_dir(tmp_path / "run").root)
    assert view.snapshot()["references"] == [{"name": "ref:low", "visits": 12, "board_size": 9}]
    # its file read and checked, its network loaded from those bytes: 9x9, komi 7.5 (none recorded)
    assert _reference_game("REF:low") == ("ref:low", str(folder / "low.ckpt"), 12, (9, 7.5))
    with pytest.raises(NotFound, match=r"unknown reference player ref:high \(known: ref:low\)"):
        _reference_game("ref:high")
    (folder / "low.ckpt").write_bytes(stored_zip(b"other weights"))
    with pytest.raises(SessionError, match="a damaged or replaced file"):
        _reference_game("ref:low")
