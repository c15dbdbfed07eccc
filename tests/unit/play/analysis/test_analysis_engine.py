"""The analysis engine in process (play.analysis.engine) over a fake network whose heads are read off
the planes: ownership = the mover's stones +1, the opponent's -1; score = their sum less komi 7.5
for Black (the mover's margin at the komi it "learnt"); value = tanh(score / 10). Checks KataGo's
perspective rules (SIDETOMOVE / BLACK / WHITE flip win rates, scores, lcb, utility and ownership),
komi shifts, batching of a game's turns, avoidMoves at the root, terminate, and the NN cache."""
import io
import json

import numpy as np
import pytest

from play.analysis.engine import AnalysisEngine, EngineSettings
from play.analysis.query import Limits
from play.analysis.rules import FASTGO_RULES
from play.heads_cache import HeadsCache


class FakeHeads:
    def __init__(self, lead_factor=None):
        self.batches = []
        self.lead_factor = lead_factor      # a lead head answering lead_factor * score

    def __call__(self, planes):
        self.batches.append(planes.shape[0])
        own = (planes[:, 0].astype(np.float32) - planes[:, 1]).reshape(planes.shape[0], -1)
        black = planes[:, 16, 0, 0].astype(np.float32)           # 1: Black to move
        score = own.sum(axis=1) - 7.5 * (2 * black - 1)         # the margin at komi 7.5
        logits = np.zeros((planes.shape[0], own.shape[1] + 1), np.float32)
        logits[:, 40] = 2.0                                    # E5 on 9x9 is the favourite
        lead = None if self.lead_factor is None else self.lead_factor * score
        return logits, np.tanh(score / 10.0), own, score, lead


def engine(positions=4, leaves=1, model_komi=7.5, lead_factor=None):
    heads = FakeHeads(lead_factor)
    limits = Limits(sizes=(9,), max_visits=500, default_visits=20, model_komi=model_komi)
    eng = AnalysisEngine(HeadsCache(heads), board_size=9, encoding="alphazero",
                         settings=EngineSettings(positions=positions, leaves=leaves, limits=limits,
                                                 seed=1))
    eng.out = io.StringIO()
    return eng, heads


def run(eng, *queries):
    for q in queries:
        eng.handle_line(json.dumps(q).encode())
    while eng.step():
        pass
    return [json.loads(x) for x in eng.out.getvalue().splitlines()]


def query(ident, **fields):
    base = {"id": ident, "moves": [], "rules": FASTGO_RULES, "komi": 7.5, "boardXSize": 9,
            "boardYSize": 9, "maxVisits": 24}
    base.update(fields)
    return base


# Black owns the lower left 3x3 corner; White is to move.
CORNER = [["B", v] for v in ("A1", "A2", "A3", "B1", "B2", "B3", "C1", "C2", "C3")]


def answers(lines, ident):
    return [x for x in lines if x.get("id") == ident and "turnNumber" in x]


def test_perspective_flips_every_value():
    eng, _ = engine()
    side = dict(initialStones=CORNER, initialPlayer="W", includeOwnership=True,
                includeMovesOwnership=True)
    lines = run(eng, query("mover", **side),
                query("black", **side, overrideSettings={"reportAnalysisWinratesAs": "BLACK"}),
                query("white", **side, overrideSettings={"reportAnalysisWinratesAs": "WHITE"}))
    (mover,), (black,), (white,) = (answers(lines, i) for i in ("mover", "black", "white"))
    assert mover["rootInfo"]["currentPlayer"] == "W"
    assert mover == {**white, "id": "mover"}                   # White to move: the same view
    a1 = 8 * 9                                                  # row 8 (bottom), column A
    assert mover["ownership"][a1] == -1.0 and black["ownership"][a1] == 1.0
    for key in ("winrate", "lcb"):
        assert abs(mover["rootInfo"][key] + black["rootInfo"][key] - 1.0) < 1e-6
    for key in ("scoreLead", "utility", "rawLead"):
        assert abs(mover["rootInfo"][key] + black["rootInfo"][key]) < 1e-6
    # 9 black points, komi 7.5 at the network's komi: Black leads by 1.5 before the search.
    assert abs(black["rootInfo"]["rawLead"] - 1.5) < 1e-6
    for m, b in zip(mover["moveInfos"], black["moveInfos"]):
        assert m["move"] == b["move"] and abs(m["winrate"] + b["winrate"] - 1) < 1e-6
        assert abs(m["scoreLead"] + b["scoreLead"]) < 1e-6
        assert m["ownership"][a1] == -b["ownership"][a1]


def test_the_lead_head_gives_score_lead_and_the_score_head_the_mean():
    # A lead head that answers twice the score, from either side's view: averaged over the
    # tree from the root's view it is still twice the score's average, move by move.
    eng, _ = engine(lead_factor=2.0)
    lines = run(eng, query("l", initialStones=CORNER, initialPlayer="W",
                           overrideSettings={"reportAnalysisWinratesAs": "BLACK"}))
    (answer,) = answers(lines, "l")
    root = answer["rootInfo"]
    assert abs(root["rawLead"] - 3.0) < 1e-6 and abs(root["rawScoreSelfplay"] - 1.5) < 1e-6
    assert root["scoreSelfplay"] != 0 and abs(root["scoreLead"] - 2 * root["scoreSelfplay"]) < 1e-5
    for info in answer["moveInfos"]:
        assert info["scoreMean"] == info["scoreSelfplay"]
        assert abs(info["scoreLead"] - 2 * info["scoreMean"]) < 1e-5
    # without a lead head all three are the score's
    eng, _ = engine()
    (plain,) = answers(run(eng, query("p", initialStones=CORNER, initialPlayer="W")), "p")
    assert all(i["scoreLead"] == i["scoreMean"] for i in plain["moveInfos"])


def test_komi_shifts_the_score_head():
    eng, _ = engine()
    lines = run(eng, query("k", initialStones=CORNER, initialPlayer="W", komi=5.5,
                           overrideSettings={"reportAnalysisWinratesAs": "BLACK"}))
    (answer,) = answers(lines, "k")
    assert abs(answer["rootInfo"]["rawLead"] - 3.5) < 1e-6    # 9 - 7.5 + (7.5 - 5.5)
    assert any(x.get("field") == "komi" and "warning" in x for x in lines)


def test_a_games_turns_share_each_network_call():
    eng, heads = engine(positions=8)
    moves = [["B", "E5"], ["W", "C3"], ["B", "G3"], ["W", "C7"], ["B", "G7"], ["W", "E3"]]
    lines = run(eng, query("g", moves=moves, analyzeTurns=list(range(7)), maxVisits=10))
    assert sorted(a["turnNumber"] for a in answers(lines, "g")) == list(range(7))
    assert heads.batches[0] == 7                               # every turn's root at once
    assert all(a["rootInfo"]["visits"] == 10 for a in answers(lines, "g"))
    assert eng.cache.hits > 0                                  # found again by the stats


def test_avoid_moves_and_policy():
    eng, _ = engine()
    allowed = ["A9", "B9", "C9"]
    lines = run(eng, query("a", allowMoves=[{"player": "B", "moves": allowed, "untilDepth": 1}],
                           includePolicy=True, maxVisits=40))
    (answer,) = answers(lines, "a")
    assert {m["move"] for m in answer["moveInfos"]} <= set(allowed) | {"pass"}
    policy = answer["policy"]
    assert len(policy) == 82 and abs(sum(policy) - 1) < 1e-5
    assert max(range(82), key=policy.__getitem__) == 40        # the raw policy, unfiltered


def test_terminate_queued_and_running_turns():
    eng, _ = engine(positions=1)
    eng.handle_line(json.dumps(query("q", moves=[["B", "E5"]], analyzeTurns=[0, 1],
                                     maxVisits=100_000)).encode())
    eng.step()
    eng.step()
    eng.handle_line(b'{"id":"t","action":"terminate","terminateId":"q","turnNumbers":[1]}')
    eng.handle_line(b'{"id":"t2","action":"terminate_all"}')
    while eng.step():
        pass
    lines = [json.loads(x) for x in eng.out.getvalue().splitlines()]
    by_turn = {a["turnNumber"]: a for a in answers(lines, "q")}
    assert by_turn[1] == {"id": "q", "isDuringSearch": False, "noResults": True, "turnNumber": 1}
    assert 1 <= by_turn[0]["rootInfo"]["visits"] < 100
    assert [x["id"] for x in lines if "action" in x] == ["t", "t2"]


def test_a_finished_game_and_clear_cache():
    eng, _ = engine()
    lines = run(eng, query("end", moves=[["B", "pass"], ["W", "pass"]]),
                {"id": "c", "action": "clear_cache"})
    (answer,) = answers(lines, "end")
    # Black to move after the two passes, behind by the komi on an empty board.
    assert answer["moveInfos"] == [] and answer["rootInfo"]["scoreLead"] == -7.5
    assert len(eng.cache) == 0


def test_a_lead_that_is_not_finite_is_written_as_null_never_as_nan():
    """The writer's contract (bounded_json.dumps): a network that slipped past the load's
    canary with a NaN lead still gives lines any JSON reader parses."""
    eng, _ = engine(lead_factor=float("nan"))
    for q in (query("n", initialStones=CORNER, initialPlayer="W"),
              query("f", maxVisits=10 ** 400)):
        eng.handle_line(json.dumps(q).encode())
    while eng.step():
        pass
    text = eng.out.getvalue()
    lines = [json.loads(x, parse_constant=lambda c: pytest.fail(f"{c} written")) for x in
             text.splitlines()]
    (answer,) = answers(lines, "n")
    assert answer["rootInfo"]["scoreLead"] is None
    assert [m["field"] for m in lines if m.get("id") == "f"] == ["maxVisits"]
