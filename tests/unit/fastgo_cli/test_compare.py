"""`fastgo compare` without running anything: durations, opponents, the plan from two configs,
the children's command lines, and compare.json and the Markdown table assembled from
fabricated run directories (state files and arena JSON written by hand); bad input is one line
on stderr with exit status 2, a run without a checkpoint exit status 1."""
import json
import math
import os

import pytest

from comparison.compare import cluster_argv, duration_text
from comparison.plan import CompareError, Opponent, check_opponent, parse_opponents
from comparison.report import markdown_table, run_label
from comparison.results import (
    assemble,
    head_to_head_paths,
    match_entry,
    match_paths,
    read_match,
    run_progress,
)
from fastgo_cli.compare_cmd import make_plan
from fastgo_cli.main import command_parser, main
from rundata.config import load_config


def run_main(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parse(*argv):
    parser, _ = command_parser("compare")
    return parser.parse_args([str(a) for a in argv])


# --- arguments ---------------------------------------------------------------------------------

def test_durations():
    for text, seconds in (("90s", 90.0), ("90", 90.0), ("30m", 1800.0), ("2h", 7200.0),
                          ("1.5h", 5400.0)):
        assert parse("quickstart", "quickstart", "--duration", text).seconds == seconds
    assert parse("quickstart", "quickstart").seconds is None
    # as `fastgo cluster --duration` reads it back
    assert duration_text(1800.0) == "1800" and duration_text(20.5) == "20.5"


@pytest.mark.parametrize("text", ["5x", "0", "-1m", "m", "1e3s", ""])
def test_bad_durations_are_one_line(capsys, tmp_path, text):
    code, out, err = run_main(capsys, "compare", "quickstart", "quickstart", "--duration", text,
                              "--out", tmp_path / "o")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--duration" in err, err


def test_opponents():
    found = parse_opponents('mcts:1000, gnugo:1,random,gtp:"prog --a, --b"')
    assert [o.label for o in found] == ["mcts:1000", "gnugo:1", "random", 'gtp:"prog --a, --b"']
    assert found[0].spec == "mcts:1000"
    assert found[1].spec == "gnugo:1"             # the arena starts it (play.specs)
    assert found[3].spec == 'gtp:"prog --a, --b"'
    for bad, words in (("foo:3", "unknown player spec 'foo:3'"), ("mcts:x", "playouts must"),
                       ("mcts:0", "playouts must"), ("gnugo:11", "LEVEL in 0..10"),
                       ("gnugo", "gnugo:LEVEL"), ("", "comma-separated"), ("random,", "comma"),
                       ("random,random", "named twice"), ("gtp:", "no command"),
                       ("nothing.ckpt", "no such checkpoint")):
        with pytest.raises(CompareError, match=words):
            parse_opponents(bad)


def test_missing_gnugo_is_named(monkeypatch):
    from fastgo import player_spec

    monkeypatch.setattr(player_spec, "GNUGO_PROGRAM", "no-such-gnugo-program")
    opponent = parse_opponents("gnugo:1")[0]
    with pytest.raises(CompareError, match="GNU Go is not installed") as info:
        check_opponent(opponent, 9, 7.5)
    assert "\n" not in str(info.value)
    check_opponent(Opponent("random", "random"), 9, 7.5)        # nothing to start


def test_missing_katago_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("FASTGO_KATAGO_HOME", str(tmp_path / "no-katago"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("FASTGO_KATAGO", raising=False)
    opponent = parse_opponents("katago:8")[0]
    assert opponent.spec == "katago:8"
    with pytest.raises(CompareError, match="KataGo's program not found") as info:
        check_opponent(opponent, 9, 7.5)
    assert "\n" not in str(info.value) and "fastgo katago fetch" in str(info.value)


def test_plan_gives_both_runs_the_same_seeds(tmp_path):
    args = parse("quickstart", "9x9_cpu", "--duration", "30m", "--out", tmp_path / "o",
                 "--opponents", "random,mcts:10", "--seed", "5", "--set", "trainer.lr=0.01",
                 "--set-b", "trainer.seed=9")
    plan = make_plan(args)
    a, b = plan.runs
    assert (a.name, a.config_name, b.config_name) == ("a", "quickstart", "9x9_cpu")
    assert a.overrides == ("selfplay.seed=5", "trainer.seed=5", "server.init_seed=5",
                           "trainer.lr=0.01")
    config_a = load_config(a.config_path, overrides=a.overrides)
    config_b = load_config(b.config_path, overrides=b.overrides)
    assert (config_a.selfplay.seed, config_a.trainer.seed, config_a.server.init_seed) == (5, 5, 5)
    assert config_b.trainer.seed == 9 and config_b.selfplay.seed == 5      # --set-b comes last
    assert config_a.trainer.lr == config_b.trainer.lr == 0.01
    assert plan.seconds == 1800.0 and plan.out == str(tmp_path / "o")
    kept = make_plan(parse("quickstart", "quickstart", "--duration", "1m", "--out",
                           tmp_path / "k", "--opponents", "random", "--config-seeds"))
    assert kept.runs[0].overrides == ()


def test_command_lines(tmp_path):
    plan = make_plan(parse("quickstart", "quickstart", "--duration", "90s", "--out",
                           tmp_path / "o", "--opponents", "random", "--games", "6",
                           "--visits", "8"))
    run = plan.runs[0]
    argv = cluster_argv(run, plan.root("a"), plan.seconds)
    assert argv[:7] == ["cluster", "--config", run.config_path, "--run-dir",
                        str(tmp_path / "o" / "a"), "--duration", "90"]
    assert argv[7:] == ["--set", "selfplay.seed=1", "--set", "trainer.seed=1",
                        "--set", "server.init_seed=1"]
    # the matches' plans: tests/unit/comparison/test_arena_plan.py


def test_bad_input_is_one_line(capsys, tmp_path):
    busy = tmp_path / "busy"
    (busy / "a").mkdir(parents=True)
    (busy / "a" / "x").write_text("")
    for argv, code, words in (
            (["nope", "quickstart", "--duration", "5m"], 2, "config A: unknown config 'nope'"),
            (["quickstart", tmp_path / "none.toml", "--duration", "5m"], 2, "config B: "),
            (["quickstart", "quickstart", "--duration", "5m", "--opponents", "foo:3"], 2,
             "unknown player spec 'foo:3'"),
            (["quickstart", "quickstart", "--opponents", "random"], 2, "--duration is required"),
            (["quickstart", "quickstart", "--duration", "0.5s"], 2, "at least 1 s"),
            (["quickstart", "quickstart", "--duration", "5m", "--games", "0"], 2, "--games"),
            (["quickstart", "quickstart", "--duration", "5m", "--set", "trainer.nokey=1",
              "--opponents", "random"], 2, "nokey"),
            (["quickstart", "quickstart", "--duration", "5m", "--opponents", "random",
              "--out", busy], 2, "exists and is not empty"),
            (["quickstart", "quickstart", "--skip-runs", "--opponents", "random",
              "--out", tmp_path / "nothing"], 2, "no run directory"),
            (["quickstart", "quickstart", "--duration", "5m", "--game-seconds", "40",
              "--visits", "8"], 2, "give visits or a game clock, not both"),
            (["quickstart", "quickstart", "--duration", "5m", "--game-seconds", "40",
              "--move-seconds", "1"], 2, "give one time control, not both")):
        got, out, err = run_main(capsys, "compare", *argv)
        assert got == code, (argv, err)
        assert err.startswith("fastgo compare: ") and err.count("\n") == 1, err
        assert words in err, err
        assert out == ""


# --- fabricated run directories ----------------------------------------------------------------

def make_run(root, *, checkpoints=(), status=None, metrics=(), results=(), evaluations=()):
    """A run directory with the given checkpoint steps (empty files), trainer status, metrics
    rows {column: value}, ratings rows (a, b, wins_a, wins_b) and evaluations
    (player, step, wall_s, games)."""
    for sub in ("checkpoints", "logs"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for step in checkpoints:
        (root / "checkpoints" / f"ckpt-{step:09d}.ckpt").write_bytes(b"")
    if status is not None:
        (root / "logs" / "train.status.json").write_text(json.dumps(status))
    if metrics:
        header = list(metrics[0])
        lines = [",".join(header)] + [",".join(str(row[k]) for k in header) for row in metrics]
        (root / "metrics.csv").write_text("\n".join(lines) + "\n")
    if results:
        with open(root / "ratings.jsonl", "w") as handle:
            handle.writelines(json.dumps({"a": a, "b": b, "wins_a": wa, "wins_b": wb, "draws": 0,
                                         "games": wa + wb}) + "\n" for a, b, wa, wb in results)
    if evaluations:
        with open(root / "evaluations.jsonl", "w") as handle:
            for player, step, wall, games in evaluations:
                handle.write(json.dumps({"player": player, "step": step, "wall_s": wall,
                                         "games": games}) + "\n")
    return root


def write_match(out, run, label, checkpoint, wins, losses, draws=0, visits=2, **extra):
    """The arena's --json output for `checkpoint` against `label`, newer than the checkpoint."""
    path = match_paths(str(out), run, Opponent(label, label))[0]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = {"a": f"{os.path.normpath(checkpoint)}#7@v{visits}", "b": label,
            "games": wins + losses + draws, "wins_a": wins, "wins_b": losses, "draws": draws,
            "visits": visits, "interrupted": False, **extra}
    with open(path, "w") as handle:
        json.dump(data, handle)
    stamp = os.path.getmtime(checkpoint) + 5
    os.utime(path, (stamp, stamp))
    return path


def fabricated(tmp_path):
    """OUT with run a (3 checkpoints, rated, both matches) and run b (one checkpoint, metrics
    only, no ratings, one match with a draw)."""
    out = tmp_path / "out"
    make_run(out / "a", checkpoints=(0, 10, 20),
             status={"step": 18, "games": 300, "latest": 10},
             metrics=[{"step": 10, "games": 150}, {"step": 20, "games": 310}],
             results=[("ckpt-0", "random", 6, 6), ("ckpt-10", "random", 10, 10)],
             evaluations=[("ckpt-0", 0, 0.0, 0), ("ckpt-10", 10, 60.0, 150)])
    make_run(out / "b", checkpoints=(4,), metrics=[{"step": 4, "games": 40}])
    ckpt_a = str(out / "a" / "checkpoints" / "ckpt-000000020.ckpt")
    ckpt_b = str(out / "b" / "checkpoints" / "ckpt-000000004.ckpt")
    write_match(out, "a", "random", ckpt_a, 3, 1)
    write_match(out, "a", "mcts:10", ckpt_a, 0, 4)
    write_match(out, "b", "random", ckpt_b, 1, 2, 1)
    return out


def test_progress_takes_the_newer_of_status_and_metrics(tmp_path):
    out = fabricated(tmp_path)
    # status: step 18, games 300; last metrics row: step 20, games 310
    assert run_progress(out / "a") == {"games": 310, "steps": 20}
    assert run_progress(out / "b") == {"games": 40, "steps": 4}
    assert run_progress(tmp_path / "nothing") == {"games": 0, "steps": 0}


def test_match_entry_wilson():
    # 3 wins of 4: Wilson centre (0.75 + 1.96^2/8) / (1 + 1.96^2/4) = 0.6275, half 0.3269
    assert match_entry(3, 1, 0) == {"wins": 3, "losses": 1, "draws": 0, "games": 4,
                                    "win_rate": 0.75, "interval": [0.3006, 0.9544]}
    # a draw counts half: score 1.5 of 4
    assert match_entry(1, 2, 1)["win_rate"] == 0.375
    assert match_entry(1, 2, 1)["interval"] == [0.0919, 0.7806]


def test_read_match_only_takes_this_checkpoints_finished_match(tmp_path):
    out = fabricated(tmp_path)
    ckpt = str(out / "a" / "checkpoints" / "ckpt-000000020.ckpt")
    older = str(out / "a" / "checkpoints" / "ckpt-000000010.ckpt")
    path = match_paths(str(out), "a", Opponent("random", "random"))[0]
    assert read_match(path, ckpt, 4, 2)["wins"] == 3
    assert read_match(path, older, 4, 2) is None            # another checkpoint's match
    assert read_match(path, ckpt, 4, 64) is None            # other visits
    assert read_match(path, ckpt, 10, 2) is None            # other games
    write_match(out, "a", "random", ckpt, 1, 0, interrupted=True)
    assert read_match(path, ckpt, 1, 2) is None             # interrupted
    write_match(out, "a", "random", ckpt, 3, 1)
    stamp = os.path.getmtime(ckpt) - 5
    os.utime(path, (stamp, stamp))
    assert read_match(path, ckpt, 4, 2) is None             # older than the checkpoint
    # an equal-time match counts for its seconds a move only, and never for visits
    write_match(out, "a", "random", ckpt, 3, 1, visits=None, move_seconds=0.5)
    assert read_match(path, ckpt, 4, None, move_seconds=0.5)["wins"] == 3
    assert read_match(path, ckpt, 4, None, move_seconds=1.0) is None
    assert read_match(path, ckpt, 4, 2) is None
    write_match(out, "a", "random", ckpt, 3, 1)
    assert read_match(path, ckpt, 4, 2, move_seconds=0.5) is None
    # a game clock's match counts for that clock only
    write_match(out, "a", "random", ckpt, 3, 1, visits=None, game_seconds=40.0)
    assert read_match(path, ckpt, 4, None, game_seconds=40.0)["wins"] == 3
    assert read_match(path, ckpt, 4, None, game_seconds=20.0) is None
    assert read_match(path, ckpt, 4, None, move_seconds=0.5) is None
    assert read_match(path, ckpt, 4, 2) is None
    assert read_match(path, ckpt, 4, 2, game_seconds=40.0) is not None   # visits: not asked


def test_json_and_table_from_fabricated_runs(tmp_path):
    out = fabricated(tmp_path)
    plan = make_plan(parse("quickstart", "9x9_cpu", "--out", out, "--skip-runs", "--skip-matches",
                           "--opponents", "random,mcts:10", "--games", "4", "--visits", "2"))
    data, curves = assemble(plan)
    a, b = data["a"], data["b"]
    assert data["opponents"] == ["random", "mcts:10"] and data["games"] == 4
    assert (a["config"], a["games"], a["steps"]) == ("quickstart", 310, 20)
    assert (a["checkpoint"], a["checkpoint_step"]) == ("ckpt-000000020.ckpt", 20)
    assert a["matches"]["random"] == match_entry(3, 1, 0)
    assert a["matches"]["mcts:10"]["wins"] == 0 and a["matches"]["mcts:10"]["games"] == 4
    # 10-10 against the anchor, and ckpt-0 level too: Elo 0 exactly (the priors' virtual
    # draws, per pair and between consecutive checkpoints, are symmetric)
    assert [p["player"] for p in a["curve"]] == ["ckpt-0", "ckpt-10"]
    assert a["curve"][-1]["elo"] == 0.0 and a["last_elo"] == 0.0
    assert a["curve"][1]["wall_s"] == 60.0 and a["curve"][1]["games"] == 150
    assert (b["config"], b["games"], b["steps"], b["checkpoint_step"]) == ("9x9_cpu", 40, 4, 4)
    assert b["curve"] == [] and b["last_elo"] is None
    assert list(b["matches"]) == ["random"]                 # no mcts:10 match of b
    assert len(curves[0]["evaluations"]) == 2 and curves[1]["evaluations"] == []
    # 0 of 4: the Wilson upper bound is z^2 / (n + z^2) = 3.8416 / 7.8416 = 0.49
    assert markdown_table(data).splitlines() == [
        "| run | config | games | steps | last Elo | random | mcts:10 |",
        "|---|---|---:|---:|---:|---|---|",
        "| a | quickstart | 310 | 20 | +0 | 3/4 (0.30..0.95) | 0/4 (0.00..0.49) |",
        "| b | 9x9_cpu | 40 | 4 | - | 1 +1d/4 (0.09..0.78) | - |",
    ]


def write_head_to_head(out, ckpt_a, ckpt_b, wins, losses, games=None, visits=2):
    path = head_to_head_paths(str(out))[0]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = {"a": f"{os.path.normpath(ckpt_a)}#20@v{visits}", "b": f"{os.path.normpath(ckpt_b)}#4@v{visits}",
            "games": games or wins + losses, "wins_a": wins, "wins_b": losses, "draws": 0,
            "visits": visits, "interrupted": False}
    with open(path, "w") as handle:
        json.dump(data, handle)
    stamp = max(os.path.getmtime(ckpt_a), os.path.getmtime(ckpt_b)) + 5
    os.utime(path, (stamp, stamp))
    return path


def test_head_to_head_of_the_two_last_checkpoints(tmp_path):
    out = fabricated(tmp_path)
    ckpt_a = str(out / "a" / "checkpoints" / "ckpt-000000020.ckpt")
    ckpt_b = str(out / "b" / "checkpoints" / "ckpt-000000004.ckpt")
    plan = make_plan(parse("quickstart", "9x9_cpu", "--out", out, "--skip-runs", "--skip-matches",
                           "--opponents", "random", "--games", "4", "--visits", "2"))
    assert assemble(plan)[0]["a_vs_b"] is None                     # not played yet
    write_head_to_head(out, ckpt_a, ckpt_b, 3, 1, games=10)        # 4 results for 10 games
    plan10 = make_plan(parse("quickstart", "9x9_cpu", "--out", out, "--skip-runs",
                             "--skip-matches", "--opponents", "random", "--games", "10",
                             "--visits", "2"))
    assert assemble(plan10)[0]["a_vs_b"] is None
    write_head_to_head(out, ckpt_a, ckpt_b, 3, 1)
    match = assemble(plan)[0]["a_vs_b"]
    assert match["wins"] == 3 and match["interval"] == [0.3006, 0.9544]
    # Elo of a score s: 400 log10(s / (1 - s)); 0.75 -> +190.8, the Wilson bounds likewise
    assert match["elo"] == [190.8, round(400 * math.log10(0.3006 / 0.6994), 1),
                            round(400 * math.log10(0.9544 / 0.0456), 1)]
    assert markdown_table(assemble(plan)[0]).splitlines()[-1] == (
        "a against b (the last checkpoints): 3/4 (0.30..0.95), Elo a - b +191 (-147..+528)")
    # a match of other checkpoints (b's player is not b's last checkpoint) is not taken
    other_b = str(out / "a" / "checkpoints" / "ckpt-000000010.ckpt")
    write_head_to_head(out, ckpt_a, other_b, 3, 1)
    assert assemble(plan)[0]["a_vs_b"] is None
    # nor one older than b's checkpoint
    path = write_head_to_head(out, ckpt_a, ckpt_b, 3, 1)
    stamp = os.path.getmtime(ckpt_b) - 1
    os.utime(path, (stamp, stamp))
    assert assemble(plan)[0]["a_vs_b"] is None


def test_run_labels_name_what_sets_the_runs_apart():
    data = {"a": {"config": "quickstart", "overrides": ["selfplay.seed=1", "trainer.lr=0.1"]},
            "b": {"config": "quickstart", "overrides": ["selfplay.seed=1", "trainer.compile=true"]}}
    assert run_label(data, "a") == "a: quickstart trainer.lr=0.1"
    assert run_label(data, "b") == "b: quickstart trainer.compile=true"
    data["b"]["overrides"] = ["selfplay.seed=1", "trainer.lr=0.1"]
    assert run_label(data, "b") == "b: quickstart"


def test_the_command_on_existing_runs(capsys, tmp_path):
    out = fabricated(tmp_path)
    code, stdout, err = run_main(capsys, "compare", "quickstart", "9x9_cpu", "--out", out,
                                 "--skip-runs", "--skip-matches", "--opponents", "random,mcts:10",
                                 "--games", "4", "--visits", "2")
    assert code == 0, err
    lines = stdout.splitlines()
    assert "| a | quickstart | 310 | 20 | +0 | 3/4 (0.30..0.95) | 0/4 (0.00..0.49) |" in lines
    assert f"wrote {out / 'compare.json'}" in lines and f"wrote {out / 'compare.png'}" in lines
    data = json.loads((out / "compare.json").read_text())
    assert data["a"]["matches"]["random"]["interval"] == [0.3006, 0.9544]
    assert data["b"]["steps"] == 4
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_checkpoint_is_one_line(capsys, tmp_path):
    out = fabricated(tmp_path)
    for name in os.listdir(out / "b" / "checkpoints"):
        os.remove(out / "b" / "checkpoints" / name)
    code, _, err = run_main(capsys, "compare", "quickstart", "quickstart", "--out", out,
                            "--skip-runs", "--opponents", "random")
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"fastgo compare: run b ({out / 'b'}) produced no checkpoint")
    assert not (out / "compare.json").exists()


def test_fuzz_match_files_never_raise_and_only_whole_matches_count(tmp_path):
    """Whatever a match file holds, read_match returns None or an entry of exactly the games
    asked for, whose wins, losses and draws add up to them; the head-to-head path included."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    out = fabricated(tmp_path)
    ckpt_a = str(out / "a" / "checkpoints" / "ckpt-000000020.ckpt")
    ckpt_b = str(out / "b" / "checkpoints" / "ckpt-000000004.ckpt")
    path = head_to_head_paths(str(out))[0]
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 1 << 70), st.floats(),
                        st.text(max_size=8))
    names = st.sampled_from([f"{os.path.normpath(ckpt_a)}#20@v2",
                             f"{os.path.normpath(ckpt_b)}#4@v2", "random", ""])
    small = st.integers(0, 8)
    fields = st.fixed_dictionaries({                  # mostly near a real match file
        "a": st.one_of(names, scalars), "b": st.one_of(names, scalars),
        "games": st.one_of(st.just(4), small, scalars), "visits": st.one_of(st.just(2), scalars),
        "wins_a": st.one_of(small, scalars), "wins_b": st.one_of(small, scalars)},
        optional={"draws": st.one_of(st.integers(0, 3), scalars), "interrupted": scalars})

    @settings(max_examples=200, deadline=None)
    @given(fields, st.binary(max_size=40), st.integers(0, 3))
    def check(data, junk, kind):
        raw = kind == 0
        with open(path, "wb") as handle:
            handle.write(junk if raw else json.dumps(data).encode())
        stamp = max(os.path.getmtime(ckpt_a), os.path.getmtime(ckpt_b)) + 5
        os.utime(path, (stamp, stamp))
        for opponent in (None, ckpt_b):
            entry = read_match(path, ckpt_a, 4, 2, opponent_checkpoint=opponent)
            if entry is not None:
                assert entry["games"] == 4
                assert entry["wins"] + entry["losses"] + entry["draws"] == 4
                assert data["a"].startswith(os.path.normpath(ckpt_a) + "#")
                if opponent is not None:
                    assert data["b"].startswith(os.path.normpath(ckpt_b) + "#")

    check()
