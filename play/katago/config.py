"""The GTP config the project writes for KataGo: our rules key by key, no resignation, dead
stones captured before passing, one search thread, the match's visits (and seconds a move), the
network's buffers at the match's board size, logs, tuning and other data in the cache.

Tromp-Taylor's `rules = tromp-taylor` is not used: it allows multi-stone suicide, which our
rules refuse. An engine's config keys are KataGo's (cpp/configs/gtp_example.cfg).
"""
from __future__ import annotations

import os

from fastgo.player_spec import MAX_KATAGO_VISITS, MAX_TEMPERATURE

LOG_FOLDER = "engine-logs"  # KataGo's own logs, inside the cache folder
LAG_BUFFER_S = 0.2          # KataGo keeps this much of a move's time for the answer to travel


def gtp_config(*, visits: int, size: int, cache: str, move_seconds: float | None = None,
               seed: int | None = None, tuner_file: str | None = None,
               temperature: float | None = None) -> dict:
    """{key: value text} of KataGo's GTP config, in the order written. visits: maxVisits
    (1..MAX_KATAGO_VISITS); size: the board's (the network's buffers: no bigger board is accepted);
    move_seconds: maxTime, a move's seconds (None: visits alone); seed: searchRandSeed and
    nnRandSeed (None: KataGo's own random seeds); tuner_file: an OpenCL tuning file to load
    instead of tuning (None: KataGo tunes once for this device into CACHE/home); temperature:
    every move sampled at this temperature from the search's visits, at 1 visit from the raw
    policy (chosenMoveTemperature and ...Early; None: KataGo's own, 0.5 early falling to 0.1)."""
    visits = int(visits)
    if not 1 <= visits <= MAX_KATAGO_VISITS:
        raise ValueError(f"KataGo's visits must be in 1..{MAX_KATAGO_VISITS}, got {visits}")
    size = int(size)
    if not 2 <= size <= 19:
        raise ValueError(f"KataGo plays board sizes 2..19, not {size}")
    config = {
        # files: nothing in the current folder, nothing on stdout
        "logDir": os.path.join(cache, LOG_FOLDER),
        "logToStderr": "false",
        "logAllGTPCommunication": "false",
        "logSearchInfo": "false",
        "homeDataDir": os.path.join(cache, "home"),
        # our rules (fastgo): area scoring, positional superko, no suicide, no button
        "koRule": "POSITIONAL",
        "scoringRule": "AREA",
        "taxRule": "NONE",
        "multiStoneSuicideLegal": "false",
        "hasButton": "false",
        "whiteHandicapBonus": "0",
        "assumeMultipleStartingBlackMovesAreHandicap": "false",
        # every stone left counts: dead stones are captured before KataGo passes
        "friendlyPassOk": "false",
        "cleanupBeforePass": "true",
        "friendlyPass": "false",
        "conservativePass": "true",
        # games are played out: no resignation (its threshold is read all the same)
        "allowResignation": "false",
        "resignThreshold": "-1.0",
        "resignConsecTurns": "3",
        # one thread, the match's pace
        "numSearchThreads": "1",
        "ponderingEnabled": "false",
        "maxVisits": str(visits),
        "lagBuffer": f"{LAG_BUFFER_S:g}",
        "maxBoardXSizeForNNBuffer": str(size),
        "maxBoardYSizeForNNBuffer": str(size),
        "openclReTunePerBoardSize": "true",
    }
    if temperature is not None:
        t = float(temperature)
        if not 0.0 <= t <= MAX_TEMPERATURE:
            raise ValueError(f"KataGo's temperature must be in 0..{MAX_TEMPERATURE:g}, got "
                             f"{temperature!r}")
        config["chosenMoveTemperatureEarly"] = config["chosenMoveTemperature"] = f"{t:g}"
    if move_seconds is not None:
        seconds = float(move_seconds)
        if not 0 < seconds <= 86_400:
            raise ValueError(f"KataGo's seconds a move must be in (0, 86400], got {move_seconds!r}")
        config["maxTime"] = f"{seconds:g}"
    if seed is not None:
        config["searchRandSeed"] = config["nnRandSeed"] = f"fastgo{int(seed)}"
    if tuner_file is not None:
        config["openclTunerFile"] = tuner_file
    return config


def format_config(config: dict) -> str:
    """KataGo's config text: one `key = value` a line."""
    for key, value in config.items():
        if "\n" in f"{key}{value}" or "=" in key or "#" in f"{key}{value}":
            raise ValueError(f"KataGo config key {key!r}: value {value!r} cannot be written")
    return "".join(f"{key} = {value}\n" for key, value in config.items())


def write_config(path: str, config: dict) -> str:
    """Writes `config` to `path` (format_config) and returns the path."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(format_config(config))
    return path
