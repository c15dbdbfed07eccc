"""Command-line errors are one line naming what is wrong, exit status 2, never a traceback, from
the real `fastgo` process; `--set` reaches what a command runs with; the command's help and
version answer."""
import os
import selectors
import signal
import subprocess
import sys
import time

import pytest
import torch


def fastgo(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "fastgo_cli.main", *args], capture_output=True,
                          text=True, timeout=timeout)


CASES = [
    (["bench", "server", "--batch", "0"], "--batch"),
    (["bench", "server", "--clients", "0"], "--clients"),
    (["bench", "mcts", "--size", "30"], "--size"),
    (["bench", "mcts", "--board", "30"], "--size"),
    (["bench", "selfplay", "--workers", "0"], "--workers"),
    (["bench", "selfplay", "--model", "no/such.ckpt"], "no/such.ckpt"),
    (["bench", "train", "--games", "0"], "--games"),
    (["bench", "train", "--threads", "0"], "--threads"),
    (["cluster", "--duration", "forever"], "--duration"),
    (["cluster", "--config", "no/such/file.toml"], "no/such/file.toml"),
    (["arena", "random", "mcts:2", "--pass-rule", "never"], "--pass-rule"),
    (["gtp", "--search", "beam"], "--search"),
    (["bench", "nothing"], "unknown target 'nothing'"),
    (["nothing"], "unknown command"),
]
if not torch.cuda.is_available():
    CASES.append((["bench", "server", "--device", "cuda"], "no CUDA device"))


@pytest.mark.parametrize("args, needle", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_one_line_and_status_2(args, needle):
    out = fastgo(*args)
    assert out.returncode == 2, out
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines


@pytest.mark.parametrize("args", [["bench", "server", "--batch", "0"],
                                  ["bench", "server", "--clients", "0"],
                                  ["bench", "train", "--games", "0"]], ids=" ".join)
def test_a_bench_refusal_imports_no_torch(args):
    """The arguments are checked before torch is imported: a refusal is quick."""
    code = ("import sys; from fastgo_cli.main import main; "
            f"status = main({args!r}); "
            "print('torch imported:', 'torch' in sys.modules, 'status:', status, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and args[2] in lines[0], out.stderr
    assert lines[-1] == "torch imported: False status: 2", out.stderr


NOT_A_CHECKPOINT = {"missing": None, "not a zip": b"PK\x03\x04 not really a checkpoint",
                    "a folder": "dir"}
MODEL_COMMANDS = {"gtp": ["gtp", "--model", "{}"], "analysis": ["analysis", "--model", "{}"],
                  "play": ["play", "--model", "{}"], "arena": ["arena", "{}", "random"]}


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=MODEL_COMMANDS)
def test_a_model_that_is_no_checkpoint_is_refused_before_torch(tmp_path, command):
    """A missing path, a folder or bytes that are no checkpoint archive: one line naming the
    path, status 2, and torch never imported (a refusal in a third of a second, not three)."""
    for case, content in NOT_A_CHECKPOINT.items():
        path = tmp_path / case.replace(" ", "-")
        if content == "dir":
            path.mkdir()
        elif content is not None:
            path.write_bytes(content)
        args = [a.format(path) for a in MODEL_COMMANDS[command]]
        code = ("import sys; from fastgo_cli.main import main; "
                f"status = main({args!r}); "
                "print('torch imported:', 'torch' in sys.modules, 'status:', status, file=sys.stderr)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 2 and str(path) in lines[0] and "Traceback" not in out.stderr, \
            (case, out.stderr)
        assert lines[-1] == "torch imported: False status: 2", (case, out.stderr)


def test_version_and_bench_help():
    out = fastgo("--version")
    assert out.returncode == 0 and out.stdout.startswith("fastgo ")
    out = fastgo("bench", "--help")
    assert out.returncode == 0
    for name in ("board", "mcts", "server", "selfplay", "train"):
        assert f"  {name} " in out.stdout


def test_help_shows_defaults():
    out = fastgo("bench", "selfplay", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "(default: 10.0)" in text and "(default: 9x9_cpu)" in text


# --- a misspelt flag, an unknown config name, a bad --set: the real process --------------------

REFUSED = [
    (["cluster", "--config", "no_such_config"], "unknown config 'no_such_config' (shipped: "),
    (["cluster", "--wokers", "2"], "(did you mean --workers?)"),
    (["train", "--config", "no_such_config", "--run-dir", "r"], "unknown config 'no_such_config'"),
    (["train", "--config", "quickstart", "--run-dir", "r", "--no-pubish"],
     "(did you mean --no-publish?)"),
    (["selfplay", "--config", "no_such_config", "--run-dir", "r"], "unknown config"),
    (["selfplay", "--config", "quickstart", "--run-dir", "r", "--vistis", "3"],
     "(did you mean --visits?)"),
    (["arena", "random", "mcts:2", "--gmaes", "2"], "(did you mean --games?)"),
    (["serve", "--config", "no_such_config"], "unknown config"),
    (["train", "--config", "quickstart", "--run-dir", "r", "--set", "trainer.lr=-1"],
     "--set: trainer.lr"),
    (["cluster", "--set", "cluster.workerz=2"], "unknown key 'cluster.workerz'"),
]


@pytest.mark.parametrize("args, needle", REFUSED, ids=[" ".join(c[0]) for c in REFUSED])
def test_refused_in_one_line_with_status_2(tmp_path, args, needle):
    out = subprocess.run([sys.executable, "-m", "fastgo_cli.main", *args], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"fastgo {args[0]}: error: ") and needle in lines[0], lines
    assert out.stdout == "" and list(tmp_path.iterdir()) == []


def _line(proc, prefix, timeout_s):
    """The first stdout line of `proc` that starts with `prefix` (None at EOF or timeout)."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    buffered = b""
    while time.monotonic() < deadline:
        if not selector.select(max(0.0, deadline - time.monotonic())):
            continue
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            return None
        buffered += chunk
        for line in buffered.decode(errors="replace").splitlines():
            if line.startswith(prefix):
                return line
    return None


def test_set_reaches_the_command_body(tmp_path):
    """The recorder binds the endpoint that --set gives, not the file's (a shipped config by
    name, from a folder outside the checkout)."""
    proc = subprocess.Popen([sys.executable, "-m", "fastgo_cli.main", "recorder", "--config",
                             "quickstart", "--run-dir", "run", "--quiet",
                             "--set", "recorder.endpoint=tcp://127.0.0.1:*"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        ready = _line(proc, "fastgo recorder: ready on ", 60)
        assert ready is not None, proc.stderr.read() if proc.poll() is not None else "no ready line"
        port = int(ready.rsplit(":", 1)[1])
        assert ready.startswith("fastgo recorder: ready on tcp://127.0.0.1:")
        assert port != 5557                          # quickstart's recorder.endpoint (the default)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert (tmp_path / "run" / "shards").is_dir()


def test_gtp_with_a_baseline_player_never_imports_torch():
    code = ("import sys; from fastgo_cli.main import main; "
            "status = main(['gtp', '--player', 'random', '--size', '9']); "
            "print('torch imported:', 'torch' in sys.modules, 'status:', status, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], input="name\nquit\n", capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.split("\n\n")[0] == "= fastgo", out.stdout
    assert out.stderr.strip().splitlines()[-1] == "torch imported: False status: 0", out.stderr
