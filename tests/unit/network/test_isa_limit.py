"""An instruction-set limit (ONEDNN_MAX_CPU_ISA below the CPU's own level): the runtimes that
honour it (torch's oneDNN, OpenVINO) stay candidates without the instructions it forbids, ONNX
Runtime (whose kernels ignore it) is left out, and a cached choice made without the limit is not
reused under it."""
import pytest

from network import backend_cache, backend_support, cpu_isa

ZEN5 = frozenset("sse4_1 avx avx2 fma avx512f avx512bw avx512vl avx512dq avx512_vnni avx512_bf16 "
                 "avx_vnni".split())
ZEN3 = frozenset("sse4_1 avx avx2 fma".split())


@pytest.fixture
def cpu(monkeypatch):
    """cpu(flags, limit): this process seen as a CPU of those flags under that limit. OpenVINO's
    own report is stood in for: its oneDNN reads ONEDNN_MAX_CPU_ISA once, at its first start in
    a process, and would keep the limit for every later test of this process."""
    def use(flags, limit=None):
        monkeypatch.setattr(cpu_isa, "cpu_flags", lambda: flags)
        monkeypatch.setattr(backend_support, "_openvino_capabilities",
                            lambda: frozenset({"FP32", "BF16", "INT8"}))
        if limit is None:
            monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
        else:
            monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", limit)
    return use


def test_the_native_level_follows_the_flags(cpu):
    cpu(ZEN5)
    assert cpu_isa.native_isa() == "AVX512_CORE_BF16"
    cpu(ZEN3)
    assert cpu_isa.native_isa() == "AVX2"
    cpu(frozenset())
    assert cpu_isa.native_isa() is None


@pytest.mark.parametrize("value, expected", [
    ("AVX2", "AVX2"), ("avx2", "AVX2"), (" AVX512_CORE ", "AVX512_CORE"), ("AVX2_VNNI", "AVX2_VNNI"),
    ("ALL", None), ("DEFAULT", None), ("", None), ("AVX9000", None), ("AVX512_CORE_BF16", None),
    ("AVX10_1_512", None), ("AVX512_CORE_AMX", None)])
def test_a_limit_counts_only_below_the_cpus_level(cpu, value, expected):
    cpu(ZEN5, value)
    assert cpu_isa.isa_limit() == expected


def test_under_an_avx2_limit_onnx_and_native_bf16_and_vnni_are_out(cpu):
    cpu(ZEN5, "AVX2")
    assert not backend_support.backend_available("onnx-fp32")
    assert not backend_support.backend_available("onnx-int8")
    assert not backend_support.backend_available("openvino-bf16")
    assert not backend_support.backend_available("torch-bf16")
    assert not cpu_isa.cpu_has_vnni() and not cpu_isa.cpu_has_bf16()
    assert backend_support.backend_available("torch-fp32")
    names = backend_support.available_backends()
    assert names[0] == "torch-fp32" and not any(n.startswith("onnx-") for n in names)
    note = cpu_isa.isa_note()
    assert "ONEDNN_MAX_CPU_ISA=AVX2" in note and "AVX512_CORE_BF16" in note and "ONNX Runtime" in note


def test_a_limit_at_avx512_vnni_keeps_vnni_and_drops_bf16(cpu):
    cpu(ZEN5, "AVX512_CORE_VNNI")
    assert cpu_isa.cpu_has_vnni() and not cpu_isa.cpu_has_bf16()
    assert not backend_support.backend_available("openvino-bf16")


def test_without_a_limit_onnx_runs_where_onnxruntime_is_installed(cpu):
    pytest.importorskip("onnxruntime")
    cpu(ZEN3, "AVX2")                       # the CPU's own level: no limit at all
    assert cpu_isa.isa_limit() is None and cpu_isa.isa_note() == ""
    assert backend_support.backend_available("onnx-int8") and backend_support.backend_available("onnx-fp32")


def test_the_cache_key_tells_a_limited_machine_apart(cpu):
    from rundata.config import Config

    config = Config().model
    cpu(ZEN5)
    free = backend_cache.cache_key(config, batch=64, threads=1)
    cpu(ZEN5, "AVX2")
    limited = backend_cache.cache_key(config, batch=64, threads=1)
    assert free != limited
    cpu(ZEN5, "ALL")
    assert backend_cache.cache_key(config, batch=64, threads=1) == free
