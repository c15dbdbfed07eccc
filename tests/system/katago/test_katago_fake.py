"""katago:VISITS against a stand-in for KataGo's program (tests/fake_engines/fake_katago.py):
the AppImage's FUSE notice on stdout before the first answer is skipped, the config the side
writes reaches the program, a missing OpenCL device, an unloadable network and a start that
hangs (a tuner) are one line each, and an engine's suicide loses the game by forfeit."""
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fastgo import coords
from fastgo.game import Game
from play.gtp.side import GtpEngineError, GtpSide
from play.katago.side import KataGoSide
from play.match import Forfeit, play_match
from play.players import RandomPlayer
from play.specs import make_spec_side

ENGINES = Path(__file__).resolve().parents[2] / "fake_engines"
FAKE_KATAGO = str(ENGINES / "fake_katago.py")
FAKE_GTP = str(ENGINES / "fake_gtp.py")


@pytest.fixture
def katago_env(tmp_path):
    """The environment of a katago:VISITS side whose program is the stand-in."""
    model = tmp_path / "net.bin.gz"
    model.write_bytes(b"not a network")
    return {**os.environ, "FASTGO_KATAGO": FAKE_KATAGO, "FASTGO_KATAGO_MODEL": str(model),
            "FASTGO_KATAGO_HOME": str(tmp_path / "cache"), "FAKE_KATAGO_MODE": "fuse"}


def test_fuse_notice_before_the_first_answer_is_skipped(katago_env):
    out = io.StringIO()
    side = KataGoSide(1, env=katago_env, out=out, start_timeout=30)
    try:
        result = play_match(side, RandomPlayer(seed=1), 2, size=5, komi=0.5)
    finally:
        side.close()
    assert result.games == 2 and not result.forfeits
    assert "tunes OpenCL" in out.getvalue()        # no tuning in the empty cache yet
    assert not os.path.exists(side._folder)          # its config folder is gone with it


def test_the_written_config_reaches_the_program(katago_env, tmp_path):
    record = tmp_path / "seen.cfg"
    env = {**katago_env, "FAKE_KATAGO_MODE": "record", "FAKE_KATAGO_RECORD": str(record)}
    side = KataGoSide(3, env=env, seed=11, move_seconds=2.0, out=io.StringIO())
    try:
        side.prepare(1, 7, 7.5)
    finally:
        side.close()
    seen = dict(line.split(" = ", 1) for line in record.read_text().splitlines())
    assert seen["maxVisits"] == "3" and seen["maxTime"] == "2"
    assert seen["maxBoardXSizeForNNBuffer"] == seen["maxBoardYSizeForNNBuffer"] == "7"
    assert seen["searchRandSeed"] == "fastgo11" and seen["koRule"] == "POSITIONAL"
    assert seen["homeDataDir"] == os.path.join(env["FASTGO_KATAGO_HOME"], "home")


@pytest.mark.parametrize("mode, words", [
    ("noopencl", "KataGo cannot start: no OpenCL device: install an OpenCL driver"),
    ("badmodel", "KataGo cannot start: KataGo could not load its network"),
])
def test_a_start_that_fails_is_one_line(katago_env, mode, words):
    side = KataGoSide(1, env={**katago_env, "FAKE_KATAGO_MODE": mode}, out=io.StringIO())
    try:
        with pytest.raises(GtpEngineError) as failed:
            side.prepare(1, 9, 7.5)
    finally:
        side.close()
    assert words in str(failed.value) and "\n" not in str(failed.value)


def test_a_tuner_that_crashes_is_one_line(katago_env):
    side = KataGoSide(1, env={**katago_env, "FAKE_KATAGO_MODE": "tunecrash"}, out=io.StringIO(),
                      start_timeout=30)
    try:
        with pytest.raises(GtpEngineError) as failed:
            side.prepare(1, 9, 7.5)
    finally:
        side.close()
    text = str(failed.value)
    assert "KataGo cannot start" in text and "pocl error" in text and "\n" not in text


def test_a_cache_folder_that_cannot_be_written_is_one_line(katago_env, tmp_path):
    # a cache "folder" below a plain file: no user (root included) can create it
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {**katago_env, "FASTGO_KATAGO_HOME": str(blocker / "cache")}
    side = KataGoSide(1, env=env, out=io.StringIO(), start_timeout=30)
    try:
        with pytest.raises(GtpEngineError) as failed:
            side.prepare(1, 9, 7.5)
    finally:
        side.close()
    text = str(failed.value)
    assert "cannot write KataGo's config, logs and tuning under" in text
    assert "FASTGO_KATAGO_HOME" in text and "\n" not in text


def test_a_start_that_hangs_is_bounded(katago_env):
    env = {**katago_env, "FAKE_KATAGO_MODE": "hang", "FASTGO_KATAGO_TUNE_TIMEOUT": "0.5"}
    side = KataGoSide(1, env=env, start_timeout=0.2, out=io.StringIO())
    try:
        with pytest.raises(GtpEngineError, match="did not answer within 0.5 s"):
            side.prepare(1, 9, 7.5)
    finally:
        side.close()


def test_arena_without_katago_is_one_line(tmp_path):
    env = {**os.environ, "FASTGO_KATAGO_HOME": str(tmp_path / "none"),
           "PATH": os.path.dirname(sys.executable)}
    env.pop("FASTGO_KATAGO", None)
    env.pop("FASTGO_KATAGO_MODEL", None)
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "arena", "katago:1",
                           "random", "--games", "1", "--no-table"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "KataGo's program not found" in done.stderr and "fastgo katago fetch" in done.stderr


def test_katago_spec_through_make_spec_side(katago_env, monkeypatch):
    for key, value in katago_env.items():
        monkeypatch.setenv(key, value)
    side = make_spec_side("katago:5", seed=3, move_seconds=1.0)
    try:
        assert isinstance(side, KataGoSide) and side.name == "katago:5"
        assert side.max_visits == 5 and side.visits is None and side.move_seconds == 1.0
        assert "chosenMoveTemperature" not in side.config()
    finally:
        side.close()
    side = make_spec_side("katago:1,t=2", seed=3)
    try:
        assert side.name == "katago:1,t=2" and side.visits == 1
        assert side.config()["chosenMoveTemperature"] == "2"
    finally:
        side.close()
    side = make_spec_side("katago:1,t=4,r=0.25", seed=3)
    try:
        assert side.name == "katago:1,t=4,r=0.25" and side.random_share == 0.25
    finally:
        side.close()


def test_a_random_share_plays_that_share_without_the_engine(katago_env):
    # The stand-in engine passes at every genmove, so each stone the side places is a random one;
    # the engine is told those moves before its next genmove (a refused one would forfeit).
    side = KataGoSide(1, env=katago_env, seed=5, random_share=0.5, out=io.StringIO(),
                      name="katago:1,r=0.5")
    opponent = RandomPlayer(seed=9)
    turns = stones = 0
    try:
        side.prepare(1, 7, 0.5)
        for _ in range(8):
            game = Game(7, 0.5)
            while not game.is_over() and len(game.moves) < 60:
                if len(game.moves) % 2 == 0:
                    [move] = side.moves([0], [game])
                    assert not isinstance(move, Forfeit), move
                    turns += 1
                    stones += move != game.board.pass_move
                else:
                    move = opponent.genmove(game)
                game.play(move)
    finally:
        side.close()
    assert stones <= side.random_moves <= turns and not side.failures
    # 0.5 of the turns, within 4 standard deviations
    assert abs(side.random_moves - turns / 2) <= 4 * (turns / 4) ** 0.5, (side.random_moves, turns)
    assert stones > 0


def test_an_engine_suicide_is_a_forfeit():
    game = Game(9, 7.5)
    for vertex in ("J9", "B1", "J8", "A2"):         # White holds B1 and A2: A1 is Black's suicide
        game.play(coords.from_gtp(vertex, 9))
    side = GtpSide([sys.executable, FAKE_GTP, "suicide"], name="fake-suicide")
    try:
        side.prepare(1, 9, 7.5)
        [answer] = side.moves([0], [game])
    finally:
        side.close()
    assert isinstance(answer, Forfeit)
    assert answer.reason == "engine played the illegal move A1 (suicide)"


@pytest.mark.parametrize("visits, expected", [(1000, range(7, 11)), (3, range(3, 4))])
def test_at_a_time_a_move_katago_plays_the_visits_its_measured_speed_fits(katago_env, visits,
                                                                          expected):
    # the stand-in searches 0.05 s a visit: 20 visits/s, so 10 fit in 0.5 s (7..10 with the
    # pipe's own time on a loaded machine), never more than the spec's VISITS; its moves then
    # keep the time
    env = {**katago_env, "FAKE_KATAGO_MODE": "visits", "FAKE_VISIT_SECONDS": "0.05"}
    out = io.StringIO()
    side = KataGoSide(visits, env=env, seed=1, move_seconds=0.5, out=out, start_timeout=30)
    try:
        side.prepare(1, 5, 0.5)
        assert side.paced_visits in expected and 14.0 <= side.pace_rate <= 20.5
        assert side.config()["maxVisits"] == str(side.paced_visits)
        assert side._client.send_many(["kata-get-param maxVisits", "kata-get-param maxTime"]) \
            == [(True, str(side.paced_visits)), (True, "0.5")]
        result = play_match(side, RandomPlayer(seed=1), 2, size=5, komi=0.5)
    finally:
        side.close()
    assert result.games == 2 and not result.forfeits
    seconds, _ = result.per_move("a")
    assert seconds <= 0.5 + 0.1
    assert f"{side.paced_visits:,} visits a move in 0.5 s" in out.getvalue()   # 3 or more


def test_a_katago_that_cannot_be_timed_plays_by_its_own_clock(katago_env):
    # the stand-in refuses kata-set-param: one line says so, the engine starts again on its
    # config (maxTime = the time a move) and the games are played without a forfeit
    out = io.StringIO()
    side = KataGoSide(5, env=katago_env, seed=1, move_seconds=1.0, out=out, start_timeout=30)
    try:
        result = play_match(side, RandomPlayer(seed=1), 2, size=5, komi=0.5)
    finally:
        side.close()
    assert result.games == 2 and not result.forfeits
    assert side.paced_visits is None and side.config()["maxVisits"] == "5"
    assert "cannot time KataGo's search" in out.getvalue() and "maxTime = 1 s" in out.getvalue()
