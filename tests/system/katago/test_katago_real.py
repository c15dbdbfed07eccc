"""The real KataGo (fetched into its cache by the fixture) as `katago:1` in `fastgo arena`
against random on 9x9: both games played out under our rules, no forfeit, KataGo wins them."""
import json
import subprocess
import sys


def test_katago_one_visit_beats_random_on_9x9(katago_env, tmp_path):
    out = tmp_path / "match.json"
    done = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "arena", "katago:1", "random", "--games", "2",
         "--size", "9", "--seed", "3", "--no-table", "--json", str(out)],
        env=katago_env, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["games"] == 2 and result["forfeits"] == [], result
    assert result["wins_a"] == 2 and result["a"] == "katago:1"


def test_a_temperature_rung_is_accepted_and_plays(katago_env, tmp_path):
    # KataGo refuses a config key out of its range at start (t=8 did); the ladder's rung
    # katago:1,t=4 starts, samples its moves and still beats random
    out = tmp_path / "match.json"
    done = subprocess.run(
        [sys.executable, "-m", "fastgo_cli.main", "arena", "katago:1,t=4", "random", "--games",
         "2", "--size", "9", "--seed", "4", "--no-table", "--json", str(out)],
        env=katago_env, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["games"] == 2 and result["forfeits"] == [], result
    assert result["wins_a"] == 2 and result["a"] == "katago:1,t=4"
