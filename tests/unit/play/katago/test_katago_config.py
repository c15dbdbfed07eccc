"""play.katago.config: the exact keys of KataGo's GTP config (our rules key by key, never
`rules = tromp-taylor`, which allows multi-stone suicide), and what changes them."""
import pytest

from play.katago.config import format_config, gtp_config, write_config

EXPECTED = {
    "logDir": "/c/engine-logs", "logToStderr": "false", "logAllGTPCommunication": "false",
    "logSearchInfo": "false", "homeDataDir": "/c/home",
    "koRule": "POSITIONAL", "scoringRule": "AREA", "taxRule": "NONE",
    "multiStoneSuicideLegal": "false", "hasButton": "false", "whiteHandicapBonus": "0",
    "assumeMultipleStartingBlackMovesAreHandicap": "false",
    "friendlyPassOk": "false", "cleanupBeforePass": "true", "friendlyPass": "false",
    "conservativePass": "true",
    "allowResignation": "false", "resignThreshold": "-1.0", "resignConsecTurns": "3",
    "numSearchThreads": "1", "ponderingEnabled": "false", "maxVisits": "64",
    "lagBuffer": "0.2", "maxBoardXSizeForNNBuffer": "9", "maxBoardYSizeForNNBuffer": "9",
    "openclReTunePerBoardSize": "true",
}


def test_the_exact_keys_for_9x9_at_64_visits():
    config = gtp_config(visits=64, size=9, cache="/c")
    assert config == EXPECTED
    assert "rules" not in config and "maxTime" not in config and "searchRandSeed" not in config


def test_seconds_a_move_seed_and_a_preset_tuning():
    config = gtp_config(visits=1_000_000, size=19, cache="/c", move_seconds=1.5, seed=7,
                        tuner_file="/c/opencl_tune.txt")
    assert config["maxTime"] == "1.5" and config["maxVisits"] == "1000000"
    assert config["maxBoardXSizeForNNBuffer"] == config["maxBoardYSizeForNNBuffer"] == "19"
    assert config["searchRandSeed"] == config["nnRandSeed"] == "fastgo7"
    assert config["openclTunerFile"] == "/c/opencl_tune.txt"


def test_a_temperature_samples_every_move():
    config = gtp_config(visits=1, size=9, cache="/c", temperature=1.25)
    assert config["chosenMoveTemperatureEarly"] == config["chosenMoveTemperature"] == "1.25"
    assert {k: v for k, v in config.items() if not k.startswith("chosenMove")} == \
        dict(EXPECTED, maxVisits="1")


@pytest.mark.parametrize("options, words", [
    ({"visits": 0, "size": 9}, "visits"),
    ({"visits": 10_000_001, "size": 9}, "visits"),
    ({"visits": 1, "size": 25}, "board sizes"),
    ({"visits": 1, "size": 9, "move_seconds": 0}, "seconds"),
    ({"visits": 1, "size": 9, "move_seconds": float("nan")}, "seconds"),
    ({"visits": 1, "size": 9, "temperature": -0.5}, "temperature"),
    ({"visits": 1, "size": 9, "temperature": 5.5}, "temperature"),   # KataGo refuses it
    ({"visits": 1, "size": 9, "temperature": float("nan")}, "temperature"),
])
def test_impossible_values_are_refused(options, words):
    with pytest.raises(ValueError, match=words):
        gtp_config(cache="/c", **options)


def test_written_one_key_a_line(tmp_path):
    path = write_config(str(tmp_path / "gtp.cfg"), gtp_config(visits=2, size=5, cache="/c"))
    lines = open(path).read().splitlines()
    assert lines[0] == "logDir = /c/engine-logs" and "maxVisits = 2" in lines
    assert len(lines) == len(EXPECTED)
    with pytest.raises(ValueError, match="cannot be written"):
        format_config({"logDir": "/a#b"})
