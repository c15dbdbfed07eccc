"""CPU inference backends for one folded, eval-mode network: uint8 planes in, float32 logits and
values out, one interface for torch (fp32, bf16 autocast), ONNX Runtime (fp32, int8 QDQ) and
OpenVINO (f32, bf16, int8 from the same QDQ model).

    backend.run(planes) -> (logits, values)
        planes: np.uint8 [B, P, N, N], C-contiguous; B <= the capacity the caller stages
        logits: np.float32 [B, N*N + 1]; values: np.float32 [B]

`build_backend(name, net, ...)` builds one; which of them this install's runtimes can run on this
CPU is network.backend_support's (int8 on every CPU ONNX Runtime or OpenVINO runs on, VNNI or
not; bf16 where a runtime has native kernels), the ONNX models they run network.onnx_export's.
ONNX Runtime and OpenVINO are imported lazily, so a missing package only removes candidates.
"""
from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Protocol

import numpy as np
import torch

from network.backend_support import ALL_BACKENDS, TORCH_FP32, runtime_module
from network.onnx_export import export_onnx, quantize_onnx


class InferenceRuntime(Protocol):
    """What build_backend returns: a network on one runtime at one precision."""
    name: str

    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


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


# -- ONNX Runtime and OpenVINO -------------------------------------------------------------------

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
                  onnx_cache: dict | None = None, static_batches=()) -> InferenceRuntime:
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
    if runtime_module("onnx") is None or runtime_module(runtime) is None:
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
