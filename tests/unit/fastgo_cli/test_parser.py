"""fastgo_cli.parser and the dispatch in fastgo_cli.main, in this process: every usage error is
one line on stderr and exit status 2, old spellings parse into the same fields as the new ones
and stay out of --help, --config takes a shipped name from any folder, and --set reaches the
effective config or is refused in one line."""
import argparse
import json
import math
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgo_cli.main import COMMANDS, command_parser, main
from fastgo_cli.parser import duration

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def run_main(capsys, *argv):
    """`fastgo ARGV` in this process: (exit status, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parse(command, *argv, target=None):
    parser, _ = command_parser(command, target)
    return parser.parse_args([str(a) for a in argv])


def shipped(name):
    with open(CONFIGS / f"{name}.toml", "rb") as handle:
        return tomllib.load(handle)


def one_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# --- one line, status 2 -------------------------------------------------------------------------

MISSPELT = [
    (["gtp", "--vists", "3"], "--visits"),
    (["selfplay", "--config", "quickstart", "--run-dir", "r", "--wroker-id", "1"], "--worker-id"),
    (["train", "--config", "quickstart", "--run-dir", "r", "--stpes", "3"], "--steps"),
    (["arena", "random", "random", "--gmaes", "2"], "--games"),
    (["cluster", "--duraton", "1m"], "--duration"),
    (["recorder", "--config", "quickstart", "--run-dir", "r", "--bnid", "tcp://127.0.0.1:1"],
     "--bind"),
    (["serve", "--config", "quickstart", "--max-bacth", "8"], "--max-batch"),
    (["evaluate", "--config", "quickstart", "--run-dir", "r", "--onec"], "--once"),
    (["bench", "mcts", "--repeets", "1"], "--repeats"),
]


@pytest.mark.parametrize("argv, nearest", MISSPELT, ids=[" ".join(c[0][:2]) for c in MISSPELT])
def test_a_misspelt_flag_is_one_line_naming_the_nearest(capsys, tmp_path, monkeypatch, argv,
                                                        nearest):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, *argv)
    prog = "fastgo " + " ".join(argv[:2] if argv[0] == "bench" else argv[:1])
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"{prog}: error: unrecognized arguments: ")
    assert line.endswith(f"(did you mean {nearest}?)")
    assert list(tmp_path.iterdir()) == []           # refused before anything was made


@pytest.mark.parametrize("command", ["train", "selfplay", "recorder", "evaluate", "cluster",
                                     "serve"])
def test_an_unknown_config_name_is_one_line_listing_the_shipped_ones(capsys, tmp_path,
                                                                      monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    run_dir = [] if command in ("cluster", "serve") else ["--run-dir", "r"]
    code, out, err = run_main(capsys, command, "--config", "no_such_config", *run_dir)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"fastgo {command}: error: unknown config 'no_such_config' (shipped: ")
    for name in ("quickstart", "9x9_cpu"):
        assert name in line
    assert list(tmp_path.iterdir()) == []


def test_unknown_commands_and_bench_targets_are_one_line(capsys):
    code, _, err = run_main(capsys, "selfpaly")
    assert code == 2
    assert one_line(err).startswith("fastgo: error: unknown command 'selfpaly' (did you mean "
                                    "selfplay? choose from ")
    code, _, err = run_main(capsys, "bench", "mtcs")
    assert code == 2 and "did you mean mcts?" in one_line(err)
    code, _, err = run_main(capsys, "bench")
    assert code == 2 and one_line(err).startswith("fastgo bench: error: a target is required")


def test_argparse_value_errors_are_one_line(capsys):
    code, _, err = run_main(capsys, "arena", "random", "random", "--games", "many")
    assert code == 2
    assert one_line(err) == "fastgo arena: error: argument --games: invalid int value: 'many'"
    code, _, err = run_main(capsys, "gtp", "--device", "tpu")
    assert code == 2 and one_line(err).startswith("fastgo gtp: error: argument --device: ")


# --- --set and the effective config ------------------------------------------------------------

def test_set_reaches_the_effective_config(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                    # a shipped name works from any folder
    base = shipped("quickstart")
    lr, visits = base["trainer"]["lr"] * 3, base["selfplay"]["visits"] + 5
    code, out, err = run_main(capsys, "train", "--config", "quickstart", "--run-dir", "r",
                              "--set", f"trainer.lr={lr}", "--set", f"selfplay.visits={visits}",
                              "--set", "server.device=cpu", "--print-config")
    assert code == 0, err
    effective = json.loads(out)
    assert effective["trainer"]["lr"] == pytest.approx(lr)
    assert effective["selfplay"]["visits"] == visits
    assert effective["server"]["device"] == "cpu"
    # what --set left alone is the file's
    assert effective["model"]["blocks"] == base["model"]["blocks"]
    assert list(tmp_path.iterdir()) == []


def test_set_is_applied_in_order_and_to_a_path_as_well(capsys, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[selfplay]\nvisits = 11\n")
    code, out, err = run_main(capsys, "selfplay", "--config", path, "--run-dir", tmp_path / "r",
                              "--set", "selfplay.visits=12", "--set", "selfplay.visits=13",
                              "--print-config")
    assert code == 0, err
    assert json.loads(out)["selfplay"]["visits"] == 13
    code, out, err = run_main(capsys, "selfplay", "--config", path, "--run-dir", tmp_path / "r",
                              "--print-config")
    assert code == 0 and json.loads(out)["selfplay"]["visits"] == 11


BAD_SETS = [
    ("trainer.nope=1", "unknown key 'trainer.nope'"),
    ("selfplay.visits=0", "selfplay.visits"),
    ("selfplay.visits=many", "selfplay.visits"),
    ("visits", "expected section.key=value"),
]


@pytest.mark.parametrize("item, needle", BAD_SETS, ids=[b[0] for b in BAD_SETS])
@pytest.mark.parametrize("command", ["train", "cluster"])
def test_a_bad_set_is_one_line(capsys, tmp_path, monkeypatch, command, item, needle):
    monkeypatch.chdir(tmp_path)
    run_dir = ["--run-dir", "r"] if command == "train" else []
    code, out, err = run_main(capsys, command, "--config", "quickstart", *run_dir, "--set", item)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"fastgo {command}: error: --set") and needle in line
    assert list(tmp_path.iterdir()) == []


def test_the_cluster_default_config_works_outside_the_checkout(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "cluster", "--print-config")
    assert code == 0, err
    effective, base = json.loads(out), shipped("quickstart")
    for section, table in base.items():
        for key, value in table.items():
            if not isinstance(value, (dict, list)):
                assert effective[section][key] == value, (section, key)


def test_every_command_with_config_takes_set():
    for command in COMMANDS:
        parser, _ = command_parser(command)
        options = {o for action in parser._actions for o in action.option_strings}
        if "--config" in options:
            assert {"--set", "--print-config"} <= options, command


# --- one vocabulary, old spellings kept --------------------------------------------------------

def test_old_spellings_parse_into_the_same_fields():
    for flag in ("--size", "--board", "--board-size"):
        assert parse("gtp", flag, "7").size == 7
        assert parse("arena", "random", "random", flag, "13").size == 13
        assert parse("bench", flag, "7", target="mcts").size == 7
        assert parse("bench", flag, "5", target="server").size == 5
    assert parse("gtp", "--move-seconds", "2.5").move_seconds == 2.5
    assert parse("bench", "--net", "b1c8", target="server").net == "b1c8"
    for flag in ("--bind", "--endpoint"):
        assert parse("serve", flag, "tcp://127.0.0.1:*").bind == "tcp://127.0.0.1:*"
    for command in ("selfplay", "train"):
        common = ["--config", "quickstart", "--run-dir", "r"]
        assert parse(command, *common, "--duration", "15m").seconds == 900.0
        assert parse(command, *common).seconds is None
    assert parse("gtp").size is None and parse("bench", target="mcts").size == 9


@pytest.mark.parametrize("argv", [
    ["gtp", "--seconds", "2"],
    ["selfplay", "--config", "quickstart", "--run-dir", "r", "--seconds", "2"],
    ["train", "--config", "quickstart", "--run-dir", "r", "--max-steps", "2"],
    ["bench", "server", "--model", "b1c8"],
    ["arena", "random", "random", "--move-timeout", "2"],
    ["curve", "r", "--output", "c.png"],
    ["selfplay", "--config", "quickstart", "--run-dir", "r", "--games", "4"],    # not an abbreviation
    ["bench", "mcts", "--games", "4"],
], ids=lambda argv: " ".join(argv[:1] + argv[-2:-1]))
def test_spellings_with_another_meaning_are_gone(capsys, argv):
    code, _, err = run_main(capsys, *argv)
    assert code == 2 and "unrecognized arguments" in one_line(err)


def test_help_shows_the_new_names_only(capsys):
    expected = {"gtp": (["--size", "--move-seconds", "--seed"], ["--board", "--seconds"]),
                "selfplay": (["--duration", "--set", "--config", "--run-dir"], ["--seconds"]),
                "serve": (["--bind", "--set"], ["--endpoint"]),
                "cluster": (["--set", "default: quickstart"], [])}
    for command, (shown, hidden) in expected.items():
        code, out, _ = run_main(capsys, command, "--help")
        assert code == 0
        text = out.replace("--move-seconds", "--move-SECONDS")
        for word in shown:
            assert word.replace("seconds", "SECONDS") in text, (command, word)
        for word in hidden:
            assert word not in text, (command, word)
    code, out, _ = run_main(capsys, "bench", "server", "--help")
    assert "--net" in out and "--model" not in out and "--board" not in out


@pytest.mark.parametrize("text, seconds", [("90", 90.0), ("90s", 90.0), ("1.5", 1.5),
                                           ("15m", 900.0), ("2h", 7200.0), ("1.5d", 129600.0),
                                           (" 3M ", 180.0)])
def test_duration_accepts_seconds_and_units(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "0s", "0.5", "-1", "forever", "", "1w", "366d", "1e3",
                                  "9" * 40])
def test_duration_refuses_the_rest(text):
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


def test_flags_that_override_a_setting_take_its_bounds_from_the_schema():
    from rundata.config import ConfigError, check_setting_flag, setting_bounds

    assert setting_bounds("selfplay.visits") == (1, 100_000)
    check_setting_flag("--visits", None, "selfplay.visits")
    check_setting_flag("--visits", 100_000, "selfplay.visits")
    with pytest.raises(ConfigError, match=r"--visits: must be in 1\.\.100000 \(as selfplay.visits\)"):
        check_setting_flag("--visits", 0, "selfplay.visits")


def test_the_cluster_gives_its_set_to_every_role(tmp_path):
    """Each role's command line parses with the real parser and carries the cluster's --set."""
    from roles.registry import role_argv, role_specs
    from rundata.config import Config
    from rundata.rundir import open_run_dir

    config, run_dir = Config(), open_run_dir(tmp_path / "run")
    items = ("selfplay.visits=3", "trainer.lr=0.5")
    specs = role_specs(config.cluster, 2, True, recorder=True)
    assert {s.kind for s in specs} == {"serve", "train", "recorder", "selfplay", "evaluate"}
    for spec in specs:
        argv = role_argv(spec, config, "quickstart", run_dir, endpoint="tcp://127.0.0.1:5555",
                         bind="tcp://127.0.0.1:*", recorder="tcp://127.0.0.1:5557",
                         overrides=items)
        args = parse(argv[0], *argv[1:])
        assert args.overrides == list(items), spec.name
        assert args.config == "quickstart"
        assert args.quiet is True, spec.name
        if spec.kind != "serve":
            assert args.run_dir == str(run_dir.root), spec.name


@pytest.mark.parametrize("command", ["serve", "train", "selfplay", "recorder", "evaluate"])
def test_the_shared_role_options_are_the_parsers(command):
    """roles.flags' CONFIG, OVERRIDES, RUN_DIR and QUIET write words the command's parser reads
    back into the fields they name."""
    from roles.flags import CONFIG, OVERRIDES, QUIET, RUN_DIR

    words = CONFIG.argv("quickstart") + OVERRIDES.argv(["selfplay.visits=3", "trainer.lr=0.5"]) \
        + QUIET.argv(True) + ([] if command == "serve" else RUN_DIR.argv("some/run"))
    args = parse(command, *words)
    assert getattr(args, CONFIG.dest) == "quickstart"
    assert getattr(args, OVERRIDES.dest) == ["selfplay.visits=3", "trainer.lr=0.5"]
    assert getattr(args, QUIET.dest) is True
    if command != "serve":
        assert getattr(args, RUN_DIR.dest) == "some/run"


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=30), st.floats(allow_nan=True).map(repr),
                 st.integers(-10 ** 12, 10 ** 12).map(str)))
def test_fuzz_game_seconds_is_a_number_in_range_or_one_refusal(text):
    """--game-seconds: any text gives a float in (0, 86400] or an ArgumentTypeError naming it."""
    from fastgo_cli.parser import game_seconds
    try:
        value = game_seconds(text)
    except argparse.ArgumentTypeError as err:
        assert "expected seconds in (0, 86400]" in str(err)
        return
    assert math.isfinite(value) and 0 < value <= 86_400 and value == float(text)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["--c-puct-a", "--c-puct-b", "--fpu-a", "--fpu-b"]),
       st.one_of(st.text(max_size=30), st.floats(allow_nan=True).map(repr),
                 st.integers(-10 ** 12, 10 ** 12).map(str)))
def test_fuzz_puct_flags_are_a_number_in_range_or_one_refusal(flag, text):
    """The arena's PUCT flags: any text is refused by the parser (not a number), refused by the
    check naming the flag and the config's range, or a finite number in that range."""
    from fastgo_cli.arena_cmd import ArgumentError, _check_args
    limits = {"--c-puct": (0.0, 100.0), "--fpu": (0.0, 10.0)}[flag[:-2]]
    try:
        args = parse("arena", "random", "random", flag, text)
    except SystemExit as exc:
        assert exc.code == 2
        return
    try:
        _check_args(args)
    except ArgumentError as err:
        assert str(err).startswith(f"{flag} must be in {limits[0]:g}..{limits[1]:g}, got ")
        value = float(text)
        assert not limits[0] <= value <= limits[1]
        return
    value = getattr(args, flag[2:].replace("-", "_"))
    assert math.isfinite(value) and limits[0] <= value <= limits[1] and value == float(text)
