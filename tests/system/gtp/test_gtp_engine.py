"""The GTP engine as users run it: `python -m fastgo_cli.main gtp` in a real subprocess, driven by
scripted sessions and by play.gtp.client. Plus the protocol helpers in fastgo.gtp."""
import os
import subprocess
import sys

import pytest

from fastgo import gtp, sgf
from play.gtp.client import GtpClient, GtpConnectionError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ENGINE = [sys.executable, "-m", "fastgo_cli.main", "gtp"]
TIMEOUT = 60


def run_script(script, *args):
    """Feeds `script` to a fresh engine; returns (responses, stderr, exit code)."""
    done = subprocess.run(ENGINE + list(args), input=script, capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=ROOT)
    out = done.stdout
    assert out == "" or out.endswith("\n\n"), out[-200:]
    responses = out[:-2].split("\n\n") if out else []
    return responses, done.stderr, done.returncode


@pytest.fixture
def engine():
    client = GtpClient(ENGINE + ["--size", "9", "--seed", "3"], timeout=TIMEOUT, cwd=ROOT,
                       stderr=subprocess.PIPE)
    try:
        yield client
    finally:
        assert client.close() == 0


# --- protocol helpers (in process) -----------------------------------------------------------

def test_parse_line():
    assert gtp.parse_line("  # only a comment") is None
    assert gtp.parse_line("\t \r") is None
    assert gtp.parse_line("12 play b d4 # why not") == gtp.Command(12, "play", ["b", "d4"])
    assert gtp.parse_line("pl\x01ay\tb\x7f d4\r\n") == gtp.Command(None, "play", ["b", "d4"])
    assert gtp.parse_line("7") == gtp.Command(7, "", [])


def test_format_and_parse_response():
    assert gtp.format_response(None, "") == "= \n\n"
    assert gtp.format_response(5, "D4") == "=5 D4\n\n"
    assert gtp.format_response(None, "illegal move", ok=False) == "? illegal move\n\n"
    # No empty line may end a multi-line response early.
    assert gtp.format_response(1, "\na\n\nb\n\n") == "=1 \na\n \nb\n\n"
    assert gtp.parse_response("=12 a\nb") == (True, 12, "a\nb")
    assert gtp.parse_response("? unknown command") == (False, None, "unknown command")
    with pytest.raises(ValueError):
        gtp.parse_response("hello")
    assert gtp.format_command("play", "b", "d4", command_id=3) == "3 play b d4\n"
    with pytest.raises(ValueError):
        gtp.format_command("play", "b\nquit")


def test_parse_color():
    assert gtp.parse_color("B") == gtp.BLACK and gtp.parse_color("white") == gtp.WHITE
    with pytest.raises(gtp.GtpError):
        gtp.parse_color("red")


# --- scripted sessions (subprocess) ----------------------------------------------------------

def test_scripted_session_with_bad_lines():
    script = "\n".join([
        "protocol_version",
        "1 name",
        "# a comment line",
        "",
        "2 version",
        "boardsize 9",
        "clear_board",
        "3 play b d4",
        "4 play w d4",            # occupied
        "play b z9",              # off the board letters
        "play b k5",              # K is column 10 on 9x9
        "play x e5",              # bad color
        "play b",                 # missing argument
        "frobnicate",
        "5 frobnicate 1 2",
        "6",                      # an id alone
        "\x01\x02 list\tstones\x7f black",   # control characters: 'liststones', unknown
        "list_stones\tblack  # tab and comment",
        "boardsize 0",
        "boardsize many",
        "komi lots",
        "komi -3.5",
        "get_komi",
        "known_command genmove",
        "known_command frobnicate",
        "\xff\xfe binary junk ]]][[",
        "7 is_legal b d4",
        "8 is_legal w e5",
        "captures b",
        "quit",
        "name",                   # after quit: not answered
    ]) + "\n"
    responses, stderr, code = run_script(script)
    assert code == 0
    assert responses == [
        "= 2", "=1 fastgo", responses[2], "= ", "= ", "=3 ", "?4 illegal move",
        "? invalid coordinate", "? invalid coordinate", "? invalid color 'x'", "? syntax error",
        "? unknown command", "?5 unknown command", "?6 syntax error", "? unknown command",
        "= D4", "? unacceptable size", "? boardsize not an integer", "? komi not a float",
        "= ", "= -3.5", "= true", "= false", "? unknown command", "=7 0", "=8 1", "= 0", "= ",
    ]
    assert responses[2].startswith("=2 ") and len(responses[2]) > 3
    assert "Traceback" not in stderr


def test_invalid_utf8_and_nul_bytes():
    done = subprocess.run(ENGINE, input=b"name\n\xff\xfe\x00garbage \xc3\n\x00\nname\n",
                          capture_output=True, timeout=TIMEOUT, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.decode().split("\n\n")[:-1] == ["= fastgo", "? unknown command", "= fastgo"]


def test_ends_cleanly_at_end_of_input_without_quit():
    responses, _, code = run_script("name\nplay b a1\n")
    assert responses == ["= fastgo", "= "] and code == 0


def test_model_option_refusals_are_clear(tmp_path):
    responses, stderr, code = run_script("name\n", "--visits", "100")
    assert code == 2 and responses == [] and "--visits goes with --model" in stderr
    missing = str(tmp_path / "missing.ckpt")
    responses, stderr, code = run_script("name\n", "--model", missing)
    assert code == 2 and responses == [] and "cannot load --model" in stderr and missing in stderr
    (tmp_path / "bad.ckpt").write_bytes(b"PK\x03\x04 not really a checkpoint")
    responses, stderr, code = run_script("name\n", "--model", str(tmp_path / "bad.ckpt"))
    assert code == 2 and "not a fastgo checkpoint" in stderr
    assert "Traceback" not in stderr


def test_network_player_over_gtp(tmp_path):
    import torch  # noqa: F401  (a build without torch must fail here, not skip)

    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = str(tmp_path / "net.ckpt")
    save_checkpoint(path, build_model(ModelConfig(board_size=7, blocks=1, channels=8), seed=1), step=3)
    responses, stderr, code = run_script("name\n", "--model", path, "--size", "9")
    assert code == 2 and "plays 7x7 only" in stderr
    script = ("boardsize 9\nboardsize 7\ngenmove b\nplay w a1\ngenmove b\ngenmove w\n"
              "list_stones black\nundo\ngenmove w\nclear_board\ngenmove b\n")
    responses, stderr, code = run_script(script, "--model", path, "--visits", "24", "--seed", "4",
                                         "--device", "cpu")
    assert code == 0, stderr
    assert responses[:2] == ["? unacceptable size", "= "]
    moves = [responses[i] for i in (2, 4, 5, 8, 10)]
    assert all(m.startswith("= ") and len(m) > 2 for m in moves), responses
    assert responses[3] == "= " and responses[7] == "= "
    black = responses[6][2:].split()
    assert len(black) == 2 and {responses[2][2:], responses[4][2:]} == set(black)
    # the same seed gives the same game
    again, _, _ = run_script(script, "--model", path, "--visits", "24", "--seed", "4", "--device", "cpu")
    assert again == responses
    # Gumbel at play: well-formed answers, reproducible under a seed (the search still draws a
    # random symmetry per leaf, so another seed may differ)
    gumbel = [run_script(script, "--model", path, "--visits", "24", "--seed", "4", "--device",
                         "cpu", "--search", "gumbel")[0] for _ in range(2)]
    assert gumbel[0] == gumbel[1] and all(m.startswith("= ") for m in gumbel[0][2:])
    assert len(gumbel[0][6][2:].split()) == 2
    _, stderr, code = run_script("name\n", "--model", path, "--search", "beam")
    assert code == 2 and "--search" in stderr


def test_move_seconds_is_a_time_a_move_with_uncapped_visits(tmp_path):
    """--move-seconds S without --visits: the search runs for about S seconds (the tiny net
    makes the default 400 visits in a few hundredths of a second, so a move that took S shows
    the visits were not capped); the arena's --move-seconds means the same."""
    import time

    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = str(tmp_path / "net.ckpt")
    save_checkpoint(path, build_model(ModelConfig(board_size=7, blocks=1, channels=8), seed=1),
                    step=3)
    client = GtpClient(ENGINE + ["--model", path, "--move-seconds", "0.6", "--device", "cpu",
                                 "--backend", "torch", "--seed", "1"],
                       timeout=TIMEOUT, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        client.send("genmove b")               # the first move also builds the backend
        took = []
        for color in "wbw":
            began = time.monotonic()
            client.send(f"genmove {color}")
            took.append(time.monotonic() - began)
    finally:
        client.close()
    assert all(0.5 <= t <= 2.0 for t in took), took      # PUCT searches to the deadline


def test_unknown_player_is_refused_clearly():
    responses, stderr, code = run_script("name\n", "--player", "alphago")
    assert code != 0 and responses == []
    assert "unknown player spec 'alphago'" in stderr


# --- sessions through the client -------------------------------------------------------------

def test_full_random_game(engine):
    assert engine.send("boardsize 9") == ""
    assert engine.send("komi 7.5") == ""
    color = "b"
    passes = moves = 0
    while passes < 2 and moves < 2 * 81:
        vertex = engine.send(f"genmove {color}")
        passes = passes + 1 if vertex == "pass" else 0
        moves += 1
        color = "w" if color == "b" else "b"
    black = engine.send("list_stones black").split()
    white = engine.send("list_stones white").split()
    assert set(black).isdisjoint(white)
    score = engine.send("final_score")
    assert score == "0" or score[:2] in ("B+", "W+")
    board = engine.send("showboard")
    assert board.count("\n") >= 11 and "X" in board
    record = sgf.parse_sgf(engine.send("printsgf"))
    assert len(record.moves) == moves and record.result == score


def test_illegal_moves_ko_and_suicide(engine):
    # Ko: Black captures at E5, White may not retake at D5 at once.
    for command in ["play b d6", "play w e6", "play b c5", "play w f5", "play b d4",
                    "play w e4", "play w d5", "play b e5"]:
        assert engine.send(command) == ""
    assert engine.send("captures black") == "1"
    assert engine.send("is_legal w d5") == "0"
    with pytest.raises(gtp.GtpError, match="illegal move"):
        engine.send("play w d5")
    assert engine.send("play w j9") == "" and engine.send("play b j1") == ""
    assert engine.send("play w d5") == ""          # the ko threat was answered elsewhere
    assert engine.send("captures white") == "1"
    # Suicide in the corner.
    for command in ["clear_board", "play b a2", "play w j9", "play b b1"]:
        engine.send(command)
    assert engine.send("is_legal w a1") == "0"
    with pytest.raises(gtp.GtpError, match="illegal move"):
        engine.send("play w a1")
    # Out of turn (two black moves) is allowed, as GTP expects.
    assert engine.send("play b c3") == "" and engine.send("play b c4") == ""
    with pytest.raises(gtp.GtpError, match="illegal move"):
        engine.send("play w c3")
    assert engine.send("list_stones black") == "B2 C3 C4 A2" or \
        set(engine.send("list_stones black").split()) == {"A2", "B1", "C3", "C4"}


def test_undo_and_genmove_out_of_turn(engine):
    engine.send("play b e5")
    vertex = engine.send("genmove b")          # Black again: GNU Go plays for the asked color
    assert vertex != "pass"
    assert set(engine.send("list_stones black").split()) == {"E5", vertex.upper()}
    assert engine.send("undo") == "" and engine.send("undo") == ""
    assert engine.send("list_stones black") == ""
    with pytest.raises(gtp.GtpError, match="cannot undo"):
        engine.send("undo")


def test_resignation_and_the_end_of_the_game(engine):
    engine.send("play b e5")
    assert engine.send("play w resign") == ""
    assert engine.send("final_score") == "B+R"
    assert sgf.parse_sgf(engine.send("printsgf")).result == "B+R"
    assert engine.send("undo") == ""                 # takes back the resignation
    engine.send("play w pass")
    engine.send("play b pass")
    assert engine.send("final_score") == "B+73.5"    # Tromp-Taylor: 81 points - 7.5
    assert engine.send("genmove w") == "pass"        # the game is over: nothing is played
    with pytest.raises(gtp.GtpError, match="illegal move"):
        engine.send("play w e4")
    record = sgf.parse_sgf(engine.send("printsgf"))
    assert record.result == "B+73.5" and len(record.moves) == 3


def test_handicap_commands(engine):
    assert set(engine.send("fixed_handicap 5").split()) == {"C3", "G7", "C7", "G3", "E5"}
    with pytest.raises(gtp.GtpError, match="board not empty"):
        engine.send("fixed_handicap 2")
    assert engine.send("genmove w") != ""          # White moves first after a handicap
    engine.send("boardsize 19")
    assert set(engine.send("fixed_handicap 9").split()) == {
        "D4", "K4", "Q4", "D10", "K10", "Q10", "D16", "K16", "Q16"}
    engine.send("clear_board")
    with pytest.raises(gtp.GtpError, match="invalid handicap"):
        engine.send("fixed_handicap 10")
    assert len(engine.send("place_free_handicap 4").split()) == 4
    engine.send("clear_board")
    assert engine.send("set_free_handicap a1 t19 k10") == ""
    assert set(engine.send("list_stones black").split()) == {"A1", "T19", "K10"}
    with pytest.raises(gtp.GtpError, match="invalid coordinate"):
        engine.send("set_free_handicap a1 z99")


def test_time_commands_are_accepted(engine):
    assert engine.send("time_settings 300 30 5") == ""
    assert engine.send("time_left b 120 0") == ""
    with pytest.raises(gtp.GtpError, match="syntax error"):
        engine.send("time_settings 300 thirty 5")
    with pytest.raises(gtp.GtpError, match="syntax error"):
        engine.send("time_left b")


def test_printsgf_loadsgf_round_trip(engine, tmp_path):
    engine.send("boardsize 13")
    engine.send("komi 6.5")
    engine.send("set_free_handicap d4 k10")
    played = ["w k4", "b c3", "w pass", "b d10", "w d11", "b e11"]
    for move in played:
        engine.send(f"play {move}")
    stones = (engine.send("list_stones black"), engine.send("list_stones white"))
    path = tmp_path / "game.sgf"
    assert engine.send(f"printsgf {path}") == ""
    text = path.read_text()
    record = sgf.parse_sgf(text)
    assert record.size == 13 and record.komi == 6.5 and record.handicap == 2
    assert len(record.moves) == len(played) and record.moves[2] == (sgf.WHITE, 169)
    assert engine.send("printsgf") == text.rstrip("\n")

    engine.send("boardsize 9")
    assert engine.send(f"loadsgf {path}") == "white"       # Black's e11 was the last move
    assert (engine.send("list_stones black"), engine.send("list_stones white")) == stones
    assert engine.send("get_komi") == "6.5"
    assert engine.send(f"loadsgf {path} 3") == "white"     # the position before move 3 (w pass)
    assert set(engine.send("list_stones black").split()) == {"D4", "K10", "C3"}
    assert engine.send("undo") == "" and engine.send("undo") == ""
    assert set(engine.send("list_stones black").split()) == {"D4", "K10"}
    with pytest.raises(gtp.GtpError, match="cannot undo"):
        engine.send("undo")


def test_loadsgf_failures_keep_the_engine_answering(engine, tmp_path):
    engine.send("play b e5")
    with pytest.raises(gtp.GtpError, match="cannot open"):
        engine.send(f"loadsgf {tmp_path / 'missing.sgf'}")
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;SZ[9];B[ee];W[zz])")
    with pytest.raises(gtp.GtpError, match="cannot parse file: .*'zz' is off a 9x9 board"):
        engine.send(f"loadsgf {bad}")
    illegal = tmp_path / "illegal.sgf"
    illegal.write_text("(;SZ[9];B[ee];W[ee])")
    with pytest.raises(gtp.GtpError, match="cannot load game: .*occupied"):
        engine.send(f"loadsgf {illegal}")
    assert engine.send("list_stones black") == "E5"         # the old game is untouched
    with pytest.raises(gtp.GtpError, match="syntax error"):
        engine.send(f"loadsgf {bad} x")


def test_pipelined_commands_and_ids(engine):
    answers = engine.send_many([f"is_legal b {c}{r}" for c in "ABCDEFGHJ" for r in range(1, 10)])
    assert answers == [(True, "1")] * 81
    answers = engine.send_many(["name", "frobnicate", "protocol_version"], check=False)
    assert answers == [(True, "fastgo"), (False, "unknown command"), (True, "2")]


def test_client_reports_a_dead_engine():
    client = GtpClient([sys.executable, "-c", "import sys; sys.stdin.readline()"], timeout=10)
    try:
        with pytest.raises(GtpConnectionError):
            client.send("name")
    finally:
        client.close()


def test_client_times_out_on_a_silent_engine():
    client = GtpClient([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    try:
        with pytest.raises(GtpConnectionError, match="no answer"):
            client.send("name")
    finally:
        client.close()
    assert client.process.poll() is not None


# --- players (in process) --------------------------------------------------------------------

def test_make_player_specs():
    from play.players import RandomPlayer
    from play.specs import make_player

    assert isinstance(make_player("random", seed=1), RandomPlayer)
    assert isinstance(make_player(" Random "), RandomPlayer)
    for spec in ["", "alphago", "random:3", "mcts", "mcts:", "mcts:0", "mcts:-5", "mcts:x", None, 7]:
        with pytest.raises(ValueError, match="spec"):
            make_player(spec)


def test_random_player_is_reproducible_and_legal():
    from fastgo.game import Game
    from play.specs import make_player

    def play(seed):
        game, player = Game(size=7), make_player("random", seed=seed)
        while not game.is_over():
            game.play(player.genmove(game))     # raises if the player chose an illegal move
        return game.moves

    assert play(11) == play(11)
    assert play(11) != play(12)


def test_random_player_keeps_its_eyes():
    from fastgo.game import Game
    from play.players import RandomPlayer

    game = Game(size=3)
    game.setup(black=[1, 2, 3, 4, 5, 6, 7])     # Black owns the A3 and C1 corners as eyes
    player = RandomPlayer(seed=0)
    assert all(player.genmove(game) == game.pass_move for _ in range(20))
    game = Game(size=5)
    game.setup(black=[1, 5, 6], white=[18])     # A5 is Black's eye; other points are free
    for seed in range(30):
        assert RandomPlayer(seed=seed).genmove(game) not in (0, game.pass_move)


def test_mcts_player_answers_genmove():
    import play.players  # noqa: F401  (must exist in every build)
    responses, stderr, code = run_script("genmove b\ngenmove w\nlist_stones black\n",
                                         "--player", "mcts:30", "--seed", "2")
    assert code == 0, stderr
    black_move, white_move, stones = responses
    assert black_move.startswith("= ") and white_move.startswith("= ")
    assert stones == "= " + black_move[2:].upper() or black_move == "= pass"


# --- live analysis (lz-analyze) ------------------------------------------------------------------

class _Lines:
    """The engine's stdout lines, read on a thread (select() cannot see a text stream's buffer)."""

    def __init__(self, stream):
        import queue
        import threading

        self.queue = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.queue.put(line)
        self.queue.put(None)

    def next(self):
        return self.queue.get(timeout=TIMEOUT)


def test_lz_analyze_streams_until_the_next_command(tmp_path):
    import torch  # noqa: F401  (a build without torch must fail here, not skip)

    from fastgo import coords
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = str(tmp_path / "net.ckpt")
    save_checkpoint(path, build_model(ModelConfig(board_size=7, blocks=1, channels=8), seed=2), step=1)
    proc = subprocess.Popen(ENGINE + ["--model", path, "--visits", "16", "--seed", "1", "--device", "cpu"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1, cwd=ROOT)
    try:
        lines = _Lines(proc.stdout)
        proc.stdin.write("play b d4\nlz-analyze w 5\n")
        proc.stdin.flush()
        assert lines.next() == "= \n" and lines.next() == "\n"
        assert lines.next() == "=\n"
        infos = [lines.next() for _ in range(3)]
        for line in infos:
            assert line.startswith("info move "), line
            for chunk in line.strip().split("info ")[1:]:
                words = chunk.split()
                fields = dict(zip(words[0:10:2], words[1:10:2]))
                assert set(fields) == {"move", "visits", "winrate", "prior", "order"}
                assert coords.from_gtp(fields["move"], 7) != coords.from_gtp("d4", 7)
                assert 0 <= int(fields["winrate"]) <= 10000 and int(fields["visits"]) > 0
                assert words[10] == "pv" and words[11] == fields["move"]
        proc.stdin.write("name\n")            # interrupts the analysis
        proc.stdin.flush()
        line = lines.next()
        while line.startswith("info"):
            line = lines.next()
        assert line == "\n"
        assert lines.next() == "= fastgo\n" and lines.next() == "\n"
        proc.stdin.write("lz-analyze x\ngenmove w\nquit\n")
        proc.stdin.flush()
        assert lines.next() == "? syntax error\n"
        lines.next()
        assert lines.next().startswith("= ")
        proc.stdin.close()
        assert proc.wait(TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_lz_analyze_is_offered_only_by_searching_players():
    responses, _, code = run_script("known_command lz-analyze\nlz-analyze b 10\n")
    assert code == 0 and responses == ["= false", "? unknown command"]
