"""The ladder's calibration (fastgo.run.ladder): the rungs above GNU Go level 10 carry their
measured games into every fit that rates one of them, so a checkpoint near a rung gets a CGOS
interval from games near 50%; the published table says the same as the code."""
import math
import pathlib
import re

from fastgo.run import ladder
from fastgo.run.config import Config
from fastgo.run.ratings import CGOS_ANCHOR_ELO, CGOS_STAND_IN, RatingsTable, cgos_ratings
from fastgo.run.strength import strength_of
from fastgo.player_spec import parse_spec

DOCS = pathlib.Path(__file__).resolve().parents[4] / "docs" / "guide.md"


def test_the_ladder_is_the_default_and_rises_through_the_stand_in():
    assert Config().cluster.anchors == ladder.LADDER
    names = [parse_spec(text).name for text in ladder.LADDER]
    assert names == list(ladder.LADDER) and CGOS_STAND_IN in names
    # every calibrated rung is on the ladder above the stand-in
    above = names[names.index(CGOS_STAND_IN) + 1:]
    assert ladder.rungs() and ladder.rungs() <= set(above)


def test_calibration_games_join_a_fit_only_where_a_rung_was_played(monkeypatch):
    monkeypatch.setattr(ladder, "CALIBRATION", ((CGOS_STAND_IN, "rung:1", 5, 15, 0),
                                                ("rung:1", "rung:2", 6, 14, 0)))
    # a checkpoint that beats the stand-in every time and splits with rung:1
    base = [{"a": "ckpt-100", "b": "random", "wins_a": 20, "wins_b": 0, "draws": 0},
            {"a": "ckpt-100", "b": CGOS_STAND_IN, "wins_a": 20, "wins_b": 0, "draws": 0}]
    assert ladder.with_calibration(base) is base                     # no rung: nothing added
    rows = base + [{"a": "ckpt-100", "b": "rung:1", "wins_a": 10, "wins_b": 10, "draws": 0}]
    table = RatingsTable(rows, skipped_lines=[7])
    joined = ladder.with_calibration(table)
    assert joined[:3] == rows and joined.skipped_lines == [7]
    assert [r["calibration"] for r in joined[3:]] == [True, True]
    assert [(r["a"], r["b"], r["games"]) for r in joined[3:]] == [
        (CGOS_STAND_IN, "rung:1", 20), ("rung:1", "rung:2", 20)]
    # the checkpoint's CGOS rating with the calibration: above the stand-in, about rung:1's
    # (stand-in + 191 Elo for 15 of 20), its interval under 400 wide; without it, a 20-0
    # record against the stand-in leaves it over 2,000 wide
    with_games = strength_of(RatingsTable(rows)).cgos["ckpt-100"]
    alone = cgos_ratings(RatingsTable(rows))["ckpt-100"]
    rung = CGOS_ANCHOR_ELO + 400 * math.log10(15 / 5)
    assert CGOS_ANCHOR_ELO < with_games[1] and abs(with_games[0] - rung) < 250
    assert with_games[2] - with_games[1] < 400 < 2000 < alone[2] - alone[1]
    assert "rung:2" in strength_of(RatingsTable(rows)).cgos


def test_fastgo_ratings_says_it_added_the_calibration(tmp_path, capsys):
    from fastgo.run.ratings import append_result
    from fastgo_cli.main import main

    table = tmp_path / "ratings.jsonl"
    append_result(table, "ckpt-100", CGOS_STAND_IN, 20, 0)
    assert main(["ratings", str(table)]) == 0
    assert "calibration" not in capsys.readouterr().out
    append_result(table, "ckpt-100", "katago:1,t=4", 10, 10)
    assert main(["ratings", str(table)]) == 0
    said = capsys.readouterr().out
    assert f"with the ladder's {len(ladder.CALIBRATION)} calibration results" in said
    assert "katago:1 " in said            # a rung rated through the calibration alone


def published_rows():
    """(a, b, wins_a, wins_b, draws) of the ladder table in docs/guide.md."""
    text = DOCS.read_text()
    section = text[text.index("### The ladder"):]
    section = section[:section.index("\n#", 1)]
    found = []
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"\d+-\d+-\d+", cells[2]):
            wins_a, wins_b, draws = map(int, cells[2].split("-"))
            found.append((cells[0], cells[1], wins_a, wins_b, draws))
    return tuple(found)


def test_the_published_table_is_the_calibration():
    assert ladder.CALIBRATION and published_rows() == ladder.CALIBRATION
    for a, b, wins_a, wins_b, draws in ladder.CALIBRATION:
        assert parse_spec(a).name == a and parse_spec(b).name == b
        assert wins_a + wins_b + draws >= 16


def test_each_calibrated_distance_is_measured():
    # the rungs go up LADDER from the stand-in: each neighbouring pair was played, both sides
    # won games (so the pair's Elo distance has a finite interval, not only a bound) and the
    # lower one scored 20-80% (a step the evaluator's games near 50% can measure); other pairs
    # may be played too
    played = {(a, b): (wins_a, wins_b, draws) for a, b, wins_a, wins_b, draws in
              ladder.CALIBRATION}
    start = ladder.LADDER.index(CGOS_STAND_IN)
    calibrated = ladder.rungs() | {CGOS_STAND_IN}
    chain = [name for name in ladder.LADDER[start:] if name in calibrated]
    assert tuple(chain) == ladder.LADDER[start:start + len(chain)] and len(chain) >= 2
    for low, high in zip(chain, chain[1:]):
        wins_low, wins_high, draws = played[(low, high)]
        score = (wins_low + draws / 2) / (wins_low + wins_high + draws)
        assert wins_low > 0 and wins_high > 0 and 0.2 <= score <= 0.8, (low, high)
    for a, b in played:
        assert a in chain and b in chain and chain.index(a) < chain.index(b), (a, b)
