"""Per-side search options of the arena: each network side gets its own visits and leaves."""
import json
import subprocess
import sys

from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig


def test_each_side_has_its_own_search(tmp_path):
    path = tmp_path / "t.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=5, blocks=1, channels=8), seed=1), step=3)
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "arena", str(path), str(path),
                          "--games", "4", "--visits", "16", "--visits-b", "8", "--leaves-a", "4",
                          "--no-table", "--json", str(tmp_path / "a.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "a.json").read_text())
    assert result["a"].endswith("#3@v16x4") and result["b"].endswith("#3@v8")
    assert result["games"] == 4 and result["wins_a"] + result["wins_b"] <= 4


def test_each_side_has_its_own_root_search(tmp_path):
    path = tmp_path / "t.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=5, blocks=1, channels=8), seed=1), step=3)
    base = [sys.executable, "-m", "fastgo_cli.main", "arena", str(path), str(path), "--games", "2",
            "--visits", "8", "--no-table"]
    out = subprocess.run(base + ["--search-b", "gumbel", "--json", str(tmp_path / "a.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "a.json").read_text())
    assert result["a"].endswith("#3@v8") and result["b"].endswith("#3@v8-gumbel")
    assert result["games"] == 2
    out = subprocess.run(base + ["--search-a", "beam"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--search-a" in out.stderr and "beam" in out.stderr


def test_each_side_has_its_own_puct_constants(tmp_path):
    path = tmp_path / "t.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=5, blocks=1, channels=8), seed=1), step=3)
    base = [sys.executable, "-m", "fastgo_cli.main", "arena", str(path), str(path), "--games", "2",
            "--visits", "8", "--no-table"]
    out = subprocess.run(base + ["--c-puct-a", "0.5", "--fpu-b", "0.6", "--json",
                                 str(tmp_path / "a.json")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "a.json").read_text())
    # B takes A's c_puct where it gives none (as --search-b and --visits-b); the defaults show no suffix
    assert result["a"].endswith("#3@v8-cpuct0.5") and result["b"].endswith("#3@v8-cpuct0.5-fpu0.6")
    out = subprocess.run(base + ["--c-puct-b", "1.25", "--fpu-a", "0.25", "--json",
                                 str(tmp_path / "b.json")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "b.json").read_text())
    assert result["a"].endswith("#3@v8") and result["b"].endswith("#3@v8")
    for flag, value in (("--c-puct-a", "nan"), ("--c-puct-b", "-1"), ("--fpu-a", "11"),
                        ("--fpu-b", "inf")):
        out = subprocess.run(base + [flag, value], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and flag in out.stderr and value in out.stderr, out.stderr
