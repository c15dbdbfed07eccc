"""KaTrain's own analysis client (katrain.core.engine.KataGoEngine, pointed at `fastgo
analysis` through its custom engine command, "altcommand") analyses a 9x9 game: every node's
analysis completes with the visits asked, KaTrain keeps our win rate, score lead, candidate
moves (its points lost computed from our scoreLead) and a full ownership and policy, and it
logs no error. KaTrain comes from the test extras (`pip install -e .[test]`)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs("katrain")

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "katrain_analysis.py"
GAME = "(;GM[1]FF[4]SZ[9]KM[7]RU[Japanese];B[ee];W[cc];B[gc];W[cg];B[gg];W[ge];B[he];W[fd];B[gd])"
VISITS = 12


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = tmp_path_factory.mktemp("katrain") / "net.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=9, blocks=1, channels=8,
                                                  score_head=True), seed=3), step=5)
    return path


def test_katrain_analyses_a_game_through_fastgo_analysis(tmp_path, checkpoint):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    command = f"{sys.executable} -m fastgo_cli.main analysis --model {checkpoint} --threads 1"
    env = dict(os.environ, KIVY_HOME=str(tmp_path / "kivy"), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(CLIENT), command, str(sgf), str(VISITS)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == []
    assert result["complete"], result
    nodes = result["nodes"]
    assert [n["move"] for n in nodes] == [None, "E5", "C7", "G7", "C3", "G3", "G5", "H5", "F6", "G6"]
    for node in nodes:
        assert node["root"]["visits"] == VISITS
        assert 0.0 <= node["winrate"] <= 1.0
        assert isinstance(node["score"], float)
        assert node["ownership"] == 81 and node["policy"] == 82
        assert node["candidates"], node
        best = node["candidates"][0]
        assert best["order"] == 0 and best["visits"] >= 1
        assert isinstance(best["scoreLead"], float) and isinstance(best["pointsLost"], float)
