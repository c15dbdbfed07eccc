"""SGF: reading FF[4] main lines, writing them back, building games, and malformed input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgo import sgf
from fastgo.sgf import BLACK, WHITE, SgfError, SgfGame


def _random_record(size, seed, with_comments=True):
    """A finished random game on `size` as an SgfGame (setup stones, passes, comments)."""
    from fastgo.board import Random
    from fastgo.game import Game

    rng = Random(seed)
    game = Game(size=size, komi=6.5)
    setup_black = [0, size + 1] if seed % 2 else []
    if setup_black:
        game.setup(black=setup_black)
    while not game.is_over():
        move = game.board.random_move(rng)
        if not game.is_legal(move):
            move = game.pass_move
        game.play(move)
    comments = {0: "root ] and \\ and\nnewline"} if with_comments else {}
    if with_comments:
        comments[3] = "third [move]"
        comments[len(game.moves)] = "the end"
    record = sgf.record_from_game(game, setup_black=setup_black, black_player="fastgo random",
                                  white_player="W [x]", rules="Chinese", date="2024-01-01",
                                  comments=comments)
    return game, record


@pytest.mark.parametrize("size, seed", [(9, 1), (9, 2), (13, 3), (19, 4), (5, 5), (25, 6)])
def test_round_trip_of_random_games(size, seed):
    game, record = _random_record(size, seed)
    text = sgf.write_sgf(record)
    again = sgf.parse_sgf(text)
    assert again == record
    assert again.result == game.result_string()
    rebuilt = sgf.to_game(again)
    assert rebuilt.moves == game.moves
    assert (rebuilt.board.stones() == game.board.stones()).all()
    assert rebuilt.result_string() == game.result_string()
    assert rebuilt.komi == game.komi


def test_written_text_is_plain_ff4():
    _, record = _random_record(9, 7, with_comments=False)
    text = sgf.write_sgf(record)
    assert text.startswith("(;FF[4]GM[1]")
    assert "SZ[9]" in text and "KM[6.5]" in text and "RE[" in text
    assert text.endswith(")\n")
    assert "\n\n" not in text
    assert ";B[]" in text or ";W[]" in text      # two passes end a random game


def test_reads_a_hand_written_game():
    text = """(;GM[1]FF[4]CA[UTF-8]SZ[19]KM[7.5]RU[Japanese]PB[Black Player]PW[White]
        RE[W+R]DT[2020-02-02]HA[2]AB[dp][pd]C[handicap
game]
        ;W[qp]C[first \\] move];B[];W[tt]
        ;B[dd](;W[pp]C[main])(;W[cc]C[variation];B[dc]))"""
    game = sgf.parse_sgf(text)
    assert game.size == 19 and game.komi == 7.5 and game.rules == "Japanese"
    assert game.black_player == "Black Player" and game.white_player == "White"
    assert game.result == "W+R" and game.date == "2020-02-02" and game.handicap == 2
    assert game.setup_black == [15 * 19 + 3, 3 * 19 + 15] and game.setup_white == []
    assert game.moves == [(WHITE, 15 * 19 + 16), (BLACK, 361), (WHITE, 361), (BLACK, 3 * 19 + 3),
                          (WHITE, 15 * 19 + 15)]
    assert game.comments == {0: "handicap\ngame", 1: "first ] move", 5: "main"}


def test_defaults_and_lenient_bits():
    game = sgf.parse_sgf("\ufeff  (;B[aa]) trailing words")
    assert game.size == 19 and game.komi is None and game.moves == [(BLACK, 0)]
    # FF[3] lower-case letters in identifiers, soft line breaks, point rectangles, AE.
    game = sgf.parse_sgf("(;SZ[5]AddBlack[aa:bb]AW[ee]C[soft\\\nbreak];AE[ee];B[cc])")
    assert sorted(game.setup_black) == [0, 1, 5, 6]
    assert game.setup_white == []
    assert game.comments == {0: "softbreak"}
    assert game.moves == [(BLACK, 12)]


def test_collection_takes_the_first_game():
    game = sgf.parse_sgf("(;SZ[9];B[aa])(;SZ[13];B[bb])")
    assert game.size == 9 and game.moves == [(BLACK, 0)]


def test_first_player_and_handicap_to_move():
    game = sgf.to_game(sgf.parse_sgf("(;SZ[9]HA[2]AB[cc][gg])"))
    assert game.to_move == WHITE
    game = sgf.to_game(sgf.parse_sgf("(;SZ[9]PL[W])"))
    assert game.to_move == WHITE
    game = sgf.to_game(sgf.parse_sgf("(;SZ[9];W[cc];W[dd])"))
    assert game.moves == [(WHITE, 20), (WHITE, 30)]


def test_to_game_prefix_and_komi_override():
    record = sgf.parse_sgf("(;SZ[9]KM[0.5];B[aa];W[bb];B[cc])")
    assert len(sgf.to_game(record, moves=2).moves) == 2
    assert sgf.to_game(record, komi=3.0).komi == 3.0
    assert sgf.to_game(record).komi == 0.5


def test_illegal_move_in_file_is_an_sgf_error():
    with pytest.raises(SgfError, match="move 2 .*occupied"):
        sgf.to_game(sgf.parse_sgf("(;SZ[9];B[aa];W[aa])"))
    with pytest.raises(SgfError, match="setup"):
        sgf.to_game(sgf.parse_sgf("(;SZ[9]AB[ab][ba]AW[aa])"))


def test_escaping():
    record = SgfGame(size=9, komi=7.5, black_player="a]b\\c", comments={0: "x]\\]y", 1: "]"},
                     moves=[(BLACK, 40)])
    text = sgf.write_sgf(record)
    assert "PB[a\\]b\\\\c]" in text
    assert sgf.parse_sgf(text) == record


def test_read_file_limits_size(tmp_path):
    path = tmp_path / "big.sgf"
    path.write_bytes(b"(;SZ[9]C[" + b"x" * 5000 + b"])")
    assert sgf.read_sgf_file(path).comments[0] == "x" * 5000
    with pytest.raises(SgfError, match="too large"):
        sgf.read_sgf_file(path, max_chars=1000)


def test_latin1_bytes_are_decoded():
    game = sgf.parse_sgf(b"(;PB[Caf\xe9])")
    assert game.black_player == "Caf\u00e9"


MALFORMED = [
    ("", "no game tree"),
    ("   ", "no game tree"),
    ("garbage", "expected '\\('"),
    (")", "expected '\\('"),
    ("(;SZ[9];B[dd]", "unclosed game tree"),
    ("(;SZ[9];B[dd", "unclosed property value"),
    ("(;C[abc\\])", "unclosed property value"),
    ("()", "empty game tree"),
    ("((;B[aa]))", "variation '\\(' before"),
    ("(;B[aa](;W[bb]);B[cc])", "after a variation"),
    ("(;B[aa] W [bb])", "both a B and a W"),
    ("(;B[aa][bb])", "takes one value"),
    ("(;SZ[x])", "SZ\\[x\\] is not a board size"),
    ("(;SZ[1])", "outside 2..25"),
    ("(;SZ[52])", "outside 2..25"),
    ("(;SZ[9:13])", "rectangular"),
    ("(;SZ[9][9])", "takes one value"),
    ("(;KM[seven])", "KM\\[seven\\] is not a number"),
    ("(;KM[nan])", r"KM\[nan\] is not a number"),
    ("(;GM[2])", "not a game of Go"),
    ("(;SZ[9];B[jj])", "'jj' is off a 9x9 board"),
    ("(;SZ[9];B[a])", "invalid SGF point 'a'"),
    ("(;SZ[9];W[a1])", "invalid SGF point 'a1'"),
    ("(;SZ[9]AB[aa:zz])", "off a 9x9 board"),
    ("(;SZ[9]AB[])", "pass '' is not a point"),
    ("(;SZ[9];B[aa];AB[bb])", "after the first move"),
    ("(;B)", "has no value"),
    ("(;B ;W[aa])", "has no value"),
    ("(;[aa])", "unexpected character"),
    ("(;B[aa]{)", "unexpected character"),
    ("(;PL[X])", "PL\\[X\\] is not B or W"),
    ("(;HA[many])", "not a number of stones"),
    ("(;FF[4]((((;B[aa]))))", "variation '\\(' before"),
    ("(a[b])", "before the node's ';'"),
    ("(;B[aa]((;W[bb]", "variation '\\(' before"),
]


@pytest.mark.parametrize("text, message", MALFORMED)
def test_malformed_inputs_name_what_and_where(text, message):
    with pytest.raises(SgfError, match=message) as info:
        sgf.parse_sgf(text)
    assert isinstance(info.value, ValueError)
    assert " at line " in str(info.value)
    assert info.value.line >= 1 and info.value.col >= 1


def test_error_position_is_line_and_column():
    text = "(;SZ[9]\n;B[aa]\n;W[zz])"
    with pytest.raises(SgfError) as info:
        sgf.parse_sgf(text)
    assert (info.value.line, info.value.col, info.value.offset) == (3, 3, 17)


def test_huge_and_deep_inputs_are_refused_or_parsed_without_recursion():
    with pytest.raises(SgfError, match="too large"):
        sgf.parse_sgf("(;C[" + "x" * (sgf.MAX_CHARS + 1) + "])")
    with pytest.raises(SgfError, match="nested deeper"):
        sgf.parse_sgf("(;B[aa]" * 20_000 + ")" * 20_000, max_depth=1000)
    with pytest.raises(SgfError, match="more than 100 nodes"):
        sgf.parse_sgf("(" + ";B[aa]" * 1000 + ")", max_nodes=100)
    # Long but legal nesting parses with an explicit stack (no recursion limit).
    game = sgf.parse_sgf("(;SZ[9]" + "(;C[x]" * 5000 + ")" * 5001)
    assert game.comments[0] == "x" + "\nx" * 4999
    # Pathological escapes and unclosed values stay linear.
    with pytest.raises(SgfError, match="unclosed property value"):
        sgf.parse_sgf("(;C[" + "\\]" * 1_000_000)
    with pytest.raises(SgfError, match="unclosed game tree"):
        sgf.parse_sgf("(;" + "C[a]" * 200_000)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="();[]\\:BWCSZKMABaedt19 \n", max_size=60))
def test_arbitrary_text_parses_or_raises_sgf_error(text):
    try:
        game = sgf.parse_sgf(text)
    except SgfError:
        return
    assert isinstance(game, SgfGame)


_PLAIN = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\r\n\f\v"),
                 max_size=40)


@settings(max_examples=100, deadline=None)
@given(_PLAIN, _PLAIN, st.text(max_size=40))
def test_any_text_survives_a_round_trip(name, comment, messy):
    record = SgfGame(size=9, komi=7.5, black_player=name, comments={0: comment} if comment else {})
    assert sgf.parse_sgf(sgf.write_sgf(record)) == record
    # Line breaks and tabs are normalised once; after that the text is stable.
    messy_record = SgfGame(size=9, white_player=messy, comments={2: messy} if messy else {})
    once = sgf.parse_sgf(sgf.write_sgf(messy_record))
    assert sgf.parse_sgf(sgf.write_sgf(once)) == once


def test_komi_is_written_as_a_plain_decimal():
    from fastgo.game import Game

    record = sgf.record_from_game(Game(size=9, komi=6.3))    # the board keeps a C float
    assert record.komi == 6.3
    assert "KM[6.3]" in sgf.write_sgf(record)
    assert "KM[-0.5]" in sgf.write_sgf(SgfGame(size=9, komi=-0.5))
    assert "KM[0]" in sgf.write_sgf(SgfGame(size=9, komi=1e-9))
