"""`fastgo gtp --player SPEC` with a spec it cannot play: one line on stderr that shows a bounded
excerpt of the spec (a 10,000-character spec was once echoed whole), exit status 2."""
import pytest

from fastgo_cli.main import main


@pytest.mark.parametrize("spec", ["katago:1,t=" + "9" * 10_000, "x" * 10_000 + ":1",
                                  "mcts:" + "\u0663" * 5000, "katago:1,t=0_5"])
def test_an_unplayable_player_spec_is_one_bounded_line(spec, capsys):
    assert main(["gtp", "--player", spec]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastgo gtp: cannot make player '")
    assert len(lines[0]) < 600 and captured.out == ""
