"""The shared TOML config loader: sections into frozen dataclasses, errors name key and file."""
import dataclasses
import glob
import os

import pytest

from fastgo.config import (Config, ConfigError, ModelConfig, ServerConfig, load_config,
                           loads_config, parse_section, to_dict)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
