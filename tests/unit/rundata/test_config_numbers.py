"""Numbers of any size in a config file or a `--set` value: every one is range-checked where the
schema parses it, and a refusal is a ConfigError of one line naming the key, never an
OverflowError (an integer beyond float's range) or a ValueError (an integer of more digits than
Python converts, 4300 by default), whichever path the number comes in by."""
import math
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rundata.config import Config, ConfigError, load_config, loads_config

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
LIMIT = sys.get_int_max_str_digits() or 4300
HUGE = "1" + "0" * 400                          # 10**400: an int, but past float's range
DIGITS = "9" * (LIMIT + 700)                    # past Python's int-string limit

# (section.key, what a file or --set may set it to): floats, ints, tables of floats, arrays
NUMERIC_KEYS = ["selfplay.komi", "trainer.batch_size", "trainer.lr", "server.init_seed",
                "model.global_pool_every", "server.canary_max_abs_logit",
                "cluster.server_resources.CPU", "server.graph_batches", "selfplay.seed",
                "trainer.value_q_weight"]


def one_line_naming(err, key):
    text = str(err)
    assert "\n" not in text and len(text) < 400, text
    assert key in text, text


@pytest.mark.parametrize("key, value", [
    ("selfplay.komi", HUGE), ("selfplay.komi", "-" + HUGE), ("selfplay.komi", "1e400"),
    ("trainer.batch_size", DIGITS), ("trainer.batch_size", HUGE),
    ("cluster.server_resources.CPU", HUGE), ("cluster.server_resources.CPU", DIGITS),
    ("server.init_seed", HUGE), ("server.init_seed", "-" + DIGITS),
    ("model.global_pool_every", "0x" + "f" * 4000),
    ("server.canary_max_abs_logit", "inf"), ("server.graph_batches", f"[8, {DIGITS}]"),
    ("trainer.value_q_weight", "1.5"), ("trainer.value_q_weight", "nan"),
    ("cluster.busy_limit_s", "0.5"), ("cluster.busy_limit_s", "86401"),    # 1 s .. a day
], ids=lambda v: v if len(v) < 30 else f"{v[:8]}..({len(v)})")
@pytest.mark.parametrize("path", ["file", "--set"])
def test_a_number_out_of_range_is_one_line_naming_its_key(tmp_path, key, value, path):
    section, _, rest = key.partition(".")
    name, _, inner = rest.partition(".")
    toml_value = f"{{ {inner} = {value} }}" if inner else value
    text = f"[{section}]\n{name} = {toml_value}\n"
    config_file = tmp_path / "c.toml"
    if path == "file":
        config_file.write_text(text)
        overrides = ()
    else:
        config_file.write_text("")
        overrides = (f"{section}.{name}={toml_value}",)
    with pytest.raises(ConfigError) as info:
        load_config(config_file, overrides=overrides)
    one_line_naming(info.value, key if "[" not in value else key + "[1]")
    assert (str(config_file) if path == "file" else "--set") in str(info.value)


def test_numbers_in_range_still_load():
    config = loads_config("[selfplay]\nkomi = -7\n[server]\ninit_seed = 9223372036854775807\n"
                          "[cluster]\nserver_resources = {CPU = 1_000_000}\nbusy_limit_s = 86400\n")
    assert config.selfplay.komi == -7.0 and config.server.init_seed == 2 ** 63 - 1
    assert config.cluster.server_resources == {"CPU": 1e6}
    assert config.cluster.busy_limit_s == 86400.0 and Config().cluster.busy_limit_s == 900.0


def test_digits_inside_strings_and_comments_are_left_alone():
    # a long run of digits in a string or a comment is no number: only the integer is reported
    text = (f'# {DIGITS}\n[server]\nendpoint = "tcp://127.0.0.1:{DIGITS}"\n'
            f'[trainer]\nbatch_size = {DIGITS}\n')
    with pytest.raises(ConfigError) as info:
        loads_config(text)
    one_line_naming(info.value, "trainer.batch_size")


NUMBER_TEXT = st.one_of(
    st.integers(min_value=-10 ** 500, max_value=10 ** 500).map(str),
    st.integers(min_value=LIMIT - 5, max_value=LIMIT + 900).map(lambda n: "9" * n),
    st.integers(min_value=1, max_value=1200).map(lambda n: "0x" + "f" * n),
    st.builds("{}e{}".format, st.integers(-9, 9), st.integers(-999, 999)),
    st.floats(allow_nan=True, allow_infinity=True).map(
        lambda x: "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf") if math.isinf(x)
        else repr(x)),
    st.sampled_from(["1_000", "+1", "-0", "1__0", "0b" + "1" * 3000, "[1, 2]", "{CPU = 1}"]))


@FUZZ
@given(key=st.sampled_from(NUMERIC_KEYS), number=NUMBER_TEXT, by_override=st.booleans())
@example(key="selfplay.komi", number=HUGE, by_override=True)
@example(key="cluster.server_resources.CPU", number=HUGE, by_override=True)
@example(key="trainer.batch_size", number="9" * 5000, by_override=True)
@example(key="trainer.batch_size", number="9" * 5000, by_override=False)
@example(key="server.init_seed", number="0x" + "f" * 1100, by_override=False)
@example(key="server.canary_max_abs_logit", number="0x" + "f" * 16, by_override=False)
@example(key="selfplay.komi", number="1__0", by_override=False)
def test_fuzz_numbers_in_every_numeric_key(key, number, by_override):
    section, _, rest = key.partition(".")
    name, _, inner = rest.partition(".")
    value = f"{{ {inner} = {number} }}" if inner else number
    try:
        if by_override:
            config = loads_config("", overrides=(f"{section}.{name}={value}",))
        else:
            config = loads_config(f"[{section}]\n{name} = {value}\n")
    except ConfigError as err:
        text = str(err)
        assert "\n" not in text and len(text) < 600, text
        assert f"{section}.{name}" in text or "not valid TOML" in text, text
        return
    got = getattr(getattr(config, section), name)
    for item in (got.values() if isinstance(got, dict) else got if isinstance(got, tuple)
                 else (got,)):
        if isinstance(item, int):
            assert -2 ** 63 <= item < 2 ** 64, item
        else:
            assert math.isfinite(item), item
