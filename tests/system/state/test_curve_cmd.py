"""`fastgo curve`: several runs' learning curves in one PNG, each labelled with its algorithm;
one-line errors with exit status 2."""
from __future__ import annotations

import json
import subprocess
import sys

from evaluation.plots import read_run


def make_run(root, results, evaluations, metrics_header):
    root.mkdir(parents=True)
    with open(root / "ratings.jsonl", "w") as handle:
        for a, b, wa, wb in results:
            handle.write(json.dumps({"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": 0,
                                     "games": wa + wb}) + "\n")
        handle.write('{"a": "trunc')                      # a torn last line is skipped
    with open(root / "evaluations.jsonl", "w") as handle:
        for player, step, wall in evaluations:
            handle.write(json.dumps({"player": player, "step": step, "wall_s": wall,
                                     "games": step}) + "\n")
        handle.write("not json\n")
    (root / "metrics.csv").write_text(metrics_header + "\n")
    return root


def fastgo(*args):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_two_runs_in_one_plot(tmp_path):
    az = make_run(tmp_path / "az", [("ckpt-0", "random", 6, 6), ("ckpt-10", "random", 10, 10)],
                  [("ckpt-0", 0, 0.0), ("ckpt-10", 10, 600.0)],
                  "step,time,positions,games,window,samples,samples_per_s,loss,policy_loss")
    rf = make_run(tmp_path / "rf", [("ckpt-0", "random", 10, 10), ("ckpt-4", "random", 16, 4),
                                    ("ckpt-4", "mcts:100", 10, 10)],
                  [("ckpt-0", 0, 0.0), ("ckpt-4", 4, 300.0), ("ghost", 8, 400.0)],
                  "step,time,games,positions,loss,policy_loss,value_loss,advantage,win_rate,"
                  "staleness,pool")
    run = read_run(str(rf))
    assert run["algorithm"] == "reinforce" and read_run(str(az))["algorithm"] == "alphazero"
    assert [e["player"] for e in run["evaluations"]] == ["ckpt-0", "ckpt-4"]   # ghost: unrated
    out = tmp_path / "compare.png"
    proc = fastgo("curve", az, rf, "-o", out, "--labels", "AZ,RF")
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = proc.stdout.splitlines()
    # ckpt-0 and ckpt-10 both level with random: Elo 0 exactly, whatever the priors' virtual draws
    assert lines[0].startswith("AZ (alphazero): 2 rated checkpoints over 10.0 min; last ckpt-10 Elo +0 ")
    assert lines[1].startswith("RF (reinforce): 2 rated checkpoints over 5.0 min; last ckpt-4 Elo +")
    assert lines[2] == f"wrote {out}"


def test_errors_are_one_line_exit_2(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    good = make_run(tmp_path / "good", [("ckpt-0", "random", 5, 5)], [("ckpt-0", 0, 0.0)], "step")
    for args, words in (
            ((good, empty), f"{empty}: no ratings"),
            ((good, tmp_path / "missing"), "not a directory"),
            ((good, good, "--labels", "a"), "--labels needs 2"),
            ((good, "-o", tmp_path / "x.txt"), "is a .png"),
            ((good, "-o", tmp_path / "nowhere" / "x.png"), "no directory"),
            ((), "required: RUN_DIR"), ((good, "--bogus"), "unrecognized arguments")):
        proc = fastgo("curve", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        err = proc.stderr.strip()
        assert "\n" not in err and err.startswith("fastgo curve: ") and words in err, err
        assert "Traceback" not in proc.stderr
    unrated = make_run(tmp_path / "unrated", [("ckpt-0", "random", 5, 5)], [("other", 0, 0.0)], "")
    proc = fastgo("curve", unrated)
    assert proc.returncode == 2 and "no rated checkpoint" in proc.stderr
