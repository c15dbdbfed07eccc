"""Fuzzing the GTP player-spec parser (fastgo.player_spec.parse_gtp_spec) with hypothesis, bounded
(max_examples, no per-example deadline). Every text is either an engine command line whose program
is named, or a one-line ValueError; the @example inputs are ones that were once accepted with an
empty program name."""
import shlex

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fastgo.player_spec import parse_gtp_spec

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
PIECES = st.sampled_from(['"', "'", " ", "\t", "\\", "engine", "--gtp", "", "a b", "\n"])


@FUZZ
@given(st.lists(PIECES, max_size=8).map("".join) | st.text(max_size=40))
@example('""')
@example("''")
@example('"" --mode gtp')
@example('" "')
def test_gtp_spec_names_a_program_or_is_one_line_error(command):
    try:
        argv = parse_gtp_spec("gtp:" + command)
    except ValueError as exc:
        assert "\n" not in str(exc), exc
        return
    assert argv == shlex.split(command)
    assert argv and argv[0].strip(), argv


KATAGO_PIECES = st.sampled_from(["1", "4", "0", "10000001", ",", "t", "r", "=", "0.5", "5", "5.5",
                                 "nan", "-1", ":", "/m.bin.gz", " ", "x", "1e0", "", "_",
                                 "\u0663", "\u00b2", "inf", "1" + "0" * 400, "\uff15"])
# digits float() takes but the strict reader does not: '_' separators, other scripts' digits
NOT_ASCII_NUMBERS = ("_", "\u0663", "\u00b2", "\uff15", "inf", "nan")


@FUZZ
@given(st.lists(KATAGO_PIECES, max_size=7).map("".join) | st.text(max_size=30))
@example("1,t=5.5")
@example("1,t=nan")
@example("1,r=1.5")
@example("1,t=4,r=0.1")
@example("1,r=0.1,r=0.1")
@example("1,t=")
@example("1,t=0_5")
@example("1,t=\u0663")
@example("1,r=0.\u0661")
def test_katago_spec_is_in_range_or_one_line_error(rest):
    from fastgo.player_spec import MAX_KATAGO_VISITS, MAX_TEMPERATURE, parse_spec

    try:
        spec = parse_spec("katago:" + rest)
    except ValueError as exc:
        assert "\n" not in str(exc), exc
        return
    assert spec.kind == "katago" and 1 <= spec.count <= MAX_KATAGO_VISITS
    assert spec.temperature is None or 0.0 <= spec.temperature <= MAX_TEMPERATURE
    assert spec.random_share is None or 0.0 <= spec.random_share <= 1.0
    options = rest.partition(":")[0].split(",")[1:]
    assert len(options) == (spec.temperature is not None) + (spec.random_share is not None)
    assert parse_spec(spec.name).name == spec.name       # the name is a spec of the same player
    # an option's number is read as VISITS is, by the strict reader: ASCII digits only
    assert not any(bad in "".join(options) for bad in NOT_ASCII_NUMBERS), rest


@pytest.mark.parametrize("option", ["t=0_5", "t=1_0", "t=\u0663", "t=\u0661.5", "r=0.\u0665",
                                    "t=\u00b2", "t=\uff11", "t=inf", "t=nan", "r=1e400",
                                    "t=" + "1" * 400, "t=1" + "0" * 400, "t=", "t= "])
def test_katago_option_numbers_are_read_as_visits_are(option):
    """katago:1,t=0_5 and an Arabic-Indic digit were once accepted through float()."""
    from fastgo.player_spec import parse_spec

    with pytest.raises(ValueError, match="KataGo's") as err:
        parse_spec("katago:1," + option)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_katago_option_numbers_in_ascii_are_taken():
    from fastgo.player_spec import parse_spec

    spec = parse_spec("katago:2,t=0.5,r= 0.25")
    assert (spec.count, spec.temperature, spec.random_share) == (2, 0.5, 0.25)
