"""The shared TOML config loader: sections into frozen dataclasses, errors name key and file."""
import dataclasses
import glob
import os

import pytest

from rundata.config import (
    Config,
    ConfigError,
    ModelConfig,
    ServerConfig,
    load_config,
    loads_config,
    parse_section,
    to_dict,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def write(tmp_path, text):
    path = tmp_path / "run.toml"
    path.write_text(text)
    return str(path)


def test_defaults_and_values(tmp_path):
    config = load_config(write(tmp_path, """
[model]
board_size = 13
blocks = 2
channels = 16
encoding = "liberty"

[server]
max_batch = 32
watch_interval_s = 2          # an integer where a float is expected is fine
slots = ["current", "best"]
checkpoints = { best = "best.ckpt" }
"""))
    assert config.model.name == "b2c16"
    assert config.model.planes == 11 and config.model.moves == 13 * 13 + 1
    assert config.server.max_batch == 32 and config.server.max_wait_us == 1000
    assert config.server.watch_interval_s == 2.0 and isinstance(config.server.watch_interval_s, float)
    assert config.server.slots == ("current", "best")
    assert config.server.checkpoints == {"best": "best.ckpt"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.server.max_batch = 1


def test_empty_file_gives_defaults(tmp_path):
    assert load_config(write(tmp_path, "")) == Config()


@pytest.mark.parametrize("text, words", [
    ("[server]\nmax_bach = 3", ["server.max_bach", "unknown key"]),
    ("[servr]\nmax_batch = 3", ["servr", "unknown key"]),
    ("[server]\nmax_batch = \"64\"", ["server.max_batch", "integer"]),
    ("[server]\nmax_batch = 64.0", ["server.max_batch", "integer"]),
    ("[server]\nchannels_last = 1", ["server.channels_last", "true or false"]),
    ("[server]\nmax_batch = 0", ["server.max_batch", ">= 1"]),
    ("[server]\nmax_wait_us = -5", ["server.max_wait_us", ">= 0"]),
    ("[server]\ngraph_batches = [8, 0]", ["graph_batches", "must be in 1.."]),
    ("[server]\ngraph_batches = [" + ", ".join(["8"] * 17) + "]", ["graph_batches", "at most 16"]),
    ("[model]\nboard_size = 1", ["model.board_size", ">= 2"]),
    ("[model]\nboard_size = 40", ["model.board_size", "<= 25"]),
    ("[model]\nencoding = \"planes\"", ["model.encoding", "alphazero"]),
    ("[server]\ndevice = \"tpu\"", ["server.device", "one of"]),
    ("[server]\nendpoint = \"http://x\"", ["server.endpoint"]),
    ("[server]\nslots = []", ["server.slots"]),
    ("[server]\nslots = [\"a\", \"a\"]", ["server.slots", "duplicate"]),
    ("[server]\nslots = [3]", ["server.slots[0]", "string"]),
    ("[server]\ncheckpoints = { best = \"b.ckpt\" }", ["server.checkpoints.best", "no such slot"]),
    ("[server]\ncheckpoints = { current = 3 }", ["server.checkpoints.current", "string"]),
    ("server = 3", ["server", "table"]),
    ("[server\nmax_batch = 3", ["not valid TOML"]),
])
def test_errors_name_the_key_and_the_file(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert path in message
    for word in words:
        assert word in message


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(str(tmp_path / "nope.toml"))


def test_model_names():
    config = ModelConfig.from_name("b6c64", board_size=19)
    assert (config.blocks, config.channels, config.board_size, config.name) == (6, 64, 19, "b6c64")
    with pytest.raises(ConfigError):
        ModelConfig.from_name("6x64")
    with pytest.raises(ConfigError):
        ModelConfig.from_name("b0c64")


def test_round_trip_through_dict():
    server = ServerConfig(slots=("current", "best"), checkpoints={"best": "x"}, graph_batches=(8, 16))
    assert parse_section(ServerConfig, to_dict(server), prefix="server") == server
    model = ModelConfig(board_size=7, blocks=3, channels=8, global_pool_every=2)
    assert parse_section(ModelConfig, to_dict(model)) == model


def test_shipped_configs_load():
    paths = sorted(glob.glob(os.path.join(ROOT, "configs", "*.toml")))
    assert len(paths) >= 4
    for path in paths:
        config = load_config(path)
        assert config.model.moves == config.model.board_size ** 2 + 1


def test_loads_config_names_source():
    with pytest.raises(ConfigError, match="inline: unknown key 'model.bloks'"):
        loads_config("[model]\nbloks = 3", source="inline")


def test_config_size_and_nesting_limits_just_under_and_over(tmp_path):
    from rundata.config import MAX_CONFIG_BYTES, MAX_TOML_DEPTH

    def nested(depth):
        return "x = " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(ConfigError, match="unknown key 'x'"):       # parsed: under the limit
        loads_config(nested(MAX_TOML_DEPTH))
    with pytest.raises(ConfigError, match="nested deeper"):
        loads_config(nested(MAX_TOML_DEPTH + 1))
    with pytest.raises(ConfigError, match="nested deeper"):
        loads_config("x = " + "{a = " * 5000 + "1" + "}" * 5000)
    # Brackets inside strings and comments are not nesting.
    brackets = "[" * (MAX_TOML_DEPTH + 1)
    config = loads_config(f"# {brackets}\n[server]\nlog_file = '{brackets}'\n"
                          f"curve_secret_key_file = \"{brackets}\"\n")
    assert config.server.log_file == brackets
    path = tmp_path / "big.toml"
    padding = "#" * (MAX_CONFIG_BYTES - len("[server]\n") - 1) + "\n"
    path.write_text("[server]\n" + padding)
    assert load_config(path).server.max_batch == 64                  # exactly at the limit
    path.write_text("[server]\n" + padding + "\n")
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(path)


def test_config_files_that_are_not_regular_files_or_not_utf8(tmp_path):
    import os
    import threading

    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    errors = []
    worker = threading.Thread(target=lambda: errors.append(pytest.raises(ConfigError, load_config, fifo)),
                              daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and "not a regular file" in str(errors[0].value)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(tmp_path)
    (tmp_path / "l.toml").write_bytes(b"[server]\nlog_file = 'caf\xe9'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(tmp_path / "l.toml")


@pytest.mark.parametrize("endpoint", ["tcp://127.0.0.1", "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536",
                                      "tcp://:5555", "udp://127.0.0.1:5", "ipc://", "tcp://a b:5",
                                      "tcp://127.0.0.1:\u00b2"])
def test_malformed_endpoints_are_refused_at_load(endpoint):
    with pytest.raises(ConfigError, match="server.endpoint"):
        loads_config(f'[server]\nendpoint = "{endpoint}"\n')


def test_seed_beyond_int64_is_refused_at_load():
    # every seed setting lies in fastgo.bounds.SEED: 0..2**63-1 (9223372036854775807)
    for key in ("server.init_seed", "selfplay.seed", "trainer.seed"):
        section, name = key.split(".")
        config = loads_config(f"[{section}]\n{name} = 9223372036854775807\n")
        assert getattr(getattr(config, section), name) == 2**63 - 1
        for value in ("9223372036854775808", "-1"):
            with pytest.raises(ConfigError, match=key):
                loads_config(f"[{section}]\n{name} = {value}\n")


# -- --set overrides ------------------------------------------------------------------------------

def test_overrides_set_values_of_every_kind(tmp_path):
    path = write(tmp_path, "[server]\nmax_batch = 16\ndevice = \"cuda\"\n")
    config = load_config(path, overrides=[
        "server.max_batch=32",                        # beats the file
        "server.device=cpu",                          # a bare word is a string
        "server.endpoint=tcp://127.0.0.1:6000",       # not TOML: a string
        "server.overlap = true",                      # spaces around '=' are fine
        "server.slots=['current', 'best']",
        "server.checkpoints.best=b.ckpt",             # a key inside a table
        "server.graph_batches=[8, 16]",
        "selfplay.komi=6",                            # an integer where a float is expected
        "model.encoding=liberty",
        "model.encoding=alphazero",                   # the last one wins
    ])
    server = config.server
    assert (server.max_batch, server.device, server.endpoint, server.overlap) == \
        (32, "cpu", "tcp://127.0.0.1:6000", True)
    assert server.slots == ("current", "best") and server.checkpoints == {"best": "b.ckpt"}
    assert server.graph_batches == (8, 16)
    assert config.selfplay.komi == 6.0 and isinstance(config.selfplay.komi, float)
    assert config.model.encoding == "alphazero" and config.model.planes == 17
    assert config.server.max_wait_us == ServerConfig().max_wait_us     # untouched keys keep theirs
    assert loads_config("", overrides=["trainer.lr=0.5"]).trainer.lr == 0.5


@pytest.mark.parametrize("override, words", [
    ("server.max_bach=3", ["unknown key 'server.max_bach'", "a typo?"]),
    ("servr.max_batch=3", ["unknown key 'servr'"]),
    ("server.max_batch=0", ["server.max_batch", ">= 1, got 0"]),
    ("server.max_batch=abc", ["server.max_batch", "expected an integer", "'abc'"]),
    ("server.max_batch=1\nallow_insecure_remote = true", ["server.max_batch", "expected an integer"]),
    ("server.slots=[3]", ["server.slots[0]", "expected a string"]),
    ("server.device=tpu", ["server.device", "one of"]),
    ("model.board_size=26", ["model.board_size", "<= 25"]),
])
def test_a_bad_override_names_the_key_and_says_it_came_from_set(tmp_path, override, words):
    path = write(tmp_path, "[server]\nmax_batch = 16\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides=[override])
    message = str(info.value)
    assert message.startswith("--set: "), message
    assert path not in message
    for word in words:
        assert word in message, message


def test_file_errors_still_name_the_file_when_overrides_are_given(tmp_path):
    path = write(tmp_path, "[server]\nmax_batch = 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides=["server.device=cpu"])
    assert str(info.value).startswith(f"{path}: server.max_batch: must be >= 1")
    # ... and an override that repairs the file's value is what counts.
    assert load_config(path, overrides=["server.max_batch=8"]).server.max_batch == 8


@pytest.mark.parametrize("override", ["server", "server.max_batch", "=3", "max_batch=3",
                                      ".max_batch=3", "server..max_batch=3", "server.max batch=3"])
def test_malformed_overrides_are_refused(override):
    with pytest.raises(ConfigError, match=r"^--set .*expected section\.key=value"):
        loads_config("", overrides=[override])


def test_an_override_cannot_go_through_a_value_that_is_not_a_table():
    with pytest.raises(ConfigError, match=r"^--set server\.max_batch\.x: server\.max_batch is not a table"):
        loads_config("[server]\nmax_batch = 3\n", overrides=["server.max_batch.x=1"])


def test_deeply_nested_override_values_are_refused():
    from rundata.config import MAX_TOML_DEPTH

    deep = "[" * (MAX_TOML_DEPTH + 1) + "]" * (MAX_TOML_DEPTH + 1)
    with pytest.raises(ConfigError, match="--set server.graph_batches: arrays or tables nested deeper"):
        loads_config("", overrides=[f"server.graph_batches={deep}"])


# -- shipped configs by name ----------------------------------------------------------------------

SHIPPED = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, "configs", "*.toml")))


def test_shipped_configs_are_found_by_name_from_any_folder(tmp_path, monkeypatch):
    from rundata.config import resolve_config, shipped_configs

    monkeypatch.chdir(tmp_path)                  # no configs/ here
    assert sorted(shipped_configs()) == SHIPPED and "quickstart" in SHIPPED
    for name in ("quickstart", "quickstart.toml"):
        path = resolve_config(name)
        shipped = os.path.join(ROOT, "configs", "quickstart.toml")
        with open(path, "rb") as found, open(shipped, "rb") as source:
            assert found.read() == source.read()
    assert load_config(resolve_config("9x9_cpu")) == load_config(os.path.join(ROOT, "configs",
                                                                              "9x9_cpu.toml"))


def test_a_path_that_exists_is_returned_as_given(tmp_path, monkeypatch):
    from rundata.config import resolve_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quickstart.toml").write_text("[model]\nblocks = 1\n")   # a local file wins
    assert resolve_config("quickstart.toml") == "quickstart.toml"
    assert resolve_config(tmp_path / "quickstart.toml") == str(tmp_path / "quickstart.toml")
    # A path that is not a bare name is left for load_config to report.
    assert resolve_config("sub/missing.toml") == "sub/missing.toml"
    with pytest.raises(ConfigError, match="sub/missing.toml: cannot read config"):
        load_config(resolve_config("sub/missing.toml"))


def test_an_unknown_name_lists_the_shipped_configs(tmp_path, monkeypatch):
    from rundata.config import resolve_config

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        resolve_config("quikstart")
    message = str(info.value)
    assert message.startswith("unknown config 'quikstart' (shipped: quickstart, ")
    assert sorted(message.split("(shipped: ")[1].rstrip(")").split(", ")) == SHIPPED


def test_the_first_folder_holding_a_name_wins(tmp_path, monkeypatch):
    from rundata.config import loader

    installed, source = tmp_path / "installed", tmp_path / "source"
    installed.mkdir()
    source.mkdir()
    (installed / "a.toml").write_text("")
    (source / "a.toml").write_text("")
    (source / "b.toml").write_text("")
    (source / "notes.txt").write_text("")
    monkeypatch.setattr(loader, "shipped_config_dirs", lambda: [str(installed), str(source),
                                                                 str(tmp_path / "absent")])
    monkeypatch.chdir(tmp_path)
    assert loader.shipped_configs() == {"a": str(installed / "a.toml"), "b": str(source / "b.toml")}
    assert loader.resolve_config("b") == str(source / "b.toml")


@pytest.mark.parametrize("old, new", [
    ("pass_when_filled = true", 'use pass_rule = "fill" (true) or "free" (false)'),
    ("no_pass_before = 10", "use earliest_pass"),
    ("policy_pass = false", 'use policy_pass_rule = "free" (true) or "fill" (false)'),
])
def test_old_pass_keys_are_refused_with_the_new_name(tmp_path, old, new):
    path = write(tmp_path, f"[selfplay]\n{old}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    key = old.split(" ")[0]
    assert str(err.value) == f"{path}: 'selfplay.{key}' is no longer a key: {new}"
    with pytest.raises(ConfigError) as err:              # the same through --set
        load_config(write(tmp_path, ""), overrides=[f"selfplay.{old.replace(' ', '')}"])
    assert str(err.value).startswith("--set: ") and new in str(err.value)


def test_the_pass_rule_keys_take_the_one_vocabulary(tmp_path):
    config = loads_config('[selfplay]\npass_rule = "fill"\nearliest_pass = 12\n'
                          'policy_pass_rule = "free"\n')
    assert (config.selfplay.pass_rule, config.selfplay.earliest_pass,
            config.selfplay.policy_pass_rule) == ("fill", 12, "free")
    defaults = loads_config("")
    assert (defaults.selfplay.pass_rule, defaults.selfplay.earliest_pass,
            defaults.selfplay.policy_pass_rule) == ("free", 0, "fill")
    with pytest.raises(ConfigError, match=r"selfplay.pass_rule: must be one of \['free', 'fill', "
                                          r"'settled', 'decided'\], got 'filled'"):
        loads_config('[selfplay]\npass_rule = "filled"\n')
