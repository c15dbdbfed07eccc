"""KataGo's GTP extensions (play.gtp.kata) on the GTP engine: kata-analyze output read the way
Lizzie reads it (its Leelaz / MoveData parsing: the line split at 'info ', key-value pairs up to
'pv', then the PV; 'ownership' and 'rootInfo' split off), kata-genmove_analyze's response
shape, and the rules commands."""
import numpy as np

from fastgo.search_settings import SearchSettings
from play.gtp.engine import GtpEngine
from play.gtp.kata import kata_line
from play.heads_cache import HeadsCache
from play.search_player import SearchPlayer


def heads(planes):
    own = (planes[:, 0].astype(np.float32) - planes[:, 1]).reshape(planes.shape[0], -1)
    logits = np.zeros((planes.shape[0], own.shape[1] + 1), np.float32)
    logits[:, 40] = 2.0
    return logits, np.tanh(own.sum(axis=1) / 10), own, own.sum(axis=1), None


def heads_with_lead(planes):
    logits, values, own, score, _ = heads(planes)
    return logits, values, own, score, 2.0 * score - 1.0     # a lead head unlike the score


def player(network=heads):
    cache = HeadsCache(network)
    p = SearchPlayer(cache, 48,
                     SearchSettings.for_play(encoding="alphazero", random_symmetry=False),
                     board_size=9, seed=1)
    p.analysis_heads = lambda: cache
    p.model_komi = 0.0
    return p


def lizzie_parse(line):
    """What Lizzie takes from one kata-analyze line: the moves' fields, the ownership list."""
    ownership = None
    if " ownership " in " " + line:
        line, _, rest = (" " + line).partition(" ownership ")
        ownership = [float(x) for x in rest.split()]
    line = line.split(" rootInfo ")[0]
    moves = []
    for chunk in line.strip().split("info ")[1:]:
        words = chunk.split()
        data, i = {}, 0
        while i < len(words):
            if words[i] == "pv":
                data["pv"] = words[i + 1:]
                break
            data[words[i]] = words[i + 1]
            i += 2
        moves.append({"move": data["move"], "visits": int(data["visits"]),
                      "winrate": float(data["winrate"]), "scoreMean": float(data["scoreMean"]),
                      "scoreLead": float(data["scoreLead"]), "prior": float(data["prior"]),
                      "lcb": float(data["lcb"]), "order": int(data["order"]), "pv": data["pv"]})
    return moves, ownership


def test_kata_analyze_lines_parse_as_lizzie_reads_them():
    p = player()
    engine = GtpEngine(p, size=9, komi=7.5)
    engine.handle_line("play b c3")
    engine.handle_line("play w d4")
    assert engine.handle_line("kata-analyze b 50 ownership true rootInfo true") == "=\n"
    assert engine.analysis_interval == 0.5
    p.ponder(engine.game, 48, 48)
    line = kata_line(p, engine.game, {"ownership", "rootInfo"})
    moves, ownership = lizzie_parse(line)
    assert moves and [m["order"] for m in moves] == list(range(len(moves)))
    assert sum(m["visits"] for m in moves) == 48
    assert all(0 <= m["winrate"] <= 1 and m["pv"][0] == m["move"] for m in moves)
    assert len(ownership) == 81
    # Black to move: its C3 stone counts +1 for it, White's D4 -1 (the side to move's view).
    assert ownership[6 * 9 + 2] == 1.0 and ownership[5 * 9 + 3] == -1.0
    assert "rootInfo visits 49 " in line


def test_kata_analyze_reports_the_lead_head_as_score_lead():
    p = player(heads_with_lead)
    engine = GtpEngine(p, size=9, komi=7.5)
    engine.handle_line("play b c3")
    p.ponder(engine.game, 32, 32)
    line = kata_line(p, engine.game, {"rootInfo"})
    moves, _ = lizzie_parse(line)
    # one evaluation per node at most: the lead is 2 * score - 1 in every node's own view, so
    # the search's means differ, and the line's scoreLead is not its scoreMean
    assert moves and any(abs(m["scoreLead"] - m["scoreMean"]) > 1e-3 for m in moves)
    root = line.split(" rootInfo ")[1].split()
    fields = dict(zip(root[::2], root[1::2]))
    assert float(fields["scoreLead"]) != float(fields["scoreMean"])
    without = player()                                        # no lead head: the score's mean
    without.ponder(engine.game, 32, 32)
    plain = lizzie_parse(kata_line(without, engine.game, {"rootInfo"}))[0]
    assert plain and all(m["scoreLead"] == m["scoreMean"] for m in plain)


def test_kata_genmove_analyze_response_shape():
    p = player()
    engine = GtpEngine(p, size=9, komi=7.5)
    text = engine.handle_line("7 kata-genmove_analyze b 1")
    lines = text.split("\n")
    assert lines[0] == "=7" and lines[-3].startswith("play ") and text.endswith("\n\n")
    assert all(x.startswith("info move ") for x in lines[1:-3])
    assert len(engine.game.moves) == 1


def test_rules_commands():
    engine = GtpEngine(player(), size=9)
    assert engine.handle_line("kata-get-rules") == (
        '= {"friendlyPassOk":false,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA",'
        '"suicide":false,"tax":"NONE","whiteHandicapBonus":"0"}\n\n')
    assert engine.handle_line('kata-set-rules {"ko":"POSITIONAL","scoring":"AREA"}') == "= \n\n"
    assert engine.handle_line("kata-set-rules japanese").startswith("? fastgo plays")
    assert engine.handle_line("kata-set-rules chess").startswith("? Could not parse rules")
    assert "kata-analyze" in engine.handle_line("list_commands")
