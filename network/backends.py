"""CPU inference backends for one folded, eval-mode network: uint8 planes in, float32 logits and
values out, one interface for torch (fp32, bf16 autocast), ONNX Runtime (fp32, int8 QDQ) and
OpenVINO (f32, bf16, int8 from the same QDQ model).

    backend.run(planes) -> (logits, values)
        planes: np.uint8 [B, P, N, N], C-contiguous; B <= the capacity the caller stages
        logits: np.float32 [B, N*N + 1]; values: np.float32 [B]

`available_backends()` lists what this install's runtimes can run on this CPU, as they report it
(int8 on every CPU ONNX Runtime or OpenVINO runs on, VNNI or not; bf16 where a runtime has
native kernels); `build_backend(name, net, ...)` builds one.
ONNX Runtime and OpenVINO are imported lazily, so a missing package only removes candidates.
"""
from __future__ import annotations

import ctypes
import functools
import io
import logging
import os
import platform
import tempfile
import warnings
from importlib import metadata
from typing import Protocol

import numpy as np
import torch

from fastgo.run.config import INFERENCE_BACKENDS

TORCH_FP32 = "torch-fp32"
ALL_BACKENDS = INFERENCE_BACKENDS
ONNX_OPSET = 17

# ONNX Runtime's telemetry (an uploader, a device id it persists under XDG_CACHE_HOME, and a
# warning on the terminal where that folder is not writable) stays off unless the user set it:
# read once, when ONNX Runtime first loads, which is after this module.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


class Backend(Protocol):
    name: str

    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


# -- what this machine has ------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    """The CPU's feature flags (Linux /proc/cpuinfo); empty where they cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


# oneDNN's instruction-set levels as ONEDNN_MAX_CPU_ISA names them, lowest first (oneDNN's
# dispatcher control; AVX512_CORE_FP16 and AVX10_1_512 are one level, as are the AMX names)
ISA_LEVELS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
              "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16")
_ISA_ALIASES = {"AVX10_1_512": "AVX512_CORE_FP16", "AVX10_1_512_AMX": "AVX512_CORE_AMX",
                "AVX10_1_512_AMX_FP16": "AVX512_CORE_AMX_FP16"}
# what each level needs of the CPU's flags (/proc/cpuinfo names), highest first
_ISA_FLAGS = (("AVX512_CORE_AMX", {"amx_int8", "amx_bf16"}), ("AVX512_CORE_BF16", {"avx512_bf16"}),
              ("AVX512_CORE_VNNI", {"avx512_vnni"}), ("AVX512_CORE", {"avx512bw", "avx512vl", "avx512dq"}),
              ("AVX2_VNNI", {"avx_vnni", "avx2"}), ("AVX2", {"avx2", "fma"}), ("AVX", {"avx"}),
              ("SSE41", {"sse4_1"}))


def native_isa() -> str | None:
    """The highest oneDNN level this CPU's flags allow (None where the flags cannot be read)."""
    flags = cpu_flags()
    return next((level for level, needs in _ISA_FLAGS if needs <= flags), None)


def isa_limit() -> str | None:
    """The level ONEDNN_MAX_CPU_ISA holds torch's oneDNN and OpenVINO's CPU plugin to, where it
    is set below this CPU's own (e.g. AVX2 on an AVX-512 CPU, to measure what an AVX2-only CPU
    gets); None where it is unset, ALL or DEFAULT, a name oneDNN does not know, or not below
    the CPU's level. Both runtimes honour it (`fastgo bench backends` before and after, on an
    AVX-512 Zen 5: torch-fp32 0.62x, openvino-f32 0.57x, openvino-int8 0.42x); ONNX Runtime's
    kernels (MLAS) choose from the CPU alone and ignore it (onnx-int8 and onnx-fp32 unchanged)."""
    value = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    value = _ISA_ALIASES.get(value, value)
    native = native_isa()
    if value not in ISA_LEVELS or native is None:
        return None
    return value if ISA_LEVELS.index(value) < ISA_LEVELS.index(native) else None


def _allowed(level: str) -> bool:
    """Whether the runtimes held by isa_limit() may use instructions of `level`."""
    limit = isa_limit()
    return limit is None or ISA_LEVELS.index(limit) >= ISA_LEVELS.index(level)


def cpu_has_bf16() -> bool:
    flags = cpu_flags()
    return bool({"avx512_bf16", "amx_bf16"} & flags) and _allowed("AVX512_CORE_BF16")


def cpu_has_vnni() -> bool:
    flags = cpu_flags()
    return (bool({"avx512_vnni", "amx_int8"} & flags) and _allowed("AVX512_CORE_VNNI")) or \
        ("avx_vnni" in flags and _allowed("AVX2_VNNI"))


def isa_note() -> str:
    """One line on the instruction-set limit in force, or "" where there is none."""
    limit = isa_limit()
    if limit is None:
        return ""
    return (f"ONEDNN_MAX_CPU_ISA={limit} (this CPU: {native_isa()}): torch and OpenVINO are held "
            f"to it; ONNX Runtime ignores it, so its backends are left out")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()[:120]
    except OSError:
        pass

    return platform.processor() or platform.machine()


def _module(name):
    try:
        return __import__(name)
    except Exception:          # an install that cannot load (missing shared library) counts as absent
        return None


@functools.lru_cache(maxsize=1)
def _openvino_capabilities() -> frozenset:
    ov = _module("openvino")
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
    if name not in ALL_BACKENDS or _module("onnx") is None:
        return False
    if name.startswith("onnx-"):
        # ONNX Runtime's int8 kernels (MLAS) run on every x86-64 and Arm CPU it supports; they
        # ignore an instruction-set limit, so under one they would measure another CPU
        return _module("onnxruntime") is not None and isa_limit() is None
    caps = _openvino_capabilities()
    if name == "openvino-f32":
        return bool(caps)
    if name == "openvino-bf16":
        # OpenVINO reports BF16 from the CPU even where the limit forbids its kernels
        return "BF16" in caps and _allowed("AVX512_CORE_BF16")
    # int8 starts from the QDQ model ONNX Runtime's quantizer writes
    return "INT8" in caps and _module("onnxruntime") is not None


def torch_bf16_supported() -> bool:
    """Whether torch's oneDNN has native bf16 kernels here (it reports AVX-512 BF16 or AMX;
    elsewhere bf16 autocast is emulated and slower than fp32)."""
    if not _allowed("AVX512_CORE_BF16") or not torch.backends.mkldnn.is_available():
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
            module = _module(name)          # None (at once) where it is not installed either
            if module is not None:
                out[name] = getattr(module, "__version__", "?")
    return out


# -- torch ----------------------------------------------------------------------------------------

class TorchBackend:
    """The folded network in torch on the CPU, fp32 or under bf16 autocast."""

    def __init__(self, net, *, bf16=False, channels_last=True):
        self.name = "torch-bf16" if bf16 else TORCH_FP32
        self.bf16 = bool(bf16)
        self.channels_last = bool(channels_last)
        net = net.to("cpu").eval()
        if self.channels_last:
            net = net.to(memory_format=torch.channels_last)
        for p in net.parameters():
            p.requires_grad_(False)
        self.net = net

    def run(self, planes):
        with torch.inference_mode():
            x = torch.from_numpy(planes).to(torch.float32)
            if self.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            if self.bf16:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits, values = self.net(x)
                logits, values = logits.float(), values.float()
            else:
                logits, values = self.net(x)
        return logits.numpy(), values.numpy().reshape(-1)


# -- ONNX -----------------------------------------------------------------------------------------

def export_onnx(net) -> bytes:
    """The folded eval-mode network as ONNX bytes: input "planes" float32 [B, P, N, N], outputs
    "logits" [B, M] and "value" [B], batch dimension dynamic."""
    net = net.to("cpu").to(memory_format=torch.contiguous_format).eval()
    n = net.config.board_size
    example = torch.zeros(2, net.config.planes, n, n)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the TorchScript exporter is deprecated, still fine
        # the TorchScript exporter writes to a file object too; torch's annotation names paths only
        torch.onnx.export(net, (example,), buffer, input_names=["planes"],  # type: ignore[arg-type]
                          output_names=["logits", "value"], opset_version=ONNX_OPSET, dynamo=False,
                          dynamic_axes={"planes": {0: "batch"}, "logits": {0: "batch"},
                                        "value": {0: "batch"}})
    return buffer.getvalue()


def quantize_onnx(model_bytes: bytes, calibration: np.ndarray) -> bytes:
    """Static int8 QDQ quantization (ONNX Runtime; per-channel int8 weights, uint8 activations)
    calibrated on `calibration`, uint8 planes [C, P, N, N]."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    chunks = [calibration[i:i + 32].astype(np.float32) for i in range(0, len(calibration), 32)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._it = iter(chunks)

        def get_next(self):
            chunk = next(self._it, None)
            return None if chunk is None else {"planes": chunk}

    quiet = logging.getLogger()
    level = quiet.level
    with tempfile.TemporaryDirectory(prefix="fastgo-int8-") as folder:
        source = os.path.join(folder, "fp32.onnx")
        target = os.path.join(folder, "int8.onnx")
        with open(source, "wb") as handle:
            handle.write(model_bytes)
        quiet.setLevel(max(level, logging.ERROR))    # its advice on pre-processing is noise here
        try:
            quantize_static(source, target, Reader(), quant_format=QuantFormat.QDQ,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            per_channel=True)
        finally:
            quiet.setLevel(level)
        with open(target, "rb") as quantized:
            return quantized.read()


class OnnxRuntimeBackend:
    """ONNX Runtime's CPU provider on an exported (optionally int8 QDQ) model."""

    def __init__(self, model_bytes: bytes, *, threads: int, name="onnx-fp32"):
        import onnxruntime

        self.name = name
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, int(threads))
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(model_bytes, options,
                                                    providers=["CPUExecutionProvider"])

    def run(self, planes):
        logits, values = self.session.run(None, {"planes": planes.astype(np.float32)})
        return logits, values.reshape(-1)


class _SignalStack(ctypes.Structure):
    _fields_ = [("sp", ctypes.c_void_p), ("flags", ctypes.c_int), ("size", ctypes.c_size_t)]


def _signal_stack():
    """This thread's alternate signal stack (sigaltstack), or None where it cannot be read."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        current = _SignalStack()
        if libc.sigaltstack(None, ctypes.byref(current)) != 0:
            return None
        return current
    except (OSError, AttributeError):
        return None


def _set_signal_stack(saved) -> None:
    if saved is None:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        wanted = _SignalStack(saved.sp, saved.flags, saved.size)
        if saved.flags & 2:                      # SS_DISABLE: sigaltstack ignores sp and size
            wanted = _SignalStack(None, 2, 0)
        libc.sigaltstack(ctypes.byref(wanted), None)
    except (OSError, AttributeError):
        pass


class OpenVinoBackend:
    """OpenVINO's CPU plugin on an exported model, with an inference precision hint (f32, bf16);
    an int8 QDQ model runs its int8 kernels.

    The model is compiled once with a dynamic batch and once per size in `static_batches` with a
    static one. A batch runs on the smallest static size that holds it when padding adds at most
    a third (the rows past it keep earlier planes; rows are independent, their outputs dropped),
    else on the dynamic model. Changing a dynamic model's input shape re-plans its kernels, and
    served batches vary by a few positions (docs/performance.md: bench selfplay, +18%).

    The plugin sets the calling thread's alternate signal stack while a compiled model lives and
    puts back the one it saw on deletion; with two models alive at once (a hot reload) that can
    leave a freed stack installed, and the next signal handled on it crashes the process. Each
    backend therefore puts back the thread's own signal stack after compiling and after freeing."""

    def __init__(self, model_bytes: bytes, *, threads: int, precision="f32", name="openvino-f32",
                 static_batches=()):
        import openvino

        self.name = name
        self._signal_stack = _signal_stack()
        self._static = []          # (size, request, input float32 [size, P, N, N], logits, value)
        core = openvino.Core()
        with tempfile.TemporaryDirectory(prefix="fastgo-ov-") as folder:
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as handle:
                handle.write(model_bytes)
            model = core.read_model(path)
        # No pinning: the plugin would pin the serving thread to one core at each call, and on a
        # machine whose other cores run the search workers the scheduler must be free to move it.
        config = {"INFERENCE_NUM_THREADS": max(1, int(threads)), "PERFORMANCE_HINT": "LATENCY",
                  "ENABLE_CPU_PINNING": False}
        if precision in ("f32", "bf16"):
            config["INFERENCE_PRECISION_HINT"] = precision
        try:
            self.compiled = core.compile_model(model, "CPU", config)
            self.request = self.compiled.create_infer_request()
            self._logits = self.compiled.output("logits")
            self._value = self.compiled.output("value")
            rest = [dim.get_length() for dim in list(model.inputs[0].get_partial_shape())[1:]]
            for size in sorted({int(b) for b in static_batches if int(b) >= 1}):
                shaped = model.clone()
                shaped.reshape({shaped.inputs[0]: [size, *rest]})
                compiled = core.compile_model(shaped, "CPU", config)
                request = compiled.create_infer_request()
                staged = request.get_input_tensor(0).data
                staged[...] = 0
                self._static.append((size, request, staged, request.get_tensor(
                    compiled.output("logits")), request.get_tensor(compiled.output("value"))))
        finally:
            _set_signal_stack(self._signal_stack)

    @property
    def static_batches(self) -> tuple:
        return tuple(entry[0] for entry in self._static)

    def close(self):
        self.request = self.compiled = self._logits = self._value = None
        self._static = []
        _set_signal_stack(getattr(self, "_signal_stack", None))

    def __del__(self):
        self.close()

    def run(self, planes):
        n = len(planes)
        for size, request, staged, logits, values in self._static:
            if size >= n:
                if n * 4 >= size * 3:          # padded by at most a third: cheaper than a new shape
                    staged[:n] = planes
                    request.infer()
                    return (np.array(logits.data[:n], dtype=np.float32, copy=True),
                            np.array(values.data[:n], dtype=np.float32, copy=True).reshape(-1))
                break
        result = self.request.infer({0: planes.astype(np.float32)})
        return (np.array(result[self._logits], dtype=np.float32, copy=True),
                np.array(result[self._value], dtype=np.float32, copy=True).reshape(-1))


def build_backend(name: str, net, *, threads: int, channels_last=True, calibration=None,
                  onnx_cache: dict | None = None, static_batches=()):
    """Backend `name` for the folded eval-mode `net`. `calibration` (uint8 planes) is needed by
    the int8 backends; `onnx_cache` (a dict) shares one export and one quantization between the
    backends built for the same network; `static_batches`, the batch sizes OpenVINO also compiles
    with static shapes (the other runtimes ignore it). Raises ValueError for an unknown name,
    RuntimeError when the runtime is missing."""
    if name not in ALL_BACKENDS:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(ALL_BACKENDS)})")
    if name.startswith("torch"):
        return TorchBackend(net, bf16=name == "torch-bf16", channels_last=channels_last)
    cache = {} if onnx_cache is None else onnx_cache
    runtime = "onnxruntime" if name.startswith("onnx") else "openvino"
    if _module("onnx") is None or _module(runtime) is None:
        raise RuntimeError(f"backend {name!r} needs the {runtime} and onnx packages")
    if "fp32" not in cache:
        cache["fp32"] = export_onnx(net)
    model = cache["fp32"]
    if name.endswith("int8"):
        if calibration is None:
            raise ValueError(f"backend {name!r} needs calibration positions")
        if "int8" not in cache:
            cache["int8"] = quantize_onnx(cache["fp32"], calibration)
        model = cache["int8"]
    if runtime == "onnxruntime":
        return OnnxRuntimeBackend(model, threads=threads, name=name)
    precision = {"openvino-f32": "f32", "openvino-bf16": "bf16", "openvino-int8": "int8"}[name]
    return OpenVinoBackend(model, threads=threads, precision=precision, name=name,
                           static_batches=static_batches)
