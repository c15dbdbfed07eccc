"""fastgo.bounds: each quantity's range is one Bounds, and every place that bounds the quantity
takes it from there: the config schema, the shard and SGF readers, the command line's option
types (the commands' own checks are gone)."""
import argparse
import math

import pytest

from fastgo.bounds import KOMI, LEAVES, SEED, STEPS, Bounds


def test_a_range_holds_its_ends_and_refuses_the_rest():
    assert -1000.0 in KOMI and 1000 in KOMI and 1000.5 not in KOMI
    assert math.nan not in KOMI and math.inf not in KOMI and "7.5" not in KOMI and True not in KOMI
    assert 0 in SEED and 2**63 - 1 in SEED and 2**63 not in SEED and -1 not in SEED
    assert 1 in LEAVES and 256 in LEAVES and 0 not in LEAVES and 257 not in LEAVES
    half_open = Bounds(0.0, 1.0, high_open=True)
    assert 0.0 in half_open and 1.0 not in half_open and 0.999 in half_open


def test_a_range_is_shown_as_people_write_it():
    assert [str(b) for b in (KOMI, SEED, LEAVES, STEPS)] == \
        ["-1000..1000", "0..2**63-1", "1..256", "0..2**40"]
    assert str(Bounds(0.0, 1e6, low_open=True)) == "(0, 1e6]"
    assert str(Bounds(0, 1_000_000)) == "0..1000000"


def test_the_config_takes_its_ranges_from_the_bounds():
    from rundata.config import setting_bounds

    assert setting_bounds("selfplay.komi") == (KOMI.low, KOMI.high)
    for key in ("selfplay.seed", "trainer.seed", "server.init_seed"):
        assert setting_bounds(key) == (SEED.low, SEED.high), key


def test_the_readers_refuse_a_komi_outside_the_range():
    from fastgo import sgf

    assert sgf.parse_sgf("(;SZ[9]KM[1000])").komi == 1000.0
    with pytest.raises(sgf.SgfError, match=r"KM\[1000\.5\] is outside -1000\.\.1000"):
        sgf.parse_sgf("(;SZ[9]KM[1000.5])")


@pytest.mark.parametrize("name, good, bad", [
    ("komi", ["-1000", "7.5", "1000"], ["1000.5", "nan", "inf"]),
    ("seed", ["0", str(2**63 - 1)], ["-1", str(2**63), str(2**64)]),
    ("leaves", ["1", "256"], ["0", "257"]),
])
def test_the_option_types_take_the_same_ranges(name, good, bad):
    import fastgo_cli.parser

    option = getattr(fastgo_cli.parser, name)
    assert option.__name__ == name          # argparse's 'invalid NAME value' for a non-number
    for text in good:
        option(text)
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match=r"^must be in "):
            option(text)
    with pytest.raises(ValueError):
        option("many")
