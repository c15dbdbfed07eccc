"""Which CPU backends this install and this CPU can run, as the runtimes themselves report it, and
the runtimes' versions. Backend names: TORCH_FP32 and ALL_BACKENDS (rundata.config's
INFERENCE_BACKENDS). ONNX Runtime and OpenVINO are imported lazily (runtime_module), so a missing
package only removes candidates; ONNX Runtime's telemetry is turned off as this module loads.
"""
from __future__ import annotations

import functools
import os
from importlib import metadata

import torch

from network.cpu_isa import cpu_has_bf16, cpu_has_vnni, isa_allows, isa_limit
from rundata.config import INFERENCE_BACKENDS

TORCH_FP32 = "torch-fp32"
ALL_BACKENDS = INFERENCE_BACKENDS

# ONNX Runtime's telemetry (an uploader, a device id it persists under XDG_CACHE_HOME, and a
# warning on the terminal where that folder is not writable) stays off unless the user set it:
# read once, when ONNX Runtime first loads, which is after this module.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def runtime_module(name):
    try:
        return __import__(name)
    except Exception:          # an install that cannot load (missing shared library) counts as absent
        return None


@functools.lru_cache(maxsize=1)
def _openvino_capabilities() -> frozenset:
    ov = runtime_module("openvino")
    if ov is None:
        return frozenset()
    try:
        return frozenset(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    except Exception:
        return frozenset()


def backend_available(name: str) -> bool:
    """Whether this install's runtimes can run backend `name` on this CPU, as the runtimes
    themselves report it (never the CPU's flags alone: int8 pays without VNNI, 1.7-1.95x fp32
    on an AVX2-only Zen 3). Imports only the runtimes `name` needs: a cached choice of
    torch-fp32 is checked without loading ONNX Runtime or OpenVINO (about a second together,
    at every start of `fastgo gtp`, `analysis` or `arena`)."""
    if name == TORCH_FP32:
        return True
    if name == "torch-bf16":
        return torch_bf16_supported()
    if name not in ALL_BACKENDS or runtime_module("onnx") is None:
        return False
    if name.startswith("onnx-"):
        # ONNX Runtime's int8 kernels (MLAS) run on every x86-64 and Arm CPU it supports; they
        # ignore an instruction-set limit, so under one they would measure another CPU
        return runtime_module("onnxruntime") is not None and isa_limit() is None
    caps = _openvino_capabilities()
    if name == "openvino-f32":
        return bool(caps)
    if name == "openvino-bf16":
        # OpenVINO reports BF16 from the CPU even where the limit forbids its kernels
        return "BF16" in caps and isa_allows("AVX512_CORE_BF16")
    # int8 starts from the QDQ model ONNX Runtime's quantizer writes
    return "INT8" in caps and runtime_module("onnxruntime") is not None


def torch_bf16_supported() -> bool:
    """Whether torch's oneDNN has native bf16 kernels here (it reports AVX-512 BF16 or AMX;
    elsewhere bf16 autocast is emulated and slower than fp32)."""
    if not isa_allows("AVX512_CORE_BF16") or not torch.backends.mkldnn.is_available():
        return False
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return cpu_has_bf16()


def available_backends() -> list[str]:
    """The CPU backends this machine and install can run, torch-fp32 first, then in the order
    the CPU's flags make likeliest to win (int8 first on VNNI, bf16 first with native bf16):
    `auto` times every one of them; the order only decides which is timed first."""
    names = [name for name in ALL_BACKENDS if backend_available(name)]

    def expected(name):
        if name == TORCH_FP32:
            return 0
        if name.endswith("int8"):
            return 1 if cpu_has_vnni() else 4
        if name.endswith("bf16"):
            return 2 if cpu_has_bf16() else 5
        return 3
    return sorted(names, key=expected)


# the distributions a runtime's module may come from, for its version without importing it
_DISTRIBUTIONS = {"onnxruntime": ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino",
                                  "onnxruntime-directml"),
                  "openvino": ("openvino", "openvino-nightly")}


def versions() -> dict:
    """Versions of the runtimes, for the cache key of an automatic choice: read from the installed
    distributions' metadata (no import), or from the module where no distribution names it."""
    out: dict[str, str] = {"torch": torch.__version__}
    for name, dists in _DISTRIBUTIONS.items():
        for dist in dists:
            try:
                out[name] = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                continue
        else:
            module = runtime_module(name)          # None (at once) where it is not installed either
            if module is not None:
                out[name] = getattr(module, "__version__", "?")
    return out

