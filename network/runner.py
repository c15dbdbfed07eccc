"""Running one network for inference on one device: uint8 planes in, float32 logits and values
out. The server owns one runner per model slot; the in-process evaluator and the benchmark's raw
forward use the same class, so both measure the same work.

CPU: batch norm folded, a fixed thread count, one of network.backends (torch fp32 or
bf16, ONNX Runtime fp32 or int8, OpenVINO f32, bf16 or int8); "auto" picks the fastest that
agrees with fp32 (network.backend_choice). Any backend but torch fp32 is checked against
it when built (every load, hot reloads included: on the loader's thread), on reference positions
and, where its BackendSetup names the run's shards, on positions of the run's newest games,
which int8 is then also calibrated on; torch fp32 serves where a check fails.
CUDA: a pinned host staging buffer, non-blocking copies, bf16/fp16 autocast and optional CUDA
graphs for fixed batch sizes (smaller batches are padded up to the next captured size).
"""
from __future__ import annotations

import logging
import time

import numpy as np
import torch

from fastgo.board import Board
from fastgo.variants import BACKEND_ALIASES, CUDA_BACKENDS, Backend, Device
from network.backend_choice import (
    BackendSetup,
    acceptable_everywhere,
    agreement,
    check_positions,
    choose_backend,
    describe_agreement,
    ranked,
)
from network.backend_support import ALL_BACKENDS, TORCH_FP32
from network.backends import build_backend
from network.model import PolicyValueNet, fuse_for_inference

log = logging.getLogger("fastgo.runner")
RETRY_FIRST_S = 30.0        # a refused backend is checked again on weights loaded this much later,
RETRY_REFUSED_S = 600.0     # ... twice as long after each refusal in a row, at most this


class Refusals:
    """The (backend, network name) pairs that failed the agreement check, each held back for a
    while: RETRY_FIRST_S after a first refusal, doubling with each refusal in a row up to
    RETRY_REFUSED_S; a pass clears its count. A refusal is mostly one check's noise on weights
    that passed before and pass again at the next checkpoint (a run's int8 served-position KL
    of 0.021 once among checks of 0.0004 to 0.0072): holding int8 back for ten minutes after
    each cost a 30-minute run a third of its int8 time at about three quarters of its rate. A
    quantization that keeps failing is tried less and less often."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._held: dict = {}           # key -> (refusals in a row, clock() at the last)

    def add(self, key) -> float:
        """Records a refusal of `key`; returns the seconds it is now held back."""
        count = self._held.get(key, (0, 0.0))[0] + 1
        self._held[key] = (count, self.clock())
        return self.wait(count)

    @staticmethod
    def wait(count: int) -> float:
        return min(RETRY_REFUSED_S, RETRY_FIRST_S * 2.0 ** min(count - 1, 30))

    def passed(self, key):
        self._held.pop(key, None)

    def holds(self, key) -> bool:
        """Whether `key` is still held back (refused, and its wait not over)."""
        held = self._held.get(key)
        return held is not None and self.clock() - held[1] < self.wait(held[0])

    def __iter__(self):
        return iter(self._held)


_REFUSED = Refusals()


def resolve_device(device: str) -> torch.device:
    if device == Device.AUTO:
        return torch.device(Device.CUDA if torch.cuda.is_available() else Device.CPU)
    if device == Device.CUDA and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch sees no CUDA device")
    return torch.device(device)


def resolve_precision(precision: str, device: torch.device):
    """The autocast dtype, or None for plain fp32."""
    if device.type != Device.CUDA or precision == "fp32":
        return None
    if precision == "fp16":
        return torch.float16
    if precision == "bf16" or torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


class ModelRunner:
    """Owns an inference copy of a network on a device and two staging buffers for its input.

    Usage: fill `staging(n, buffer)` (a uint8 numpy view [n, P, N, N]) then call
    `run(n, buffer=buffer)`; or call `forward(planes)` with any uint8 array (buffer 0). Outputs
    are fresh float32 numpy arrays. One thread runs forward passes at a time; another may fill
    the buffer that is not being run (the server gathers batch k+1 while batch k runs).
    `setup` (backend_choice.BackendSetup; None: no shards, nothing said): the run's shard
    folder whose games a CPU backend is calibrated (int8) and checked on, and where `auto`
    says each backend it times.
    """

    def __init__(self, model: PolicyValueNet, *, device=Device.CPU, precision="auto",
                 channels_last=True, fuse_batchnorm=True, capacity=64,
                 cuda_graphs=False, graph_batches=(), backend=Backend.TORCH, threads=0,
                 auto_batch=None, setup: BackendSetup | None = None):
        self.config = model.config
        self.device = resolve_device(device)
        backend = BACKEND_ALIASES.get(backend, backend)
        if backend != Backend.AUTO and backend not in ALL_BACKENDS:
            raise ValueError(f"unknown backend {backend!r}")
        if self.device.type != Device.CPU:
            if backend not in CUDA_BACKENDS:
                raise ValueError(f"backend {str(backend)!r} runs on the CPU only")
            backend = Backend.TORCH
        self.autocast_dtype = resolve_precision(precision, self.device)
        self.channels_last = bool(channels_last)
        net = fuse_for_inference(model) if fuse_batchnorm else model.eval()
        net = net.to(self.device)
        if self.channels_last:
            # Module.to takes memory_format (its documentation); torch's overloads leave it out
            net = net.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        for p in net.parameters():
            p.requires_grad_(False)
        self.net = net
        self.capacity = int(capacity)
        shape = (self.capacity, self.config.planes, self.config.board_size, self.config.board_size)
        self._is_cuda = self.device.type == Device.CUDA
        if self._is_cuda:
            self._host_in = [torch.empty(shape, dtype=torch.uint8).pin_memory() for _ in range(2)]
            self._dev_in = torch.empty(shape, dtype=torch.uint8, device=self.device)
            self._host_logits = torch.empty((self.capacity, self.config.moves),
                                            dtype=torch.float32).pin_memory()
            self._host_values = torch.empty((self.capacity,), dtype=torch.float32).pin_memory()
            self._stream = torch.cuda.Stream(self.device)
        else:
            self._host_in = [torch.empty(shape, dtype=torch.uint8) for _ in range(2)]
        self._staging_np = [buffer.numpy() for buffer in self._host_in]
        self.graph_batches = tuple(sorted(set(graph_batches or (self.capacity,)))) if cuda_graphs else ()
        self.graph_batches = tuple(b for b in self.graph_batches if b <= self.capacity)
        self._graphs: dict = {}   # batch size -> (graph, static logits, static values); built lazily
        self._cpu = None
        self.backend_table: dict = {}
        self.auto_batch = int(auto_batch or min(self.capacity, 256))
        # OpenVINO's static shapes: the sizes graph_batches names, else the serving batch.
        self.static_batches = () if self._is_cuda else tuple(
            b for b in sorted(set(graph_batches or (self.auto_batch,))) if b <= self.capacity)
        if not self._is_cuda:
            self._cpu = self._cpu_backend(backend, net, threads or torch.get_num_threads(),
                                          setup or BackendSetup())
            backend = self._cpu.name
        self.backend = backend

    def _cpu_backend(self, name, net, threads, setup: BackendSetup):
        """The CPU backend `name`, checked against torch fp32 (backend_choice.check_positions:
        reference positions, and positions of the newest games in the folder `setup.shards` when
        it has any, which int8 is then calibrated on), or torch fp32 where the check fails.
        "auto": the measured backends (backend_choice), fastest first, down to torch fp32; the
        first that passes the check on these weights serves. A refused backend is held back for
        a while (Refusals): each try costs a build."""
        fp32 = build_backend(TORCH_FP32, net, threads=threads, channels_last=self.channels_last)
        if name == TORCH_FP32:
            return fp32
        positions = check_positions(self.config, setup.shards)
        candidates = [name]
        if name == Backend.AUTO:
            _, self.backend_table = choose_backend(net, batch=self.auto_batch, threads=threads,
                                                   channels_last=self.channels_last,
                                                   positions=positions,
                                                   static_batches=self.static_batches,
                                                   progress=setup.progress)
            candidates = ranked(self.backend_table)
        references = {label: fp32.run(check) for label, check in positions.checks.items()}
        if not all(np.isfinite(part).all() for ref in references.values() for part in ref):
            # The weights themselves are broken (NaN or overflow in fp32): no other backend is
            # built or calibrated on them (int8 calibration fails on NaN); the canary check
            # that follows refuses the network in one line.
            return fp32
        onnx_cache: dict = {}
        for candidate in candidates:
            if candidate == TORCH_FP32:
                return fp32
            key = (candidate, self.config.name)
            if _REFUSED.holds(key):
                continue
            try:
                backend = build_backend(candidate, net, threads=threads,
                                        channels_last=self.channels_last,
                                        calibration=positions.calibration, onnx_cache=onnx_cache,
                                        static_batches=self.static_batches)
                agrees = {label: agreement(references[label], backend.run(check))
                          for label, check in positions.checks.items()}
            except (RuntimeError, AssertionError, ValueError) as err:
                # AssertionError, ValueError: ONNX Runtime's quantizer on weights it cannot scale
                if name != Backend.AUTO:
                    raise ValueError(str(err)) from None
                continue
            if acceptable_everywhere(agrees):
                _REFUSED.passed(key)
                log.info("backend %s agrees with fp32 (%s; int8 calibrated on %s)", candidate,
                         describe_agreement(agrees), positions.source)
                return backend
            wait = _REFUSED.add(key)
            log.warning("backend %s disagrees with fp32 on these weights (%s; int8 calibrated on "
                        "%s): not tried again for %.0f s", candidate, describe_agreement(agrees),
                        positions.source, wait)
        return fp32

    @property
    def layout(self) -> str:
        if self._cpu is not None and not self._cpu.name.startswith("torch"):
            return self._cpu.name
        return "channels_last" if self.channels_last else "contiguous"

    def describe(self) -> dict:
        return {"backend": self.backend, "device": str(self.device), "layout": self.layout,
                "precision": (str(self.autocast_dtype).replace("torch.", "") if self.autocast_dtype
                              else "fp32"),
                "cuda_graphs": list(self.graph_batches), "model": self.config.name,
                "board_size": self.config.board_size, "encoding": self.config.encoding}

    def staging(self, n: int, buffer: int = 0) -> np.ndarray:
        """The first n rows of host input buffer 0 or 1, uint8 [n, P, N, N]; fill, then run."""
        if n > self.capacity:
            raise ValueError(f"batch of {n} exceeds runner capacity {self.capacity}")
        return self._staging_np[buffer][:n]

    def forward(self, planes: np.ndarray, graphs: bool = True):
        """uint8 [B, P, N, N] -> (logits float32 [B, M], values float32 [B]); any B (chunked).
        graphs=False keeps CUDA graphs out (e.g. canaries run on the reload thread)."""
        planes = np.asarray(planes, dtype=np.uint8)
        total = planes.shape[0]
        if total <= self.capacity:
            self._staging_np[0][:total] = planes
            return self.run(total, graphs)
        logits = np.empty((total, self.config.moves), dtype=np.float32)
        values = np.empty((total,), dtype=np.float32)
        for start in range(0, total, self.capacity):
            stop = min(total, start + self.capacity)
            self._staging_np[0][:stop - start] = planes[start:stop]
            logits[start:stop], values[start:stop] = self.run(stop - start, graphs)
        return logits, values

    def run(self, n: int, graphs: bool = True, buffer: int = 0):
        """Evaluate the first n rows of a staging buffer. CUDA graphs are captured lazily, on the
        thread that first runs a captured size: the server's, never the reload thread."""
        if self._is_cuda:
            return self._run_cuda(n, graphs, buffer)
        assert self._cpu is not None            # every device but CUDA has one (__init__)
        return self._cpu.run(self._staging_np[buffer][:n])

    # -- CUDA ---------------------------------------------------------------------------------

    def _eager_cuda(self, x_u8):
        x = x_u8.to(torch.float32)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.autocast_dtype is not None:
            # no autocast weight cache: it would be captured into (and go stale in) CUDA graphs
            with torch.autocast("cuda", dtype=self.autocast_dtype, cache_enabled=False):
                logits, values = self.net(x)
        else:
            logits, values = self.net(x)
        return logits.float(), values.float()

    def _graph_for(self, size):
        entry = self._graphs.get(size)
        if entry is None:
            static_in = self._dev_in[:size]
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side), torch.inference_mode():
                for _ in range(3):          # warm up kernels and the allocator before capture
                    self._eager_cuda(static_in)
            torch.cuda.current_stream(self.device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.inference_mode(), torch.cuda.graph(graph, capture_error_mode="thread_local"):
                static_logits, static_values = self._eager_cuda(static_in)
            entry = (graph, static_logits, static_values)
            self._graphs[size] = entry
        return entry

    def _run_cuda(self, n, graphs=True, buffer=0):
        size = next((b for b in self.graph_batches if b >= n), None) if graphs else None
        stream = self._stream
        with torch.inference_mode(), torch.cuda.stream(stream):
            self._dev_in[:n].copy_(self._host_in[buffer][:n], non_blocking=True)
            if size is not None:
                if size > n:
                    self._dev_in[n:size].zero_()
                graph, logits, values = self._graph_for(size)
                graph.replay()
            else:
                logits, values = self._eager_cuda(self._dev_in[:n])
            self._host_logits[:n].copy_(logits[:n], non_blocking=True)
            self._host_values[:n].copy_(values[:n], non_blocking=True)
        stream.synchronize()
        # The pinned outputs are reused by the next run: hand out copies.
        return self._host_logits[:n].numpy().copy(), self._host_values[:n].numpy().copy()


def canary_planes(config, count: int = 4, seed: int = 12345) -> np.ndarray:
    """Fixed positions to test a model before it serves: the empty board (Black to move, then
    White to move) and seeded random stone patterns. uint8 [count, P, N, N]."""
    n, planes = config.board_size, config.planes
    out = np.zeros((max(count, 2), planes, n, n), dtype=np.uint8)
    # The empty board encoded by the board itself (any encoding), Black then White to move.
    board = Board(n, 7.5)
    out[0] = board.features(config.encoding)
    board.play(n * n)
    out[1] = board.features(config.encoding)
    rng = np.random.default_rng(seed)
    for i in range(2, out.shape[0]):
        out[i] = (rng.random((planes, n, n)) < 0.2).astype(np.uint8)
    return out[:count]


def check_canaries(runner: ModelRunner, max_abs_logit: float = 1e4) -> None:
    """Raise ValueError if the runner gives a NaN/inf or out-of-range output on the canaries."""
    logits, values = runner.forward(canary_planes(runner.config), graphs=False)
    check_canary_outputs(logits, values, max_abs_logit)


def check_canary_outputs(logits, values, max_abs_logit: float = 1e4) -> None:
    """Raise ValueError unless a network's outputs on canary_planes are finite and in range:
    the check of check_canaries for an evaluator that is not a ModelRunner."""
    logits, values = np.asarray(logits), np.asarray(values)
    if not np.all(np.isfinite(logits)) or not np.all(np.isfinite(values)):
        raise ValueError("canary positions give non-finite outputs")
    if np.abs(logits).max() > max_abs_logit:
        raise ValueError(f"canary logits out of range (max |logit| {np.abs(logits).max():.3g})")
    if np.abs(values).max() > 1.0 + 1e-4:
        raise ValueError(f"canary values out of [-1, 1] (max |value| {np.abs(values).max():.3g})")
