"""`fastgo play`: a scripted terminal game against a small network."""
import subprocess
import sys

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig


def test_terminal_game_accepts_moves_undo_and_refuses_bad_input(tmp_path):
    path = tmp_path / "m.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=5, blocks=1, channels=8), seed=1), step=3)
    script = "c3\nc3\nzz9\nundo\nb2\nresign\n"
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "play", "--model", str(path),
                          "--visits", "8", "--komi", "0.5", "--seed", "1"], input=script,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "you are X (Black) on 5x5" in text
    assert "? illegal move c3" in text                 # occupied after the first c3
    assert "? invalid GTP vertex" in text
    assert text.count("\nnetwork plays ") == 2          # one reply, undone, then one more
    assert "  3 . . . . . 3" in text                   # the board after undo
    assert text.rstrip().endswith("result: W+R")


def test_not_a_checkpoint_is_one_line(tmp_path):
    path = tmp_path / "notes.ckpt"
    path.write_text("hello")
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "play", "--model", str(path)],
                         input="", capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
