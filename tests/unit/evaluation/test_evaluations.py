"""evaluations.jsonl (evaluation.evaluations): its reader fuzzed with hypothesis, bounded, and
replaying tests/corpus/state/ (any bytes give a list of well-formed rows, possibly empty, never
an exception, and the file is never rewritten); its writer after a torn line and with a row its
reader would drop."""
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.evaluations import append_evaluation, read_evaluations

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = pathlib.Path(__file__).resolve().parents[2] / "corpus"
LINE = st.one_of(st.text(max_size=40), st.builds(
    '{{"step": {}, "elo": {}, "games": {}}}'.format,
    st.one_of(st.integers(-3, 2**70), st.text(max_size=4)),
    st.one_of(st.floats(), st.text(max_size=4)), st.integers(-3, 10)))


@FUZZ
@given(data=st.one_of(st.binary(max_size=400), st.lists(LINE, max_size=6).map(
    lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))))
def test_fuzz_evaluations(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("state") / "evaluations.jsonl"
    path.write_bytes(data)
    assert isinstance(read_evaluations(path), list)
    assert path.read_bytes() == data


@pytest.mark.parametrize("path", sorted((CORPUS / "state").iterdir()), ids=lambda p: p.name)
def test_state_corpus(path):
    assert read_evaluations(path) == []


@FUZZ
@given(torn=st.binary(max_size=60).filter(lambda b: b"\n" not in b),
       rows=st.integers(0, 3))
def test_a_row_appended_after_a_torn_line_is_read(tmp_path_factory, torn, rows):
    """A crash mid-append leaves a last line without its newline: the evaluator's next row goes
    on a fresh line, so it is read back whole and the rows before it are kept (it used to be
    glued onto the torn line, and both were lost)."""
    import json

    path = tmp_path_factory.mktemp("state") / "evaluations.jsonl"
    good = [{"player": f"ckpt-{k}", "step": k, "wall_s": k, "games": k} for k in range(rows)]
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in good) + torn)
    new = {"player": "ckpt-99", "step": 99, "wall_s": 9.0, "games": 5}
    append_evaluation(str(path), new)
    read = read_evaluations(path)
    assert read[:rows] == good and read[-1] == new
    assert path.read_bytes().endswith(json.dumps(new).encode() + b"\n")


@pytest.mark.parametrize("row", [{"player": "ckpt-1", "step": -1, "wall_s": 0, "games": 0},
                                 {"player": "", "step": 1, "wall_s": 0, "games": 0},
                                 {"step": 1, "wall_s": 0, "games": 0},
                                 {"player": "ckpt-1", "step": 1, "wall_s": float("nan"),
                                  "games": 0}])
def test_the_writer_refuses_a_row_its_reader_would_drop(tmp_path, row):
    path = tmp_path / "evaluations.jsonl"
    with pytest.raises(ValueError, match="not an evaluations.jsonl row"):
        append_evaluation(str(path), row)
    assert not path.exists()


def test_cadence_counts_points_gaps_lag_and_share():
    from evaluation.evaluations import cadence

    # checkpoints written every 10 s from t=0; points rated at 100, 300 and 450 s rating the
    # checkpoints written at 90, 280 and 440 s
    written = [10.0 * k for k in range(0, 61)]
    rows = [{"player": "ckpt-9", "time": 90.0, "rated": 100.0, "eval_cpu_s": 10.0,
             "eval_wall_s": 100.0},
            {"player": "ckpt-28", "time": 280.0, "rated": 300.0, "eval_cpu_s": 50.0,
             "eval_wall_s": 300.0},
            {"player": "ckpt-44", "time": 440.0, "rated": 450.0, "eval_cpu_s": 80.0,
             "eval_wall_s": 450.0},
            {"player": "ckpt-5", "time": 50.0, "wall_s": 50.0}]          # an older row
    figures = cadence(rows, written, 0.0, 600.0)
    assert figures["points"] == 3
    assert figures["max_gap_s"] == 200.0                 # 100 -> 300
    # just before 300 s the newest checkpoint is 300 s old... written at 300: 300 - 90 = 210;
    # before 450: 450 - 280 = 170; at the end: 600 - 440 = 160
    assert figures["max_lag_s"] == 210.0
    assert figures["cpu_share"] == (80.0 - 10.0) / (450.0 - 100.0)
    late = cadence(rows, written, 200.0, 600.0)
    assert late["points"] == 2 and late["max_gap_s"] == 150.0 and late["max_lag_s"] == 210.0


def test_cadence_leaves_the_pause_of_a_resumed_run_out():
    from evaluation.evaluations import cadence, running_seconds

    assert running_seconds(0, 100, [(20, 50)]) == 70.0
    assert running_seconds(30, 40, [(20, 50)]) == 0.0 and running_seconds(9, 3, []) == 0.0
    # checkpoints every 10 s for 300 s, a stop of 10,000 s, then every 10 s again for 300 s;
    # points rated 10 s after checkpoints 280 (first piece) and 10,310 and 10,500 (second)
    written = [10.0 * k for k in range(31)] + [10_300.0 + 10.0 * k for k in range(31)]
    rows = [{"player": "a", "time": 280.0, "rated": 290.0},
            {"player": "b", "time": 10_310.0, "rated": 10_320.0},
            {"player": "c", "time": 10_500.0, "rated": 10_510.0}]
    figures = cadence(rows, written, 200.0, 10_600.0)
    assert figures["points"] == 3
    # 290 -> 10,320 is 30 s of running time (300 -> 10,300 stopped); 10,320 -> 10,510: 190 s
    assert figures["max_gap_s"] == 190.0
    # before b: the newest checkpoint (10,310) is 30 s of running after a's (280);
    # before c: 10,510 - 10,310 = 200 s; at the end: 10,600 - 10,500 = 100 s
    assert figures["max_lag_s"] == 200.0


# --- the run's wall time across pauses ---------------------------------------------------------

def test_run_clock_leaves_a_pause_out_and_keeps_earlier_checkpoints_as_they_were():
    from evaluation.evaluations import PAUSE_S, RunClock
    # a run started at t=1000; its last row: a checkpoint written at 7000 (wall 6000), rated at
    # 7100; the trainer's last metrics row at 7050; the evaluator starts again at 17000
    rows = [{"player": "ckpt-1", "step": 1, "wall_s": 100.0, "games": 1, "time": 1100.0},
            {"player": "ckpt-9", "step": 9, "wall_s": 6000.0, "games": 9, "time": 7000.0,
             "rated": 7100.0}]
    clock = RunClock(rows, written=[6950.0, 7150.0, 99999.0], now=17000.0, fallback_start=0)
    # the newest write before now is 7150: 9850 s stopped
    assert clock.pause_s == 9850.0 and clock.paused_at == 7150.0
    assert clock.wall_s(17100.0) == 17100.0 - 1000.0 - 9850.0       # 6250: on from 6150
    assert clock.wall_s(7000.0) == 6000.0                           # before the pause: as was
    # a restart within the run (the trainer wrote a minute ago): no pause
    busy = RunClock(rows, written=[16940.0], now=17000.0, fallback_start=0)
    assert busy.paused_at is None and busy.wall_s(17100.0) == 16100.0
    # just under the threshold is no pause either
    short = RunClock(rows, written=[], now=7100.0 + PAUSE_S, fallback_start=0)
    assert short.paused_at is None
    # no row yet: from the first checkpoint's time, never below 0
    fresh = RunClock([], written=[5.0], now=50.0, fallback_start=10.0)
    assert fresh.wall_s(40.0) == 30.0 and fresh.wall_s(3.0) == 0.0


def test_a_second_pause_adds_to_the_first():
    from evaluation.evaluations import RunClock
    first = RunClock([{"player": "ckpt-1", "step": 1, "wall_s": 50.0, "games": 1,
                       "time": 1050.0}], written=[], now=5000.0, fallback_start=0)
    wall = first.wall_s(5100.0)                  # 50 + 100: the pause of 3950 s left out
    assert wall == 150.0
    row = {"player": "ckpt-2", "step": 2, "wall_s": wall, "games": 2, "time": 5100.0}
    second = RunClock([row], written=[], now=9100.0, fallback_start=0)
    assert second.wall_s(9200.0) == 250.0        # both pauses left out
