"""The player-spec grammar (play.specs): what each form names, the one-line errors, and the sides
built from it (GTP sides constructed, not started; a checkpoint through the caller's loader)."""
import pytest

from fastgo.player_spec import GNUGO_OPTIONS, gnugo_argv, parse_spec
from play.gtp.side import GtpSide
from play.players import RandomPlayer, UctPlayer
from play.specs import make_player, make_spec_side


def test_each_form():
    assert parse_spec(" Random ").kind == "random" and parse_spec("random").name == "random"
    spec = parse_spec("MCTS:250")
    assert (spec.kind, spec.count, spec.name) == ("mcts", 250, "mcts:250")
    spec = parse_spec("gnugo:10")
    assert (spec.kind, spec.count, spec.name) == ("gnugo", 10, "gnugo:10")
    assert spec.argv == ("gnugo", "--mode", "gtp", "--level", "10", "--chinese-rules",
                         "--capture-all-dead", "--positional-superko")
    spec = parse_spec('gtp:"my engine" --flag "a b"')
    assert spec.kind == "gtp" and spec.argv == ("my engine", "--flag", "a b")
    assert spec.name == "gtp:'my engine' --flag 'a b'"
    spec = parse_spec("runs/a/checkpoints/ckpt-000000100.ckpt")
    assert (spec.kind, spec.path) == ("checkpoint", "runs/a/checkpoints/ckpt-000000100.ckpt")
    assert parse_spec("latest").kind == "checkpoint"        # no colon: a path


def test_katago_forms_and_their_names():
    spec = parse_spec("katago:4")
    assert (spec.count, spec.temperature, spec.path, spec.name) == (4, None, None, "katago:4")
    spec = parse_spec("KataGo:1,t=1.50")
    assert (spec.count, spec.temperature, spec.name) == (1, 1.5, "katago:1,t=1.5")
    spec = parse_spec("katago:2,t=0.5:/nets/b6.bin.gz")
    assert (spec.count, spec.temperature, spec.path) == (2, 0.5, "/nets/b6.bin.gz")
    assert spec.name == "katago:2,t=0.5:b6.bin.gz"


def test_gnugo_runs_as_cgos_runs_it():
    # the rules options that make GNU Go remove dead stones before it passes (Tromp-Taylor)
    assert set(GNUGO_OPTIONS) == {"--chinese-rules", "--capture-all-dead", "--positional-superko"}
    assert gnugo_argv(3, "/usr/games/gnugo")[:5] == ["/usr/games/gnugo", "--mode", "gtp",
                                                     "--level", "3"]


@pytest.mark.parametrize("text, words", [
    ("", "empty player spec"), ("   ", "empty player spec"), (None, "must be a string"),
    (7, "must be a string"), ("random:3", "random takes no argument"),
    ("mcts", "expected mcts:N"), ("mcts:", "playouts must be an integer"),
    ("mcts:0", "playouts must be an integer"), ("mcts:x", "playouts must be an integer"),
    ("mcts:99999999", "playouts must be an integer"), ("gnugo", "expected gnugo:LEVEL"),
    ("gnugo:11", "LEVEL in 0..10"), ("gnugo:-1", "LEVEL in 0..10"), ("gnugo:1.5", "LEVEL"),
    ("gtp", 'expected gtp:"COMMAND"'), ("gtp:", "has no command"), ('gtp:"open', "quotation"),
    ("foo:3", "unknown player spec 'foo:3'"),
    ("katago:1,t=5.5", "T in 0..5"), ("katago:1,t=-1", "T in 0..5"),
    ("katago:1,t=nan", "T in 0..5"), ("katago:1,x=1", "takes the options t=T"),
    ("katago:1,r=1.5", "P in 0..1"), ("katago:1,t=1,t=2", "each at most once"),
    ("katago:1,t=", "katago:VISITS,t=T"), ("katago:0,t=1", "VISITS in"),
])
def test_malformed_specs_are_one_line(text, words):
    with pytest.raises(ValueError, match=words) as info:
        parse_spec(text)
    assert "\n" not in str(info.value)


def test_sides_from_specs():
    assert isinstance(make_spec_side("random", seed=1), RandomPlayer)
    player = make_spec_side("mcts:30", seed=2)
    assert isinstance(player, UctPlayer) and player.playouts == 30 and player.seed == 2
    side = make_spec_side("gnugo:2", move_timeout=5.0)
    assert isinstance(side, GtpSide) and side.name == "gnugo:2" and side.starts == 0
    assert side.argv[1:] == ["--mode", "gtp", "--level", "2", *GNUGO_OPTIONS]
    assert side.move_timeout == 5.0
    side = make_spec_side('gtp:engine --x "y z"')
    assert side.argv[1:] == ["--x", "y z"] and side.name == "gtp:engine --x 'y z'"
    # a checkpoint: the caller's loader, given the path and the seed
    calls = []
    assert make_spec_side("nets/a.ckpt", seed=9,
                          checkpoint_side=lambda path, seed: calls.append((path, seed)) or "net") == "net"
    assert calls == [("nets/a.ckpt", 9)]
    with pytest.raises(ValueError, match="cannot be played here"):
        make_spec_side("nets/a.ckpt")


def test_make_player_takes_the_in_process_players_only():
    assert isinstance(make_player("random", seed=1), RandomPlayer)
    assert isinstance(make_player("mcts:5", seed=1), UctPlayer)
    for text in ("gnugo:1", "gtp:engine", "alphago"):
        with pytest.raises(ValueError, match="unknown player spec"):
            make_player(text)
