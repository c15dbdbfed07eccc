"""roles.flags: a role's own flags are declared once, and the parser, the body's checks and the
supervisor's argv all read that one declaration."""
from __future__ import annotations

import argparse

import pytest

from roles.flags import PRETRAINING, SELFPLAY, SERVE, TRAIN, Flag, check_flags, setting_overrides
from rundata.config import ConfigError, resolve_config


def test_a_flag_writes_the_words_that_give_its_value():
    flag = Flag("--worker-id", type=int)
    assert flag.dest == "worker_id"
    assert flag.argv(0) == ["--worker-id", "0"]         # 0 is a value, not "left out"
    assert flag.argv(None) == [] and flag.argv("") == [] and flag.argv(False) == []
    assert Flag("--once", action="store_true").argv(True) == ["--once"]
    assert Flag("--checkpoint", action="append").argv(["a=1", "b=2"]) == \
        ["--checkpoint", "a=1", "--checkpoint", "b=2"]


@pytest.mark.parametrize("role, table", [("serve", SERVE), ("train", TRAIN),
                                         ("selfplay", SELFPLAY)])
def test_the_command_parses_every_flag_of_its_table(role, table):
    from fastgo_cli.main import command_parser

    parser = command_parser(role)[0]
    by_option = {option: action for action in parser._actions for option in action.option_strings}
    for flag in table.values():
        action = by_option[flag.option]
        assert action.dest == flag.dest, flag.option
        assert flag.default is None or action.default == flag.default, flag.option
        assert (action.help == argparse.SUPPRESS) == flag.hidden, flag.option
        for old in flag.aliases:
            assert by_option[old].dest == flag.dest and by_option[old].help == argparse.SUPPRESS


def args(**given):
    return argparse.Namespace(**given)


def test_the_body_checks_the_ranges_its_table_declares():
    check_flags(args(worker_id=1_000_000, max_games=None), SELFPLAY.values())
    with pytest.raises(ConfigError, match=r"^--worker-id: must be in 0\.\.1000000, got -1$"):
        check_flags(args(worker_id=-1), SELFPLAY.values())
    with pytest.raises(ConfigError, match=r"^--games-at-once: must be in 1\.\..* \(as selfplay.games\)"):
        check_flags(args(games_at_once=0), SELFPLAY.values())
    with pytest.raises(ConfigError, match=r"^--holdout: must be in \[0, 1\), got 1\.5$"):
        check_flags(args(holdout=1.5), TRAIN.values())
    with pytest.raises(ConfigError, match=r"^--steps: must be in 0\.\.2\*\*40, got -1$"):
        check_flags(args(steps=-1), TRAIN.values())
    outside = [flag for flag in TRAIN.values() if flag.group != PRETRAINING]
    check_flags(args(holdout=1.5, steps=3), outside)        # --holdout counts with --sgf only


def test_the_flags_that_stand_for_a_setting_override_it():
    given = args(bind="tcp://127.0.0.1:9", device=None, threads=2, max_batch=None,
                 max_wait_us=None, log_file=None, checkpoint=[], shards=None, make_curve_key=None)
    assert setting_overrides(given, SERVE.values(), "server") == \
        {"endpoint": "tcp://127.0.0.1:9", "threads": 2}
    assert setting_overrides(given, SERVE.values(), "recorder") == {}
    from roles.serve import config_from_args
    given.config, given.overrides = str(resolve_config("quickstart")), []
    config = config_from_args(given)
    assert config.server.endpoint == "tcp://127.0.0.1:9" and config.server.threads == 2
