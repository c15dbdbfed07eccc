"""The curve's layout arithmetic (evaluation.plots): where each anchor's line runs and how its label
is kept clear of the others."""
import pytest

from evaluation.plots import anchor_spans, curve_limits, label_lifts


def test_anchor_lines_span_the_checkpoints_that_played_them():
    evaluations = [{"player": "ckpt-0", "wall_s": 60, "games": 10, "opponents": ["random"]},
                   {"player": "ckpt-9", "wall_s": 600, "games": 900,
                    "opponents": ["ckpt-0", "random", "mcts:100"]},
                   {"player": "ckpt-20", "wall_s": 1200, "games": 2000,
                    "opponents": ["ckpt-9", "mcts:100"]},
                   {"player": "ckpt-30", "wall_s": 1800, "games": 3000}]    # an older row
    anchors = ["random", "mcts:100", "gnugo:1"]
    assert anchor_spans(evaluations, anchors, "wall_s") == {"random": (60, 600),
                                                           "mcts:100": (600, 1200)}
    assert anchor_spans(evaluations, anchors, "games")["mcts:100"] == (900, 2000)


def test_anchor_lines_also_span_what_the_ratings_table_says_was_played():
    # a checkpoint's row names only its first opponent; anchors played later, while its
    # rating was refined, are in the ratings table's rows (either order of a and b)
    evaluations = [{"player": "ckpt-0", "wall_s": 60, "games": 10, "opponents": ["random"]},
                   {"player": "ckpt-9", "wall_s": 600, "games": 900, "opponents": ["ckpt-0"]},
                   {"player": "ckpt-20", "wall_s": 1200, "games": 2000,
                    "opponents": ["ckpt-9"]}]
    rows = [{"a": "ckpt-9", "b": "gnugo:1"}, {"a": "gnugo:1", "b": "ckpt-20"},
            {"a": "ckpt-20", "b": "ckpt-9"}]
    spans = anchor_spans(evaluations, ["random", "gnugo:1"], "wall_s", rows)
    assert spans == {"random": (60, 60), "gnugo:1": (600, 1200)}


def test_the_elo_axis_holds_the_ratings_not_one_sided_intervals():
    assert curve_limits([0.0, 350.0, 1200.0]) == (-150.0, 1350.0)
    assert curve_limits([float("nan")]) == (-150.0, 150.0)


def test_curve_labels_close_in_elo_are_lifted_apart():
    # an axis 330 points tall showing 0..1650 Elo: 5 Elo a point; labels 9 points apart
    assert label_lifts([0.0, 1000.0], (0.0, 1650.0)) == [0.0, 0.0]
    # three at 0, 10 and 20 Elo (0, 2 and 4 points up): lifted to 0, 9 and 18 points
    assert label_lifts([10.0, 0.0, 20.0], (0.0, 1650.0)) == pytest.approx([7.0, 0.0, 14.0])


def test_the_curve_draws_with_gain_bars(tmp_path):
    from evaluation.plots import draw_curve
    from rundata.elo_fit import fit_ratings
    rows = [{"a": "ckpt-0", "b": "random", "wins_a": 4, "wins_b": 4},
            {"a": "ckpt-100", "b": "ckpt-0", "wins_a": 8, "wins_b": 0},
            {"a": "ckpt-200", "b": "ckpt-100", "wins_a": 20, "wins_b": 12}]
    evaluations = [{"player": f"ckpt-{s}", "wall_s": s * 3.0, "games": s * 2, "opponents": []}
                   for s in (0, 100, 200)]
    out = tmp_path / "curve.png"
    assert draw_curve(str(out), evaluations, fit_ratings(rows), ["random"], rows=rows)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
