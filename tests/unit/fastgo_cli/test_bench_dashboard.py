"""`fastgo bench dashboard` on a small synthetic run directory: the directory it builds holds
what it says (rated checkpoints, games in shards) and the snapshot it times sees all of it."""
import json

from fastgo_cli.main import main


def test_bench_dashboard_builds_and_times_a_run_directory(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "dashboard", "--checkpoints", "6", "--games", "70",
                 "--run-dir", str(tmp_path / "run"), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["points"] == 6 and figures["checkpoints"] == 6 and figures["games"] == 70
    assert len(figures["first_snapshot_runs_s"]) == 3 and figures["first_snapshot_s"] > 0
    assert "6 checkpoints, 70 games" in capsys.readouterr().out

    from dashboard.run_view import RunView
    snap = RunView(str(tmp_path / "run")).snapshot()
    assert len(snap["checkpoints"]) == 6
    assert sum(g["moves"] > 0 for g in snap["games"]) == 20        # NEWEST_GAMES of 70
    cgos = [p["cgos"] for p in snap["strength"]["points"]]
    assert all(c is not None for c in cgos)                          # all played gnugo:10
