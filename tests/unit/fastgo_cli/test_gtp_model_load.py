"""`fastgo gtp --model CKPT` reads its checkpoint once: kata-genmove_analyze and kata-analyze
take their scores and ownership from the heads loaded (and checked) at the engine's start, not
from a second load of the file (a second load was where a broken head used to surface, as an
internal error in the middle of a session)."""
import pytest

import network.checkpoint
from fastgo_cli.main import command_parser, main
from network.checkpoint import save_checkpoint
from network.loading import training_record
from network.model import build_model
from play.gtp.engine import GtpEngine
from rundata.config import ModelConfig

CONFIG = ModelConfig(board_size=7, blocks=1, channels=8, score_head=True, lead_head=True,
                     ownership_head=True)


@pytest.fixture
def loads(monkeypatch):
    """The paths network.checkpoint.load_checkpoint reads, in order (every load of a network
    goes through it)."""
    read = []
    original = network.checkpoint.load_checkpoint

    def counting(path, *args, **kwargs):
        read.append(str(path))
        return original(path, *args, **kwargs)
    monkeypatch.setattr(network.checkpoint, "load_checkpoint", counting)
    return read


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "net.ckpt"
    save_checkpoint(path, build_model(CONFIG, seed=1), step=4, extra=training_record(7.5))
    return str(path)


GTP_FLAGS = ["--visits", "16", "--seed", "1", "--device", "cpu", "--backend", "torch"]


def test_kata_genmove_analyze_uses_the_heads_loaded_at_the_start(checkpoint, loads, tmp_path,
                                                                  monkeypatch, capsys):
    script = tmp_path / "script.gtp"
    script.write_text("kata-genmove_analyze b 0 ownership true rootInfo true\nquit\n")
    with open(script, encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert main(["gtp", "--model", checkpoint, *GTP_FLAGS]) == 0
    out = capsys.readouterr().out
    assert "scoreLead" in out and " ownership " in out and "\nplay " in out, out
    assert loads == [checkpoint]


def test_kata_analyze_uses_the_heads_loaded_at_the_start(checkpoint, loads):
    from fastgo_cli.gtp_cmd import model_player

    parser, _ = command_parser("gtp", None)
    player = model_player(parser.parse_args(["--model", checkpoint, *GTP_FLAGS]))
    engine = GtpEngine(player, size=7, komi=7.5)
    assert engine.handle_line("kata-analyze b 10 ownership true") == "=\n"
    player.ponder(engine.game, 16, 16)
    line = engine.analysis_report(player, engine.game)     # what kata-analyze streams
    assert "scoreLead" in line and len(line.split(" ownership ")[1].split()) == 49, line
    assert loads == [checkpoint]
    assert player.analysis_heads() is player.analysis_heads()     # one cache for the session
