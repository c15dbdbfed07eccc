"""The analysis query parser (play.analysis.query): KataGo's error and warning objects named by
field, the turns replayed, rules mapped onto ours; and a fuzz test: any bytes, and any JSON
object over the protocol's fields, give a Parsed and never an exception."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastgo.board import BLACK, WHITE
from play.analysis.query import Limits, parse_query
from play.analysis.rules import FASTGO_RULES, parse_rules, rules_json, substitution_warning

LIMITS = Limits(sizes=(9,), max_visits=1000, default_visits=50, model_komi=7.5)


def line(**fields):
    base = {"id": "q", "moves": [["B", "E5"], ["W", "C3"]], "rules": FASTGO_RULES,
            "komi": 7.5, "boardXSize": 9, "boardYSize": 9}
    base.update(fields)
    return json.dumps(base).encode()


def errors(parsed):
    return [m for m in parsed.messages if "error" in m]


def refused(field, **fields):
    parsed = parse_query(line(**fields), LIMITS)
    assert parsed.query is None and parsed.action is None
    (error,) = errors(parsed)
    assert error["id"] == "q" and error["field"] == field, error
    return error["error"]


def test_a_query_replays_its_turns():
    parsed = parse_query(line(analyzeTurns=[2, 0, 2], maxVisits=30, priority=5), LIMITS)
    assert errors(parsed) == []
    query = parsed.query
    assert [t for t, _ in query.turns] == [0, 2]          # sorted, once each
    assert [len(g.moves) for _, g in query.turns] == [0, 2]
    assert query.turns[1][1].to_move == BLACK
    assert query.max_visits == 30 and query.priorities == {0: 5, 2: 5}
    assert query.perspective == "SIDETOMOVE"


def test_defaults_and_the_last_turn():
    query = parse_query(line(), LIMITS).query
    assert [t for t, _ in query.turns] == [2] and query.max_visits == 50
    assert not (query.include_ownership or query.include_policy)


def test_each_field_refused_by_name():
    assert "2 to 25" in refused("boardXSize", boardXSize="9")
    assert "9 only" in refused("boardXSize", boardXSize=13, boardYSize=13)
    assert "square" in refused("boardYSize", boardYSize=7)
    assert refused("moves", moves="E5")
    assert "Could not parse board location: Z9" == refused("moves", moves=[["B", "Z9"]])
    assert "Could not parse player" in refused("moves", moves=[["X", "E5"]])
    assert "Illegal move 1: E5" == refused("moves", moves=[["B", "E5"], ["W", "E5"]])
    assert "at most 162" in refused("moves", moves=[["B", "pass"]] * 10_000)
    assert refused("maxVisits", maxVisits="many")
    assert refused("maxVisits", maxVisits=0)
    assert refused("maxVisits", maxVisits=True)
    assert refused("komi", komi=7.3)
    assert refused("komi", komi=1000)
    assert "Invalid turn number: 3" == refused("analyzeTurns", analyzeTurns=[3])
    assert refused("includeOwnership", includeOwnership="yes")
    assert refused("rules", rules="chess")
    assert refused("rules", rules={"ko": "SOMETIMES"})
    assert refused("initialStones", initialStones=[["B", "A1"], ["W", "A1"]])
    assert refused("initialStones", initialStones=[["B", "pass"]])
    assert refused("overrideSettings", overrideSettings={"reportAnalysisWinratesAs": "RED"})
    assert refused("overrideSettings", overrideSettings=[1])
    assert refused("avoidMoves", avoidMoves=[{"player": "B", "moves": ["E5"]}])
    assert refused("allowMoves", allowMoves=[], avoidMoves=[])
    assert refused("reportDuringSearchEvery", reportDuringSearchEvery=0)
    assert refused("priority", priority=2 ** 63)


NUMBERS = ("komi", "reportDuringSearchEvery", "firstReportDuringSearchAfter", "maxVisits",
           "analysisPVLen", "priority")


@pytest.mark.parametrize("huge", [10 ** 400, -(10 ** 400), "1e400", "-1e999", "1" * 4000],
                         ids=lambda v: str(v)[:8])
@pytest.mark.parametrize("name", NUMBERS)
def test_a_number_too_large_for_a_float_is_the_fields_one_line_error(name, huge):
    """10**400 (and 1e400, which json reads as inf) is refused by the field's range, never by
    OverflowError; a JSON integer of 4,000 digits is one the decoder takes too."""
    text = line(**{name: "HUGE"}).decode().replace('"HUGE"', str(huge))
    parsed = parse_query(text.encode(), LIMITS)
    assert parsed.query is None and parsed.action is None
    (error,) = errors(parsed)
    assert error["id"] == "q" and error["field"] == name and "\n" not in error["error"]


@pytest.mark.parametrize("huge", [10 ** 400, -(10 ** 400), "1e400"], ids=lambda v: str(v)[:8])
@pytest.mark.parametrize("name", ["maxTime", "wideRootNoise", "maxVisits", "analysisPVLen"])
def test_a_setting_too_large_for_a_float_is_refused_under_override_settings(name, huge):
    text = line(overrideSettings={name: "HUGE"}).decode().replace('"HUGE"', str(huge))
    (error,) = errors(parse_query(text.encode(), LIMITS))
    assert error["field"] == "overrideSettings" and name in error["error"]


def test_settings_in_range_still_apply():
    query = parse_query(line(overrideSettings={"maxTime": 2, "maxVisits": 40}), LIMITS).query
    assert query.max_time == 2.0 and type(query.max_time) is float and query.max_visits == 40


def test_lines_without_an_id_or_not_json():
    for raw in (b"\xff\xfe{}", b"garbage", b"[1, 2]", b'{"moves": []}', b'{"id": 5}',
                b"[" * 100_000, b'{"id": "q", "komi": NaN}'):
        parsed = parse_query(raw, LIMITS)
        assert parsed.query is None and parsed.action is None
        assert len(parsed.messages) == 1 and "error" in parsed.messages[0] and \
            "id" not in parsed.messages[0], raw[:20]


def test_warnings_name_the_field_and_the_query_goes_on():
    parsed = parse_query(line(typo=1, includePVVisits=True, komi=6.5, rules="japanese",
                              maxVisits=10 ** 9,
                              overrideSettings={"maxTime": 2.5, "cpuctExploration": 1,
                                                "reportAnalysisWinratesAs": "black"}), LIMITS)
    assert errors(parsed) == []
    fields = {m["field"]: m["warning"] for m in parsed.messages}
    assert set(fields) == {"typo", "includePVVisits", "komi", "rules", "maxVisits",
                           "overrideSettings"}
    assert "cpuctExploration" in fields["overrideSettings"]
    assert "scoring" in fields["rules"]
    query = parsed.query
    assert query.max_visits == 1000 and query.max_time == 2.5 and query.perspective == "BLACK"


def test_actions():
    parsed = parse_query(b'{"id": "t", "action": "terminate", "terminateId": "q", "turnNumbers": [1]}')
    assert parsed.action["terminateId"] == "q" and parsed.messages == []
    assert parse_query(b'{"id": "t", "action": "terminate"}').messages[0]["field"] == "terminateId"
    assert parse_query(b'{"id": "t", "action": "fly"}').messages[0]["field"] == "action"
    assert parse_query(b'{"id": "t", "action": "terminate_all", "turnNumbers": "x"}'
                       ).messages[0]["field"] == "turnNumbers"


def test_avoid_and_allow_apply_at_the_root():
    parsed = parse_query(line(avoidMoves=[{"player": "B", "moves": ["A1", "pass"], "untilDepth": 1},
                                          {"player": "W", "moves": ["B2"], "untilDepth": 3}]), LIMITS)
    assert parsed.query.avoid == {BLACK: {72, 81}, WHITE: {64}}
    assert [m["field"] for m in parsed.messages] == ["avoidMoves"]       # untilDepth 3: root only


def test_moves_out_of_turn_and_initial_player():
    query = parse_query(line(moves=[["B", "E5"], ["B", "C3"]], initialStones=[["W", "A1"]],
                             analyzeTurns=[0, 2]), LIMITS).query
    assert query.turns[0][1].to_move == BLACK and query.turns[1][1].to_move == WHITE
    query = parse_query(line(moves=[], initialPlayer="W"), LIMITS).query
    assert query.turns[0][1].to_move == WHITE


def test_rules():
    assert parse_rules("Tromp_Taylor")["suicide"] is True     # KataGo's: ours refuses suicide
    assert "(suicide differ)" in substitution_warning(parse_rules("tromp-taylor"))
    assert parse_rules('{"ko": "positional"}') == FASTGO_RULES
    assert substitution_warning(FASTGO_RULES) is None
    assert "whiteHandicapBonus" in substitution_warning(parse_rules("chinese-ogs"))
    assert rules_json(FASTGO_RULES).startswith('{"friendlyPassOk":false,')



def test_rules_text_nested_at_the_bound_is_parsed_and_past_it_refused():
    """A rules JSON text inside the query's string (the line's own nesting check cannot see
    it): 64 levels are parsed (and refused as rules), 65 and the 990 that once raised
    RecursionError out of the engine are refused in one line without parsing."""
    at_bound = '{"ko": ' + "[" * 63 + "]" * 63 + "}"
    message = refused("rules", rules=at_bound)
    assert "nested deeper" not in message and message.startswith("Could not parse rules")
    for text in ('{"ko": ' + "[" * 64 + "]" * 64 + "}", '{"":' + "[" * 990,
                 '{"a":' * 199 + "{}"):
        message = refused("rules", rules=text)
        assert message.startswith("Could not parse rules (nested deeper than 64 arrays and "
                                  "objects)") and "\n" not in message, message


def test_a_line_nested_at_the_bound_is_parsed_and_past_it_refused():
    from play.analysis.lines import MAX_NESTING
    deep = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)         # inside the query's object
    text = line(moves=[]).decode().replace('"moves": []', '"moves": ' + deep)
    message = errors(parse_query(text.encode(), LIMITS))[0]
    assert message["field"] == "moves" and "nested" not in message["error"]
    past = "[" * MAX_NESTING + "]" * MAX_NESTING
    text = line(moves=[]).decode().replace('"moves": []', '"moves": ' + past)
    assert errors(parse_query(text.encode(), LIMITS)) == [
        {"id": "q", "field": "moves", "error": f"nested deeper than {MAX_NESTING} arrays and objects"}]


FIELDS = ["id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize",
          "boardYSize", "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy",
          "includeMovesOwnership", "priority", "priorities", "overrideSettings", "avoidMoves",
          "allowMoves", "reportDuringSearchEvery", "firstReportDuringSearchAfter", "action",
          "terminateId", "turnNumbers", "analysisPVLen", "typo"]
# integers too large for a float (10**400 is valid JSON; float() of it raises OverflowError)
HUGE = st.sampled_from([10 ** 400, -(10 ** 400), 10 ** 309, 2 ** 1024, -(2 ** 1024) - 1])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), HUGE,
                    st.floats(allow_nan=False), st.text(max_size=8),
                    st.sampled_from(["B", "W", "E5", "pass", "A1", "J9", "japanese", "terminate",
                                     "query_version", "BLACK", 9]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.sampled_from(FIELDS + [
        "player", "moves", "untilDepth", "maxTime", "wideRootNoise", "maxVisits"]),
                                                 inner, max_size=4)), max_leaves=12)
MOVES = st.lists(st.tuples(st.sampled_from(["B", "W", "b", "x"]),
                           st.sampled_from(["E5", "C3", "pass", "A1", "J9", "Z1", "E6", "D5"])
                           ).map(list), max_size=12)


def check(parsed):
    assert isinstance(parsed.messages, list)
    for message in parsed.messages:
        assert ("error" in message) != ("warning" in message)
        json.dumps(message)
    assert parsed.query is None or parsed.action is None
    if parsed.query is not None:
        assert not any("error" in m for m in parsed.messages)
        for turn, game in parsed.query.turns:
            assert len(game.moves) <= turn
        assert 1 <= parsed.query.max_visits <= LIMITS.max_visits


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=10), MOVES, st.booleans())
def test_fuzz_objects(extra, moves, base):
    obj = json.loads(line(moves=moves)) if base else {}
    obj.update(extra)
    check(parse_query(json.dumps(obj).encode(), LIMITS))


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_bytes(raw):
    check(parse_query(raw, LIMITS))
