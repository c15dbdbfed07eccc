"""The backend cache ($XDG_CACHE_HOME/fastgo/backends.json) as a hostile user or a damaged disk
leaves it: whatever is there, the server starts, the cache counts as absent, and the process
says so in one warning line at most; the file is read once per process; an entry that claims a
backend agrees is still checked against fp32 on the weights served."""
import json
import logging
import os

import pytest

from network import backend_cache, backend_choice
from network.backend_support import TORCH_FP32, available_backends
from network.backends import build_backend
from network.model import build_model, fuse_for_inference
from network.runner import ModelRunner
from rundata.config import ModelConfig

KEY = "the-key"
GOOD_ROW = {"evals_per_s": 10.0, "ok": True, "top1": 1.0, "value_mae": 0.0, "policy_kl": 0.0,
            "max_logit_err": 0.0, "checks": {"reference": {"top1": 1.0, "value_mae": 0.0,
                                                           "policy_kl": 0.0}}}


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process that has not read its cache yet, XDG_CACHE_HOME in tmp_path; the cache path."""
    monkeypatch.setattr(backend_cache, "_state", {"warned": False, "docs": {}})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "fastgo" / "backends.json"
    path.parent.mkdir(parents=True)
    return path


def entry(table):
    return {KEY: {"choice": TORCH_FP32, "time": 1.0, "table": table}}


def _sparse(path):
    with open(path, "wb") as handle:
        handle.truncate(200 << 20)


HOSTILE = {
    "table is a list": lambda p: p.write_text(json.dumps(entry([]))),
    "table is null": lambda p: p.write_text(json.dumps(entry(None))),
    "speed is a string": lambda p: p.write_text(json.dumps(entry(
        {TORCH_FP32: GOOD_ROW, "onnx-fp32": {**GOOD_ROW, "evals_per_s": "fast"}}))),
    "row is a string": lambda p: p.write_text(json.dumps(entry({TORCH_FP32: "fast"}))),
    "speed is NaN": lambda p: p.write_text(json.dumps(entry({TORCH_FP32: {**GOOD_ROW,
                                                                          "evals_per_s": float("nan")}}))),
    "speed of 5000 digits": lambda p: p.write_text(json.dumps(entry({TORCH_FP32: GOOD_ROW}))
                                                   .replace("10.0", "9" * 5000)),
    "200000 nested [": lambda p: p.write_bytes(b"[" * 200_000),
    "invalid JSON": lambda p: p.write_bytes(b"{not json"),
    "not UTF-8": lambda p: p.write_bytes(b"\xff\xfe{}"),
    "top-level array": lambda p: p.write_bytes(b"[1, 2]"),
    "200 MB sparse file": _sparse,
    "a FIFO": lambda p: os.mkfifo(p),
    "a link to /dev/zero": lambda p: os.symlink("/dev/zero", p),
    "a folder": lambda p: p.mkdir(),
}


@pytest.mark.parametrize("make", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_cache_is_absent_with_one_line(fresh, make, caplog):
    make(fresh)
    with caplog.at_level(logging.WARNING, logger="fastgo.backends"):
        assert backend_cache.read_cache() == {}
        backend_cache.write_cache(KEY, {"choice": TORCH_FP32, "table": {}, "time": 2.0})
        assert backend_cache.read_cache()[KEY]["choice"] == TORCH_FP32
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and str(fresh) in lines[0] and "\n" not in lines[0], lines


@pytest.mark.parametrize("make", [HOSTILE["table is a list"], HOSTILE["row is a string"],
                                  HOSTILE["speed is a string"], HOSTILE["200000 nested ["]],
                         ids=["table is a list", "row is a string", "speed is a string",
                              "200000 nested ["])
def test_auto_serves_whatever_the_cache_holds(fresh, make, monkeypatch, caplog):
    make(fresh)
    monkeypatch.setattr(backend_choice, "cache_key", lambda *a, **k: KEY)
    monkeypatch.setattr(backend_choice, "measure_backends",
                        lambda *a, **k: {TORCH_FP32: dict(GOOD_ROW)})
    with caplog.at_level(logging.WARNING, logger="fastgo.backends"):
        runner = ModelRunner(build_model(ModelConfig(blocks=1, channels=8), seed=0),
                             backend="auto", capacity=4)
    assert runner.describe()["backend"] == TORCH_FP32
    assert len([r for r in caplog.records if "backend cache" in r.getMessage()]) == 1


def test_the_cache_is_read_once_per_process(fresh, monkeypatch):
    fresh.write_text(json.dumps(entry({TORCH_FP32: GOOD_ROW})))
    reads = []
    real = backend_cache.read_bounded
    monkeypatch.setattr(backend_cache, "read_bounded", lambda *a: reads.append(a) or real(*a))
    assert backend_cache.read_cache()[KEY]["choice"] == TORCH_FP32
    backend_cache.write_cache("other", {"choice": TORCH_FP32, "table": {}, "time": 3.0})
    assert set(backend_cache.read_cache()) == {KEY, "other"}
    assert len(reads) == 1
    assert set(json.loads(fresh.read_text())) == {KEY, "other"}


def test_an_unwritable_cache_or_a_file_for_xdg_cache_home_is_one_line(fresh, monkeypatch,
                                                                      tmp_path, caplog):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(backend_cache, "atomic_write_text", refused)
    with caplog.at_level(logging.WARNING, logger="fastgo.backends"):
        for step in range(3):
            backend_cache.write_cache(f"k{step}", {"choice": TORCH_FP32, "table": {}})
    assert len(caplog.records) == 1 and "not written" in caplog.records[0].getMessage()

    caplog.clear()
    monkeypatch.undo()
    monkeypatch.setattr(backend_cache, "_state", {"warned": False, "docs": {}})
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    with caplog.at_level(logging.WARNING, logger="fastgo.backends"):
        backend_cache.read_cache()
        backend_cache.write_cache(KEY, {"choice": TORCH_FP32, "table": {}})
    assert len(caplog.records) == 1, [r.getMessage() for r in caplog.records]


def test_a_lying_entry_is_checked_again_and_refused(fresh, monkeypatch, trained_like):
    """An entry claiming a fast backend agrees with fp32 only ranks it: the runner checks it on
    the weights it serves, refuses it when it disagrees, and serves torch fp32."""
    import network.runner as runner_module

    liar = next((n for n in ("onnx-int8", "openvino-int8", "onnx-fp32")
                 if n in available_backends()), None)
    if liar is None:
        pytest.skip("neither ONNX Runtime nor OpenVINO is installed")
    model = trained_like(ModelConfig(blocks=1, channels=8), seed=5)
    fresh.write_text(json.dumps({KEY: {"choice": liar, "time": 1.0, "table": {
        liar: {**GOOD_ROW, "evals_per_s": 1e12}, TORCH_FP32: {**GOOD_ROW, "evals_per_s": 1.0}}}}))
    monkeypatch.setattr(backend_choice, "cache_key", lambda *a, **k: KEY)
    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    real = runner_module.build_backend

    class Drifted:
        name = liar

        def run(self, planes):
            logits, values = build_backend(TORCH_FP32, fuse_for_inference(model), threads=1).run(planes)
            return -logits, values                       # every top-1 move differs

    monkeypatch.setattr(runner_module, "build_backend",
                        lambda name, *a, **k: Drifted() if name == liar else real(name, *a, **k))
    runner = ModelRunner(model, backend="auto", capacity=4)
    assert runner.describe()["backend"] == TORCH_FP32
    assert set(runner_module._REFUSED) == {(liar, model.config.name)}


def test_onnx_runtime_telemetry_is_off_unless_asked_for():
    assert os.environ.get("ORT_DISABLE_TELEMETRY") is not None


def test_a_cached_torch_choice_loads_no_other_runtime(tmp_path):
    """Looking up a cached torch-fp32 choice (the key, the cache's entries) imports neither ONNX
    Runtime nor OpenVINO: each costs `fastgo gtp` a second at every start. A fresh process, as
    this one has loaded both."""
    import subprocess
    import sys

    code = ("import json, os, sys\n"
            "from rundata.config import ModelConfig\n"
            "from network import backend_cache\n"
            "from network.backend_choice import choose_backend\n"
            "from network.model import build_model, fuse_for_inference\n"
            "net = fuse_for_inference(build_model(ModelConfig(board_size=5, blocks=1, channels=8)))\n"
            "key = backend_cache.cache_key(net.config, batch=4, threads=1)\n"
            "path = backend_cache.cache_path()\n"
            "os.makedirs(os.path.dirname(path))\n"
            "json.dump({key: {'choice': 'torch-fp32', 'time': 1.0, 'table': {}}}, open(path, 'w'))\n"
            "choice, _ = choose_backend(net, batch=4, threads=1)\n"
            "print(choice, key,\n"
            "      sorted(m for m in ('onnxruntime', 'openvino', 'onnx') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg")))
    assert out.returncode == 0, out.stderr
    choice, key, loaded = out.stdout.split(" ", 2)
    assert choice == TORCH_FP32 and loaded.strip() == "[]", out.stdout
    # the key still names each installed runtime's version, as the runtime itself reports it
    from network.backend_support import runtime_module
    for name in ("onnxruntime", "openvino"):
        module = runtime_module(name)
        if module is not None:
            assert f"{name}={module.__version__.split('-')[0]}" in key, key
