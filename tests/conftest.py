"""Fixtures for the whole suite, and the `slow` marker by folder: every test under system/ (real
processes and sockets) and learning/ (the loop must learn) is slow. A helper fixture returns a
function of the fixture's name; session-scoped, so module fixtures may use it too."""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

# The project's packages imported first, from the project: a test folder named as a package
# (tests/unit/fastgo, tests/unit/play) put on sys.path by pytest must never stand in for it.
for _init in sorted(Path(__file__).resolve().parents[1].glob("*/__init__.py")):
    importlib.import_module(_init.parent.name)

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SLOW_FOLDERS = frozenset({"system", "learning"})


# The suite's own backend cache ($XDG_CACHE_HOME/fastgo/backends.json): a test never reads or
# writes the user's, and every run starts from an empty one, as a fresh machine does. Made by
# the controlling process before xdist starts its workers, which inherit it with the rest of
# the environment (as do the processes the tests start); removed at its end.
_CACHE_ENV = "FASTGO_TEST_CACHE_HOME"


# A shell without job control starts a background job with SIGINT ignored, and a process that
# starts with SIGINT ignored keeps it ignored (Python installs its KeyboardInterrupt handler
# only over the default). The tests that interrupt a command (arena, workers, cluster) would then
# wait on a process that never hears them: the suite restores the default for what it starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(NAME, ...): runs where each of NEEDS (tests/conftest.py) "
                                       "is found; skipped where one is not, failed under CI=true")
    if os.environ.get(_CACHE_ENV):
        return                                  # a worker: the controller's cache
    import tempfile
    home = tempfile.mkdtemp(prefix="fastgo-test-cache-")
    os.environ[_CACHE_ENV] = os.environ["XDG_CACHE_HOME"] = home
    config._fastgo_cache_home = home


def pytest_unconfigure(config):
    home = getattr(config, "_fastgo_cache_home", None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


# The order test files are handed to xdist's workers (pyproject.toml: --dist loadfile
# --no-loadscope-reorder): the long learning runs first, then the system tests, the many short
# unit files last, where they even out the two workers' ends. xdist's own reorder (files with
# the most tests first) put the one-test learning and cluster files last, and the suite waited
# up to a minute on one worker at its end. A file of the other folders with a test marked `slow`
# in its own code (torch.compile's first warm-up: 40 s on a cold cache) goes right after the
# learning files, not among the short files at the end.
FOLDER_ORDER = ("learning", "system", "unit")


def _folder(item) -> str | None:
    try:
        return Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
    except ValueError:
        return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """`slow` on every test collected from a folder in SLOW_FOLDERS, before `-m` selects; the
    files in FOLDER_ORDER, a file with a test of its own marked slow right after the first
    folder (a stable sort: the files of one rank, and a file's tests, keep their order)."""
    rank = {folder: float(k) for k, folder in enumerate(FOLDER_ORDER)}
    files = {}
    for item in items:
        folder = _folder(item)
        own = rank.get(folder, len(rank))
        if folder in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)
        elif item.get_closest_marker("slow") is not None:
            own = 0.5                    # between the first folder and the second
        files[item.path] = min(files.get(item.path, own), own)
    items.sort(key=lambda item: files[item.path])


@pytest.fixture(scope="session")
def project_packages():
    """The project's top-level packages, read from the tree (a folder with an __init__.py),
    for the tests that scan every module: one list, so a new package is never left out."""
    return tuple(sorted(path.parent.name for path in ROOT.glob("*/__init__.py")))


# --- what some tests need beyond `pip install -e .` ----------------------------------------------
# A test marked `needs(NAME, ...)`, or a fixture that calls need(NAME), runs only where each NAME
# of NEEDS is found. Where one is missing the test is skipped, or under CI (CI=true; .ci/run
# installs them all) it fails at its setup, so nothing goes untested there; the run ends with one
# line naming what was missing and the command that adds it (pytest_terminal_summary).

PIP_TEST = 'pip install -e ".[test]"'
SKIP_TAG = re.compile(r"\[needs (\w+)\]")     # how a skip's reason names what was missing


def _program(name):
    """`name`'s path on PATH or in Debian's /usr/games (where gnugo and leelaz go), or None."""
    found = shutil.which(name)
    if not found and os.access(f"/usr/games/{name}", os.X_OK):
        found = f"/usr/games/{name}"
    return found


def _opencl_driver():
    """An OpenCL driver's ICD where the loader looks ($OCL_ICD_VENDORS: a folder of *.icd or
    one driver's file; else /etc/OpenCL/vendors), where the loader (libOpenCL) is installed
    too; else None. KataGo's OpenCL build starts without one and fails at its first use of the
    network (CL_PLATFORM_NOT_FOUND_KHR)."""
    import ctypes.util

    vendors = Path(os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors")
    icds = [vendors] if vendors.is_file() else sorted(vendors.glob("*.icd")) if vendors.is_dir() else []
    return str(icds[0]) if icds and ctypes.util.find_library("OpenCL") else None


def _module(name):
    """`name`'s origin where it can be imported (a test extra), or None."""
    spec = importlib.util.find_spec(name)
    return None if spec is None else str(spec.origin or name)


# NAME: (what it is, in the summary line; () -> where it is found or None; the Debian package
# that adds it, None for a Python package of the test extras)
NEEDS = {
    "gnugo": ("GNU Go (gnugo)", lambda: _program("gnugo"), "gnugo"),
    "leelaz": ("Leela Zero (leelaz)", lambda: _program("leelaz"), "leela-zero"),
    "opencl": ("an OpenCL driver for KataGo", _opencl_driver, "pocl-opencl-icd"),
    "chromium": ("chromium", lambda: _program("chromium"), "chromium"),
    "chromedriver": ("chromedriver", lambda: _program("chromedriver"), "chromium-driver"),
    "selenium": ("selenium", lambda: _module("selenium"), None),
    "katrain": ("KaTrain", lambda: _module("katrain"), None),
    "ray": ("Ray", lambda: _module("ray"), None),
}


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def install_command(names) -> str:
    """The command that adds every one of `names` (keys of NEEDS)."""
    packages = [NEEDS[name][2] for name in names if NEEDS[name][2]]
    parts = [f"apt-get install {' '.join(dict.fromkeys(packages))}"] if packages else []
    if any(NEEDS[name][2] is None for name in names):
        parts.append(PIP_TEST)
    return " && ".join(parts)


def need(*names):
    """Where each of `names` (keys of NEEDS) is found: a path, or a tuple of them for several.
    Where some are missing the test is skipped naming them all, or failed under CI."""
    unknown = [name for name in names if name not in NEEDS]
    if unknown:
        pytest.fail(f"needs: {', '.join(map(repr, unknown))} not in {', '.join(NEEDS)}", pytrace=False)
    found = [NEEDS[name][1]() for name in names]
    missing = [name for name, where in zip(names, found) if not where]
    if missing:
        reason = (f"{' '.join(f'[needs {name}]' for name in missing)} "
                  f"{', '.join(NEEDS[name][0] for name in missing)} "
                  f"{'is' if len(missing) == 1 else 'are'} not installed: {install_command(missing)}")
        if under_ci():
            pytest.fail(f"{reason} (CI={os.environ['CI']}: what the suite needs must be there)",
                        pytrace=False)
        pytest.skip(reason)
    return found[0] if len(found) == 1 else tuple(found)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The `needs` marks, before the test's fixtures are set up."""
    names = [name for mark in item.iter_markers("needs") for name in mark.args]
    if names:
        need(*dict.fromkeys(names))


def missing_line(counts) -> str:
    """The summary line for {NAME: tests skipped for lack of it}."""
    named = ", ".join(f"{NEEDS[name][0]} ({count} test{'s' if count > 1 else ''})"
                      for name, count in counts.items())
    return f"skipped for lack of {named}; install with: {install_command(counts)}"


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """The line of missing_line, after pytest's short summary (the outer wrapper ends last)."""
    yield
    counts: dict = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[-1] if isinstance(longrepr, (tuple, list)) else str(longrepr)
        for name in set(SKIP_TAG.findall(str(reason))):
            if name in NEEDS:
                counts[name] = counts.get(name, 0) + 1
    if counts:
        terminalreporter.write_line(missing_line({name: counts[name] for name in NEEDS
                                                  if name in counts}), yellow=True)


@pytest.fixture(scope="session")
def gnugo_path():
    """GNU Go's executable (on PATH or Debian's /usr/games); see need()."""
    return need("gnugo")


# --- hand-built game records (the policy-only worker's shape) -------------------------------------

def _game_record(size, komi, moves, learner, *, values=None, versions=(1, 0), seed=0):
    """A finished game as a GameRecord: `learner` 1 (Black), -1 (White) or 0 (both colours)
    marks full = 1 on the learner's moves; every move's one-hot policy is the move played.
    Fails the test when the moves are illegal or the game is not over."""
    import numpy as np

    from fastgo.replay import check_game
    from rundata.shards import GameRecord

    moves = np.asarray(moves, dtype=np.int16)
    bad, reason, over, score, ownership = check_game(size, komi, moves)
    assert bad < 0, f"move {bad} is {reason}"
    assert over, "a record game must be over (two passes or the move cap)"
    count = len(moves)
    mover = np.where(np.arange(count) % 2 == 0, 1, -1)
    full = np.ones(count, np.uint8) if learner == 0 else (mover == learner).astype(np.uint8)
    root_value = np.zeros(count, np.float32) if values is None else np.asarray(values, np.float32)
    return GameRecord(size=size, komi=float(komi), moves=moves, full=full, root_value=root_value,
                      policy_count=np.ones(count, np.uint16), policy_moves=moves.copy(),
                      policy_visits=np.ones(count, np.float32),
                      winner=1 if score > 0 else (-1 if score < 0 else 0), score=float(score),
                      end="passes" if moves[-2:].tolist() == [size * size] * 2 else "move_cap",
                      ownership=ownership, versions=list(versions), seed=seed)


def _random_moves(size, komi, rng, *, length):
    """Up to `length` random legal (superko) non-pass moves drawn with the numpy Generator
    `rng`, then two passes: a list of move indices (pass = size * size)."""
    import numpy as np

    from fastgo.game import Game

    game = Game(size, komi)
    moves = []
    for _ in range(length):
        legal = np.flatnonzero(game.legal_moves()[:size * size])
        if not len(legal):
            break
        move = int(rng.choice(legal))
        game.play(move)
        moves.append(move)
    return moves + [size * size, size * size]


def _write_shard(directory, records, name, *, size, komi):
    """The records as one complete shard `directory/name` (the folder is created); its path."""
    from rundata.shards import ShardWriter

    os.makedirs(directory, exist_ok=True)
    writer = ShardWriter(directory, prefix="test", size=size, komi=komi)
    for record in records:
        writer.add(record)
    return writer.close(name)


@pytest.fixture(scope="session")
def game_record():
    return _game_record


@pytest.fixture(scope="session")
def random_moves():
    return _random_moves


@pytest.fixture(scope="session")
def write_shard():
    return _write_shard


# The REINFORCE trainer on 5x5 (komi 0.5) with a b1c8 network: one update per 4 games, the pool
# grown every 2 updates up to 2 entries, a checkpoint every update, SGD.
REINFORCE_CONFIG = """
[model]
board_size = 5
blocks = 1
channels = 8
value_hidden = 8
[selfplay]
komi = 0.5
[trainer]
algorithm = "reinforce"
minibatch_games = 4
pool_every = 2
pool_max = 2
baseline = "value"
checkpoint_every = 1
keep_checkpoints = 1
optimizer = "sgd"
lr = 0.01
device = "cpu"
poll_s = 0.05
"""


@pytest.fixture(scope="session")
def reinforce_config():
    """The TOML text of REINFORCE_CONFIG (5x5, komi 0.5); tests append keys to it."""
    return REINFORCE_CONFIG


@pytest.fixture(scope="session")
def reinforce_games():
    """reinforce_games(rng, count, seed) -> `count` 5x5 records (komi 0.5) of random games of
    6, 7, ... moves before two passes, played by version 0; the learner alternates Black,
    White, ... and game i carries seed + i."""
    def games(rng, count, seed):
        return [_game_record(5, 0.5, _random_moves(5, 0.5, rng, length=6 + i), (1, -1)[i % 2],
                             versions=(0, 0), seed=seed + i) for i in range(count)]
    return games


# --- role processes through the real `fastgo` command ---------------------------------------------

TINY = """
[model]
board_size = {size}
blocks = 2
channels = 16
value_hidden = 32

[server]
endpoint = "{endpoint}"
max_batch = 64
max_wait_us = 500
device = "cpu"
threads = 1
backend = "torch"
slots = ["current"]

[selfplay]
games = {games}
visits = {visits}
search = "gumbel"
komi = 0.5
temperature_moves = 4
resign_threshold = -1.0
shard_games = {shard_games}
shard_seconds = {shard_seconds}
seed = 7
sgf_every = 50

[trainer]
batch_size = 128
lr = 0.05
min_positions = 1000
samples_per_position = 4.0
checkpoint_every = {checkpoint_every}
window_size = 20000
device = "cpu"
seed = 1
"""


def _free_endpoint():
    """A loopback TCP endpoint whose port was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def _write_tiny_config(path, *, size=5, games=64, visits=24, shard_games=64, shard_seconds=5.0,
                       checkpoint_every=50, endpoint="tcp://127.0.0.1:5555", extra=""):
    """The TINY config (b2c16, CPU, one server thread) written to `path`, `extra` TOML text
    appended; returns str(path)."""
    with open(path, "w") as handle:
        handle.write(TINY.format(size=size, games=games, visits=visits, shard_games=shard_games,
                                 shard_seconds=shard_seconds, checkpoint_every=checkpoint_every,
                                 endpoint=endpoint) + extra)
    return str(path)


def _start_server(config_path, log_path):
    """A `fastgo serve` process on a free loopback port, returned once it is ready."""
    from supervision.role_process import ServerProcess

    return ServerProcess(config_path, endpoint="tcp://127.0.0.1:*", log_path=str(log_path)).start()


def _fastgo(*args, log_path=None, **kwargs):
    """A `fastgo ...` child process (stdout and stderr appended to log_path, or a pipe)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = open(log_path, "ab") if log_path else subprocess.PIPE
    try:
        return subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", *map(str, args)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, **kwargs)
    finally:
        if log_path:
            out.close()


def _stop(proc, timeout_s=20.0):
    """SIGTERM, a wait of at most timeout_s, then SIGKILL; returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)
    return proc.returncode


def _wait_for(predicate, timeout_s, interval_s=0.05, what="condition"):
    """Polls predicate() every interval_s until it is true (returns its value); fails the test
    after timeout_s seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(interval_s)


def _tail(path, chars=3000):
    try:
        return Path(path).read_text(errors="replace")[-chars:]
    except OSError as exc:
        return f"({exc})"


def _run_learning_loop(config_path, run, tmp_path, *, max_steps, timeout_s):
    """One `fastgo serve`, one `fastgo selfplay` and `fastgo train --steps max_steps` on the
    run directory; returns once the trainer has exited 0 at that step and the worker has been
    stopped. The budget is the steps: timeout_s (seconds) only bounds a run that hangs, and
    fails the test. Everything is stopped on failure; logs go to tmp_path (serve.log,
    train.out, selfplay.out)."""
    server = _start_server(config_path, tmp_path / "serve.log")
    worker = trainer = None
    try:
        trainer = _fastgo("train", "--config", config_path, "--run-dir", run, "--server",
                          server.endpoint, "--steps", max_steps, "--quiet",
                          log_path=tmp_path / "train.out")
        worker = _fastgo("selfplay", "--config", config_path, "--run-dir", run, "--server",
                         server.endpoint, "--quiet", log_path=tmp_path / "selfplay.out")
        try:
            trainer.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the trainer did not reach step {max_steps} within the "
                                 f"{timeout_s} s backstop: {_tail(tmp_path / 'train.out')}") from None
        assert trainer.returncode == 0, _tail(tmp_path / "train.out")
        assert _stop(worker) == 0, _tail(tmp_path / "selfplay.out")
    finally:
        for proc in (worker, trainer):
            if proc is not None:
                _stop(proc)
        server.stop()


@pytest.fixture(scope="session")
def tiny_config_text():
    """The TINY config template (str.format keys: size, endpoint, games, visits, shard_games,
    shard_seconds, checkpoint_every)."""
    return TINY


@pytest.fixture(scope="session")
def free_endpoint():
    return _free_endpoint


@pytest.fixture(scope="session")
def write_tiny_config():
    return _write_tiny_config


@pytest.fixture(scope="session")
def start_server():
    return _start_server


@pytest.fixture(scope="session")
def fastgo():
    return _fastgo


@pytest.fixture(scope="session")
def stop():
    return _stop


@pytest.fixture(scope="session")
def wait_for():
    return _wait_for


@pytest.fixture(scope="session")
def run_learning_loop():
    return _run_learning_loop


def _dashboard_checkpoint(root, step, *, rate=True):
    """A tiny real 9x9 checkpoint (b1c8, score head) at RUN/checkpoints/ckpt-STEP.ckpt and, when
    `rate`, its evaluation (evaluations.jsonl) and results (ratings.jsonl) as the evaluator
    writes them: it beats random 10-0 and scores step // 100 of 10 against gnugo:10."""
    import json

    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig
    from rundata.ratings_table import append_result
    from rundata.rundir import open_run_dir

    run = open_run_dir(root)
    save_checkpoint(run.checkpoint(step), build_model(ModelConfig(
        board_size=9, blocks=1, channels=8, score_head=True), seed=step), step=step)
    if rate:
        name = f"ckpt-{step}"
        wins = min(9, max(1, step // 100))
        append_result(os.path.join(run.root, "ratings.jsonl"), name, "random", 10, 0)
        append_result(os.path.join(run.root, "ratings.jsonl"), name, "gnugo:10", wins, 10 - wins)
        with open(os.path.join(run.root, "evaluations.jsonl"), "a") as handle:
            handle.write(json.dumps({"player": name, "step": step, "wall_s": step * 0.6,
                                     "games": step * 3, "opponents": ["random", "gnugo:10"]})
                         + "\n")
    return run.checkpoint(step)


def _dashboard_run(root, *, steps=(100, 200, 300), games=6, seed=0):
    """A run directory as a short run leaves it: checkpoints rated at `steps`, one shard of
    `games` random 9x9 games, metrics.csv, the trainer's and the supervisor's status files."""
    import json

    import numpy as np

    from rundata.rundir import open_run_dir, status_path

    run = open_run_dir(root)
    for step in steps:
        _dashboard_checkpoint(root, step)
    rng = np.random.default_rng(seed)
    records = [_game_record(9, 7.5, _random_moves(9, 7.5, rng, length=30), 0,
                            versions=(steps[-1],), seed=k) for k in range(games)]
    for k, record in enumerate(records):
        record.root_value[:] = np.linspace(-0.5, 0.5, len(record.moves))
        record.t_end = 1_700_000_000.0 + k
    _write_shard(run.shards, records, "w0-000001.shard", size=9, komi=7.5)
    with open(run.metrics, "w") as handle:
        handle.write("step,loss,policy_loss,value_loss\n")
        for step in range(0, steps[-1] + 1, 50):
            handle.write(f"{step},{3 - step / 200:.3f},{2 - step / 300:.3f},{1 - step / 600:.3f}\n")
    with open(status_path(run, "train"), "w") as handle:
        json.dump({"games": games, "step": steps[-1], "loss": 1.5, "latest": steps[-1]}, handle)
    with open(status_path(run, "cluster"), "w") as handle:
        json.dump({"evals_per_s": 1234.5, "fill": 0.87, "moves_per_s": 55.0,
                   "restarts": {"selfplay-w0": 1}}, handle)
    return run


@pytest.fixture(scope="session")
def dashboard_run():
    return _dashboard_run


@pytest.fixture(scope="session")
def dashboard_checkpoint():
    return _dashboard_checkpoint


def _reference_folder(folder, players, *, size=9):
    """A folder of reference players as fastgo/references/ holds them (fastgo.reference_players),
    from tiny real networks (b1c8, score head): `players` [(name, visits)], network seed k for
    the k-th; its index.json lists each with its file's sha256. Point FASTGO_REFERENCES at it.
    Returns the folder."""
    import json

    from fastgo.reference_players import INDEX_FORMAT, INDEX_NAME, index_entry
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from rundata.config import ModelConfig

    os.makedirs(folder, exist_ok=True)
    entries = []
    for k, (name, visits) in enumerate(players):
        path = os.path.join(folder, f"{name}.ckpt")
        save_checkpoint(path, build_model(ModelConfig(board_size=size, blocks=1, channels=8,
                                                      score_head=True), seed=k + 1), step=k + 1)
        entries.append(index_entry(name, path, visits=visits, board_size=size,
                                   provenance=f"a test network, seed {k + 1}"))
    with open(os.path.join(folder, INDEX_NAME), "w") as handle:
        json.dump({"format": INDEX_FORMAT, "references": entries}, handle)
    return folder


@pytest.fixture(scope="session")
def reference_folder():
    return _reference_folder
