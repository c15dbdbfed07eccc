"""One meaning per flag across every `fastgo` command and bench (KataGo's commands share one flag
vocabulary). Every option that two or more commands take is in MEANINGS: it parses into the same
field with the same type everywhere, and its help never uses the words of another meaning (a
`--games` that is "games at once" here and "games in all" there). No help text prints its
default twice ("(default 64) (default: 64)")."""
import argparse
import re

import pytest

from fastgo_cli.main import BENCH_TARGETS, COMMANDS, command_parser

# option: (field, type, what it means everywhere, words its help must not use or None)
AT_ONCE = r"at once|at the same time|concurrent|per worker|parallel"
MEANINGS = {
    "--games": ("games", "int", "games in all", AT_ONCE),
    "--games-at-once": ("games_at_once", "int", "games played at the same time",
                        r"in all|total|to play\b"),
    "--duration": ("seconds", "duration", "a run's length: 90, 90s, 15m, 2h", r"per move|window"),
    "--seconds": ("seconds", "float", "a bench's measured window, per repeat or round",
                  r"per move|stop after|run until"),
    "--move-seconds": ("move_seconds", "move_seconds", "the most seconds one move may take",
                       r"window|run's"),
    "--game-seconds": ("game_seconds", "game_seconds",
                       "a game clock: seconds for all of a side's moves of a game",
                       r"window|run's|per move|a move\b"),
    "--backend": ("backend", None, "the inference runtime (torch, ONNX Runtime, OpenVINO)",
                  r"\blocal\b|\bray\b|launch"),
    "--json": ("json", None, "also write the results as JSON to FILE", None),
    "--table": ("table", None, "a table of match results, one JSON line each", None),
    "-o": ("out", None, "where the command writes what it makes", None),
    "--out": ("out", None, "where the command writes what it makes", None),
    "--size": ("size", "int", "board size", None),
    "--board": ("size", "int", "board size (hidden old spelling)", None),
    "--board-size": ("size", "int", "board size (hidden old spelling)", None),
    "--model": ("model", None, "a network checkpoint file", r"bBLOCKS"),
    "--net": ("net", None, "a network shape bBLOCKScCHANNELS", r"checkpoint"),
    "--visits": ("visits", "int", "search visits per move or position", None),
    "--leaves": ("leaves", "leaves", "leaves per position per network call", None),
    "--positions": ("positions", "int", "positions searched at once (fastgo analysis)", None),
    "--raw-seconds": ("raw_seconds", "float", "a bench's raw forward seconds in all", None),
    "--seed": ("seed", "seed", "random seed", None),
    "--komi": ("komi", "komi", "komi", None),
    "--config": ("config", None, "a shipped config by name or a TOML file", None),
    "--set": ("overrides", None, "override one config value (SECTION.KEY=VALUE)", None),
    "--print-config": ("print_config", None, "print the effective config and exit", None),
    "--run-dir": ("run_dir", None, "the run directory", None),
    "--quiet": ("quiet", None, "log to the run directory only", None),
    "--device": ("device", None, "where the network runs: auto, cpu, cuda", None),
    "--threads": ("threads", "int", "CPU threads of the network's runtime", None),
    "--log-level": ("log_level", None, "stderr log level", None),
    "--server": ("server", None, "the inference server's endpoint", None),
    "--bind": ("bind", None, "the endpoint to listen on", None),
    "--workers": ("workers", "int", "self-play worker processes", None),
    "--pass-rule": ("pass_rule", "pass_rule", "the players' pass rule (fastgo.move_choice)", None),
    "--shards": ("shards", None, "a run's shard folder for int8 calibration and checks", None),
    "--batch": ("batch", "int", "batch size(s) of a bench", None),
    "--max-wait-us": ("max_wait_us", "int", "server.max_wait_us", None),
    "--encoding": ("encoding", None, "feature planes: alphazero, liberty, ...", None),
    "--repeats": ("repeats", "int", "timed repeats of a bench (median)", None),
    "--rounds": ("rounds", "int", "alternating rounds of a bench", None),
    "--no-python": ("no_python", None, "skip the pure-Python reference", None),
}


def every_parser():
    """(name, parser) of every command and bench target."""
    out = []
    for command in COMMANDS:
        out.append((command, command_parser(command)[0]))
    for target in BENCH_TARGETS:
        out.append((f"bench {target}", command_parser("bench", target)[0]))
    return out


PARSERS = every_parser()


def options():
    """option -> [(command, action)] over every parser."""
    table = {}
    for name, parser in PARSERS:
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    table.setdefault(option, []).append((name, action))
    return table


def type_name(action):
    return getattr(action.type, "__name__", None)


def test_every_shared_option_has_one_declared_meaning():
    shared = sorted(o for o, uses in options().items() if len(uses) > 1)
    missing = [o for o in shared if o not in MEANINGS]
    assert not missing, f"options taken by several commands without an entry in MEANINGS: {missing}"


@pytest.mark.parametrize("option", sorted(MEANINGS))
def test_an_option_parses_into_one_field_of_one_type(option):
    field, kind, _, _ = MEANINGS[option]
    for command, action in options().get(option, []):
        assert action.dest == field, f"{command} {option} stores into {action.dest}, not {field}"
        assert type_name(action) == kind, f"{command} {option} has type {type_name(action)}"


@pytest.mark.parametrize("option", sorted(o for o, m in MEANINGS.items() if m[3]))
def test_no_help_uses_the_words_of_another_meaning(option):
    forbidden = re.compile(MEANINGS[option][3], re.IGNORECASE)
    for command, action in options().get(option, []):
        if action.help and action.help is not argparse.SUPPRESS:
            assert not forbidden.search(action.help), \
                f"{command} {option}: {action.help!r} ({MEANINGS[option][2]} everywhere)"


@pytest.mark.parametrize("name, parser", PARSERS, ids=[name for name, _ in PARSERS])
def test_no_help_prints_its_default_twice(name, parser):
    formatter = parser._get_formatter()
    for action in parser._actions:
        if not action.help or action.help is argparse.SUPPRESS:
            continue
        text = formatter._expand_help(action)
        assert len(re.findall(r"\bdefault\b", text, re.IGNORECASE)) <= 1, f"{name}: {text!r}"


def test_the_checks_catch_a_second_meaning():
    """A parser that gives --games the meaning of --games-at-once, and one that prints its
    default twice, fail the checks above."""
    from fastgo_cli.parser import Parser

    parser = Parser(prog="fastgo bad")
    games = parser.add_argument("--games", type=int, default=8, help="games at once (default 8)")
    forbidden = re.compile(MEANINGS["--games"][3], re.IGNORECASE)
    assert forbidden.search(games.help)
    text = parser._get_formatter()._expand_help(games)
    assert len(re.findall(r"\bdefault\b", text)) == 2
