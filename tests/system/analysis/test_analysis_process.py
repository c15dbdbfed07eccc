"""`fastgo analysis` as a process on a tiny fresh checkpoint: a whole game's turns answered
(one final response per turn, KataGo's fields), hostile lines answered with error objects while
the engine keeps serving (a line over the size cap, non-UTF-8 bytes, 10,000 moves, wrong types,
a board size the network does not play, huge maxVisits clamped), partial reports during a
search, terminate, and the end of input finishing the queued turns."""
import json
import os
import subprocess
import sys
import threading

import pytest

GAME = [["B", "E5"], ["W", "C3"], ["B", "G3"], ["W", "C7"], ["B", "G7"], ["W", "E3"]]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    path = tmp_path_factory.mktemp("analysis") / "net.ckpt"
    save_checkpoint(path, build_model(ModelConfig(board_size=9, blocks=1, channels=8,
                                                  score_head=True), seed=4), step=2)
    return path


class Engine:
    """The process, with a reader thread collecting its output lines (parsed)."""

    def __init__(self, checkpoint, *extra):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fastgo_cli.main", "analysis", "--model", str(checkpoint),
             "--threads", "1", "--max-line-bytes", "262144", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(json.loads(raw))
                self.cond.notify_all()

    def send(self, data):
        self.proc.stdin.write(data if isinstance(data, bytes) else (json.dumps(data) + "\n").encode())
        self.proc.stdin.flush()

    def wait(self, predicate, timeout=120.0, what="responses"):
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self.lines), timeout), \
                f"timed out waiting for {what}: {self.lines[-5:]}"
            return list(self.lines)

    def close(self):
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)


def finals(lines, ident):
    return [x for x in lines if x.get("id") == ident and "turnNumber" in x
            and not x.get("isDuringSearch")]


def query(ident, **fields):
    base = {"id": ident, "moves": GAME, "rules": "tromp-taylor", "komi": 7.5,
            "boardXSize": 9, "boardYSize": 9, "maxVisits": 8}
    base.update(fields)
    return base


def test_a_game_hostile_lines_and_terminate(checkpoint):
    engine = Engine(checkpoint)
    try:
        engine.send(b"x" * 1_000_000 + b"\n")                       # over the 256 KiB cap
        engine.send(b'{"id":"bytes","moves":["\xff\xfe"]}\n')        # not UTF-8
        engine.send(query("long", moves=[["B", "pass"], ["W", "pass"]] * 5000))
        engine.send(query("types", maxVisits="many"))
        engine.send(query("size", boardXSize=13, boardYSize=13))
        engine.send(query("nested", moves=[[[[[[]]]]]] * 2))
        engine.send(b"[" * 60_000 + b"]" * 0 + b"\n")
        engine.send(query("game", analyzeTurns=list(range(len(GAME) + 1)), includeOwnership=True,
                          includePolicy=True, overrideSettings={"reportAnalysisWinratesAs": "BLACK"},
                          typo=1))
        lines = engine.wait(lambda ls: len(finals(ls, "game")) == len(GAME) + 1)
        errors = [x for x in lines if "error" in x]
        assert any("longer than 262144 bytes" in x["error"] for x in errors)
        assert any("not valid UTF-8" in x["error"] for x in errors)
        by_id = {x.get("id"): x for x in errors if "id" in x}
        assert by_id["long"]["field"] == "moves"
        assert by_id["types"]["field"] == "maxVisits"
        assert by_id["size"]["field"] == "boardXSize"
        assert by_id["nested"]["field"] == "moves"
        assert sum("could not parse input line" in x["error"] for x in errors) == 1
        warnings = [x for x in lines if x.get("id") == "game" and "warning" in x]
        assert {"field": "typo"}.items() <= warnings[0].items()
        turns = finals(lines, "game")
        assert sorted(t["turnNumber"] for t in turns) == list(range(len(GAME) + 1))
        for t in turns:
            assert t["rootInfo"]["visits"] == 8
            assert t["rootInfo"]["currentPlayer"] == ("B" if t["turnNumber"] % 2 == 0 else "W")
            assert len(t["ownership"]) == 81 and len(t["policy"]) == 82
            assert t["moveInfos"] and all(m["visits"] >= 1 for m in t["moveInfos"])
            assert {"scoreLead", "winrate", "prior", "pv", "lcb", "utility", "order"} \
                <= set(t["moveInfos"][0])

        # A long search with partial reports, then terminated: partial responses, one final
        # response with fewer visits than asked, and the terminate echoed.
        engine.send(query("long-search", maxVisits=100_000_000, reportDuringSearchEvery=0.2))
        engine.wait(lambda ls: any(x.get("id") == "long-search" and x.get("isDuringSearch")
                                   for x in ls), what="a partial report")
        engine.send({"id": "stop", "action": "terminate", "terminateId": "long-search"})
        lines = engine.wait(lambda ls: finals(ls, "long-search"), what="the final response")
        clamp = [x for x in lines if x.get("id") == "long-search" and x.get("field") == "maxVisits"]
        assert clamp and "warning" in clamp[0]
        final = finals(lines, "long-search")
        assert len(final) == 1 and final[0]["rootInfo"]["visits"] < 100_000
        assert any(x.get("id") == "stop" and x.get("action") == "terminate" for x in lines)

        # Queued turns are finished after the end of input.
        engine.send(query("last", maxVisits=4, analyzeTurns=[0, 1, 2]))
        assert engine.close() == 0
        assert len(finals(engine.lines, "last")) == 3
    finally:
        engine.close()


def test_a_checkpoint_with_nan_weights_is_refused_at_start(tmp_path):
    """As `fastgo gtp` does: the canaries refuse it in one line, before any query (it used to be
    accepted and the engine then died with SIGABRT on its first search)."""
    import torch

    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    model = build_model(ModelConfig(board_size=9, blocks=1, channels=8), seed=0)
    with torch.no_grad():
        model.stem.weight.fill_(float("nan"))
    save_checkpoint(tmp_path / "nan.ckpt", model, step=1)
    line = json.dumps(query("q")) + "\n"
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "analysis", "--model",
                           str(tmp_path / "nan.ckpt"), "--threads", "1"], input=line,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    assert "refusing --model" in done.stderr and "non-finite" in done.stderr
    assert "Traceback" not in done.stderr and "Fatal Python error" not in done.stderr


def test_a_reader_that_closes_our_output_ends_the_engine_cleanly(checkpoint):
    """The reader goes away: the engine ends with status 0 when a line finds the pipe closed,
    while its input thread still waits on stdin (it used to die with SIGABRT on exit)."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "analysis", "--model",
                             str(checkpoint), "--threads", "1"], stdin=subprocess.PIPE,
                            stdout=write_end, stderr=subprocess.PIPE,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    os.close(write_end)
    try:
        proc.stdin.write((json.dumps(query("first", maxVisits=4)) + "\n").encode())
        proc.stdin.flush()
        with os.fdopen(read_end, "rb") as reader:          # the first answer, then the reader leaves
            assert json.loads(reader.readline())["id"] == "first"
        proc.stdin.write((json.dumps(query("second", maxVisits=4)) + "\n").encode())
        proc.stdin.flush()                                  # stdin stays open
        code = proc.wait(60)
        err = proc.stderr.read().decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert code == 0, (code, err[-2000:])
    assert "Fatal Python error" not in err and "Traceback" not in err


def test_ownership_of_a_finished_game(checkpoint):
    """includeOwnership on the position after two passes: no search, the rules' result, and
    the ownership asked for (KaTrain asks for it at a game's end)."""
    moves = GAME + [["B", "pass"], ["W", "pass"]]
    engine = Engine(checkpoint)
    try:
        engine.send(query("end", moves=moves, analyzeTurns=[len(moves)], includeOwnership=True))
        engine.send(query("plain", moves=moves, analyzeTurns=[len(moves)]))
        lines = engine.wait(lambda lines: finals(lines, "end") and finals(lines, "plain"))
    finally:
        assert engine.close() == 0
    end, plain = finals(lines, "end")[0], finals(lines, "plain")[0]
    assert end["rootInfo"]["visits"] == 0 and end["moveInfos"] == []
    assert len(end["ownership"]) == 81 and all(-1 <= v <= 1 for v in end["ownership"])
    assert "ownership" not in plain


@pytest.mark.parametrize("depth", [40, 985, 990, 995, 100_000])
def test_deeply_nested_fields_get_an_error_object_with_the_id(depth):
    from play.analysis.query import MAX_NESTING, parse_query

    rules = '{"a":' * depth + "1" + "}" * depth
    line = ('{"id":"deep","moves":[],"rules":%s,"boardXSize":9,"boardYSize":9}' % rules)
    parsed = parse_query(line.encode())
    assert parsed.query is None and parsed.action is None
    assert parsed.messages == [{"id": "deep", "field": "rules",
                                "error": f"nested deeper than {MAX_NESTING} arrays and objects"}]
    moves = "[" * depth + "]" * depth
    parsed = parse_query(('{"moves":%s,"id":"m"}' % moves).encode())     # the id after the field
    if 2 * depth < 1 << 16:        # found within the first 64 KiB, where the scan looks for it
        assert parsed.messages[0]["id"] == "m" and parsed.messages[0]["field"] == "moves"
    else:
        assert "id" not in parsed.messages[0]
        assert parsed.messages[0]["error"].startswith(f"nested deeper than {MAX_NESTING}")


def test_a_rules_text_nested_990_deep_is_one_error_and_the_engine_serves_on(checkpoint):
    """The rules value is a JSON text inside a string, parsed where the line's nesting check
    cannot see it: 990 levels (json's RecursionError from the engine's stack, a traceback on
    stderr) and 65 are one error object each; 64 levels are parsed (and refused as rules); the
    next query is answered and stderr holds no traceback."""
    engine = Engine(checkpoint)
    try:
        # 990 levels fit the 1000 characters of a rules text only unclosed, as the report had it
        engine.send(query("deep-990", rules='{"":' + "[" * 989))
        for ident, levels in (("deep-65", 65), ("at-64", 64)):
            engine.send(query(ident, rules='{"":' + "[" * (levels - 1) + "]" * (levels - 1) + "}"))
        engine.send(query("after", maxVisits=4))
        lines = engine.wait(lambda ls: finals(ls, "after"))
    finally:
        assert engine.close() == 0
    stderr = engine.proc.stderr.read().decode("utf-8", "replace")
    assert "Traceback" not in stderr and "RecursionError" not in stderr, stderr[-2000:]
    by_id = {x["id"]: x for x in lines if "error" in x and "id" in x}
    for ident in ("deep-990", "deep-65"):
        assert by_id[ident]["field"] == "rules"
        assert by_id[ident]["error"].startswith(
            "Could not parse rules (nested deeper than 64 arrays and objects)")
    assert by_id["at-64"]["field"] == "rules" and "nested" not in by_id["at-64"]["error"]
    assert finals(lines, "after")[0]["rootInfo"]["visits"] == 4
