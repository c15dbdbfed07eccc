"""CPU backends (network.backends, network.backend_support) and the automatic choice
(backend_choice): every available backend against the plain eval-mode torch forward, the
agreement arithmetic, the pick, the per-machine cache (damaged files ignored), and the fallback
on a CPU without bf16 or VNNI."""
import json

import numpy as np
import pytest
import torch

from network import backend_choice, backend_support, cpu_isa
from network.backend_support import ALL_BACKENDS, TORCH_FP32, available_backends
from network.backends import build_backend
from network.model import fuse_for_inference
from network.runner import ModelRunner
from rundata.config import ModelConfig


@pytest.fixture(scope="module", params=["residual", "nested_bottleneck"])
def net(trained_like, request):
    config = ModelConfig(board_size=7, blocks=2, channels=16, global_pool_every=2, block=request.param)
    return fuse_for_inference(trained_like(config))


@pytest.fixture(scope="module")
def positions(net):
    return backend_choice.reference_positions(net.config, 48)


def plain(model, x):
    with torch.inference_mode():
        logits, values = model.eval()(torch.from_numpy(x).float())
    return logits.numpy(), values.numpy()


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_each_available_backend_agrees_with_the_plain_forward(name, net, positions):
    if name not in available_backends():
        pytest.skip(f"{name} is not available on this machine")
    backend = build_backend(name, net, threads=1, calibration=positions)
    logits, values = backend.run(positions)
    want_logits, want_values = plain(net, positions)
    assert logits.shape == want_logits.shape and logits.dtype == np.float32
    assert values.shape == (len(positions),) and values.dtype == np.float32
    if name.endswith(("fp32", "f32")):
        np.testing.assert_allclose(logits, want_logits, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(values, want_values, rtol=1e-4, atol=1e-4)
    else:                           # reduced precision: within the bounds auto applies
        agree = backend_choice.agreement((want_logits, want_values), (logits, values))
        assert backend_choice.acceptable(agree), agree


def test_every_install_has_torch_fp32_and_onnx_runtime():
    names = available_backends()
    assert names[0] == TORCH_FP32
    assert "onnx-fp32" in names       # onnxruntime and onnx are install requirements


def test_openvino_leaves_the_serving_thread_unpinned(net, positions):
    # Pinned, the plugin ties the calling thread to one core at each inference; the server's
    # thread shares a few cores with the search workers and must stay free to move.
    backend = build_backend("openvino-f32", net, threads=1)
    assert backend.compiled.get_property("ENABLE_CPU_PINNING") is False
    assert backend.run(positions)[0].shape == (len(positions), 50)



def test_openvino_static_shapes_give_each_row_its_own_outputs(net, positions):
    # Sizes 6..8 run on the static 8 (padded with whatever rows an earlier batch left), 3 and
    # 9..12 on the dynamic model; every row must match the plain forward of that row alone.
    backend = build_backend("openvino-f32", net, threads=1, static_batches=(8,))
    assert backend.static_batches == (8,)
    want_logits, want_values = plain(net, positions)
    for start, count in ((0, 8), (8, 6), (20, 7), (30, 3), (33, 12), (0, 1), (40, 8)):
        logits, values = backend.run(np.ascontiguousarray(positions[start:start + count]))
        assert logits.shape == (count, 50) and values.shape == (count,)
        np.testing.assert_allclose(logits, want_logits[start:start + count], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(values, want_values[start:start + count], rtol=1e-4, atol=1e-4)


def test_the_runner_compiles_the_serving_batch_or_the_configured_sizes(net):
    assert ModelRunner(net, backend="openvino-f32", capacity=64, auto_batch=16, threads=1,
                       fuse_batchnorm=False)._cpu.static_batches == (16,)
    runner = ModelRunner(net, backend="openvino-f32", capacity=64, graph_batches=(8, 32, 128),
                         threads=1, fuse_batchnorm=False)
    assert runner._cpu.static_batches == (8, 32)        # above the capacity: never served
def test_agreement_arithmetic():
    ref_logits = np.array([[0.0, 1.0, 0.995], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], np.float32)
    ref_values = np.array([0.5, -0.5, 0.0], np.float32)
    # row 0: the candidate picks move 2, 0.005 below fp32's best: a near-tie, agreed;
    # row 1: picks move 1 (2.0 below): disagreed; row 2: agreed.
    logits = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    values = np.array([0.4, -0.5, 0.3], np.float32)
    agree = backend_choice.agreement((ref_logits, ref_values), (logits, values))
    assert agree["top1"] == pytest.approx(2 / 3)
    assert agree["value_mae"] == pytest.approx((0.1 + 0.0 + 0.3) / 3)
    assert agree["max_logit_err"] == pytest.approx(3.0 - 1.0)
    assert not backend_choice.acceptable(agree)
    assert backend_choice.acceptable({"top1": 0.95, "value_mae": 0.05, "max_logit_err": 0.1})
    assert not backend_choice.acceptable({"top1": 1.0, "value_mae": 0.0, "max_logit_err": np.nan})


def test_pick_takes_the_fastest_acceptable_and_falls_back_to_fp32():
    table = {"torch-fp32": {"evals_per_s": 100.0, "ok": True},
             "onnx-int8": {"evals_per_s": 900.0, "ok": False},
             "openvino-f32": {"evals_per_s": 300.0, "ok": True},
             "onnx-fp32": {"error": "RuntimeError: x", "ok": False}}
    assert backend_choice.pick(table) == "openvino-f32"
    assert backend_choice.pick({"onnx-int8": {"evals_per_s": 900.0, "ok": False}}) == TORCH_FP32


def test_a_cpu_without_vnni_is_still_offered_int8(monkeypatch):
    # int8 pays on AVX2 alone (1.7-1.95x fp32 on a Zen 3): the flags only order the candidates,
    # the runtimes say what can run (ONNX Runtime and OpenVINO are requirements of every install)
    cpu_isa.cpu_flags.cache_clear()
    monkeypatch.setattr(cpu_isa, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    names = available_backends()
    assert names[0] == TORCH_FP32
    assert "onnx-int8" in names, names
    assert ("openvino-int8" in names) == ("INT8" in backend_support._openvino_capabilities())
    # without VNNI the int8 candidates come after the fp32 ones; with it, before them
    assert max(names.index(n) for n in names if n.endswith("fp32") or n.endswith("f32")) < \
        min(names.index(n) for n in names if n.endswith("int8"))
    monkeypatch.setattr(cpu_isa, "cpu_flags", lambda: frozenset({"avx2", "avx_vnni"}))
    vnni = available_backends()
    assert set(vnni) == set(names) and vnni[1].endswith("int8")


def test_bf16_is_offered_as_the_runtime_reports_it(monkeypatch):
    monkeypatch.setattr(backend_support.torch.backends.mkldnn, "is_available", lambda: False)
    assert not backend_support.backend_available("torch-bf16")
    monkeypatch.setattr(backend_support, "_openvino_capabilities", lambda: frozenset({"FP32", "INT8"}))
    assert not backend_support.backend_available("openvino-bf16")
    monkeypatch.setattr(backend_support, "_openvino_capabilities",
                        lambda: frozenset({"FP32", "INT8", "BF16"}))
    assert backend_support.backend_available("openvino-bf16")


def test_auto_measures_once_then_reuses_the_cached_choice(net, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []
    real = backend_choice.measure_backends

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(backend_choice, "measure_backends", counting)
    name, table = backend_choice.choose_backend(net, batch=8, threads=1, seconds=0.05)
    assert name in available_backends() and table[name]["ok"]
    assert name == backend_choice.pick(table)
    doc = json.loads((tmp_path / "fastgo" / "backends.json").read_text())
    assert [entry["choice"] for entry in doc.values()] == [name]
    again, _ = backend_choice.choose_backend(net, batch=8, threads=1, seconds=0.05)
    assert again == name and len(calls) == 1
    # another batch size is another key: measured again
    backend_choice.choose_backend(net, batch=4, threads=1, seconds=0.05)
    assert len(calls) == 2


@pytest.mark.parametrize("content", [b"not json", b"[1, 2]", b'{"k": {"choice": "no-such"}}',
                                     b"\xff\xfe", b"{" * 100000])
def test_a_damaged_cache_is_ignored_and_rewritten(net, tmp_path, monkeypatch, content):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = tmp_path / "fastgo" / "backends.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    name, _ = backend_choice.choose_backend(net, batch=4, threads=1, seconds=0.02)
    doc = json.loads(path.read_text())
    assert list(doc.values())[0]["choice"] == name


def test_runner_serves_the_named_backend_and_refuses_unknown_ones(net, trained_like):
    config = net.config
    runner = ModelRunner(trained_like(config), backend="onnx", capacity=4)
    assert runner.describe()["backend"] == "onnx-fp32"
    with pytest.raises(ValueError, match="unknown backend"):
        ModelRunner(trained_like(config), backend="tpu-fp8", capacity=4)


def test_runner_falls_back_to_fp32_when_a_backend_disagrees(net, monkeypatch, trained_like):
    """A backend whose outputs are wrong (here: values negated) is refused at build time."""
    import network.runner as runner_module

    class Wrong:
        name = "onnx-fp32"

        def run(self, planes):
            logits, values = build_backend(TORCH_FP32, fuse_for_inference(model), threads=1).run(planes)
            return logits, -values

    model = trained_like(net.config, seed=3)
    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    real = runner_module.build_backend
    monkeypatch.setattr(runner_module, "build_backend",
                        lambda name, *a, **k: Wrong() if name == "onnx-fp32" else real(name, *a, **k))
    runner = ModelRunner(model, backend="onnx", capacity=4)
    assert runner.describe()["backend"] == TORCH_FP32


def test_auto_serves_the_next_fastest_candidate_when_its_choice_disagrees(net, monkeypatch,
                                                                        trained_like):
    """An int8 model that drifts from fp32 on trained weights must not drop the server to fp32
    when another candidate agrees: auto walks its measured table, fastest first."""
    import network.runner as runner_module

    model = trained_like(net.config, seed=4)
    table = {"torch-fp32": {"evals_per_s": 100.0, "ok": True},
             "onnx-fp32": {"evals_per_s": 150.0, "ok": True},
             "onnx-int8": {"evals_per_s": 500.0, "ok": True}}
    monkeypatch.setattr(runner_module, "_REFUSED", runner_module.Refusals())
    monkeypatch.setattr(runner_module, "choose_backend", lambda *a, **k: ("onnx-int8", table))
    real = runner_module.build_backend
    built = []

    class Drifted:
        name = "onnx-int8"

        def run(self, planes):
            logits, values = real(TORCH_FP32, fuse_for_inference(model), threads=1).run(planes)
            return -logits, values                       # every top-1 move differs

    def build(name, *args, **kwargs):
        built.append(name)
        return Drifted() if name == "onnx-int8" else real(name, *args, **kwargs)

    monkeypatch.setattr(runner_module, "build_backend", build)
    runner = ModelRunner(model, backend="auto", capacity=4)
    assert runner.describe()["backend"] == "onnx-fp32"
    assert ("onnx-int8", model.config.name) in runner_module._REFUSED
    built.clear()
    again = ModelRunner(model, backend="auto", capacity=4)      # a reload: no second try
    assert again.describe()["backend"] == "onnx-fp32" and "onnx-int8" not in built


def test_a_refused_backend_waits_30_s_then_twice_as_long_each_refusal_in_a_row():
    """One check's noise must not hold int8 back for ten minutes (a third of a 30-minute run at
    three quarters of its rate): the first refusal waits 30 s, each one in a row doubles it up
    to 600 s, and a pass starts the count again."""
    from network.runner import Refusals

    now = [1000.0]
    refusals = Refusals(clock=lambda: now[0])
    key = ("openvino-int8", "b4c48")
    assert not refusals.holds(key) and list(refusals) == []
    waits = []
    for _ in range(7):
        waits.append(refusals.add(key))
        now[0] += waits[-1] - 0.5
        assert refusals.holds(key)
        now[0] += 1.0
        assert not refusals.holds(key)
    assert waits == [30.0, 60.0, 120.0, 240.0, 480.0, 600.0, 600.0]
    refusals.passed(key)
    assert refusals.add(key) == 30.0 and list(refusals) == [key]
    assert not refusals.holds(("onnx-int8", "b4c48"))


def test_auto_says_each_backend_it_times_to_the_setups_progress(net, trained_like, tmp_path,
                                                                 monkeypatch):
    """A runner built with a BackendSetup's progress says "timing backend NAME at batch B"
    before each backend `auto` measures (fastgo serve prints these as its starting lines); one
    built without a setup says nothing and measures the same."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))           # no cached choice
    monkeypatch.setattr(backend_choice, "available_backends", lambda: [TORCH_FP32])
    said: list = []
    setup = backend_choice.BackendSetup(progress=said.append)
    model = trained_like(net.config, seed=5)
    runner = ModelRunner(model, backend="auto", capacity=4, threads=1, setup=setup)
    assert said == [f"timing backend {TORCH_FP32} at batch 4"]
    assert runner.backend == TORCH_FP32 and set(runner.backend_table) == {TORCH_FP32}
    table = backend_choice.measure_backends(fuse_for_inference(model), batch=4, threads=1,
                                            seconds=0.01)
    assert set(table) == {TORCH_FP32} and len(said) == 1
