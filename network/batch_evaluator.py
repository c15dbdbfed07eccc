"""The evaluator interface: a batch of feature planes in, policy logits and values out.

An evaluator maps a batch of feature planes to policy logits and values:

    evaluate(planes) -> (logits, values)
        planes: np.uint8 [B, P, N, N], C-contiguous (P = fastgo.constants.ENCODING_PLANES[encoding])
        logits: np.float32 [B, N*N + 1], pass last, unnormalised
        values: np.float32 [B], in [-1, 1], from the point of view of the side to move

    submit(planes) -> ticket            # start a batch; several may be in flight
    receive(ticket) -> (logits, values) # wait for that batch (any order of tickets)
    model_version                       # int version that answered the last receive (or None)
    close()
    evaluator(planes)                   # the same as evaluate(planes): every evaluator is a
                                        # callable, as the search (fastgo.mcts run) takes one

The caller must leave `planes` unchanged until its `receive` returns, and treat the returned
arrays as read-only (they may be views of a reply buffer). Implementations:

- `wire.client.InferenceClient`: over ZeroMQ to the server (no torch).
- `InProcessEvaluator`: a network run in this process (no zmq); for tests and one-process use.
- `UniformEvaluator`, `RandomEvaluator`: no network at all (numpy only), for tests and benches.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from fastgo.variants import Device


class BatchEvaluator(Protocol):
    model_version: int | None

    def evaluate(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def submit(self, planes: np.ndarray) -> int: ...

    def receive(self, ticket: int) -> tuple[np.ndarray, np.ndarray]: ...

    def close(self) -> None: ...


class _Immediate:
    """submit computes at once; receive hands the stored result back."""

    model_version = 0

    def __init__(self):
        self._next = 0
        self._results = {}

    def __call__(self, planes):
        return self.evaluate(planes)

    def submit(self, planes):
        ticket = self._next
        self._next += 1
        self._results[ticket] = self.evaluate(planes)
        return ticket

    def receive(self, ticket):
        try:
            return self._results.pop(ticket)
        except KeyError:
            raise KeyError(f"unknown or already received ticket {ticket}") from None

    def close(self):
        self._results.clear()


def _check(planes, board_size):
    if planes.dtype != np.uint8 or planes.ndim != 4 or planes.shape[2:] != (board_size, board_size):
        raise ValueError(f"planes must be uint8 [B, P, {board_size}, {board_size}], "
                         f"got {planes.dtype} {planes.shape}")


class UniformEvaluator(_Immediate):
    """All logits 0 (a uniform policy after softmax) and value 0."""

    def __init__(self, board_size: int):
        super().__init__()
        self.board_size = board_size

    def evaluate(self, planes):
        _check(planes, self.board_size)
        count = planes.shape[0]
        return (np.zeros((count, self.board_size ** 2 + 1), np.float32), np.zeros(count, np.float32))


class RandomEvaluator(_Immediate):
    """Seeded random logits (standard normal) and values (uniform in [-1, 1])."""

    def __init__(self, board_size: int, seed: int = 0):
        super().__init__()
        self.board_size = board_size
        self.rng = np.random.default_rng(seed)

    def evaluate(self, planes):
        _check(planes, self.board_size)
        count = planes.shape[0]
        logits = self.rng.standard_normal((count, self.board_size ** 2 + 1)).astype(np.float32)
        return logits, self.rng.uniform(-1, 1, count).astype(np.float32)


class InProcessEvaluator(_Immediate):
    """A network evaluated in this process (torch, no zmq), through the server's own runner.

    `model` is a PolicyValueNet or a checkpoint path; runner options as in ServerConfig."""

    def __init__(self, model, *, device=Device.CPU, channels_last=True, capacity=256, version=0,
                 **runner_options):
        super().__init__()
        from network.runner import ModelRunner
        if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
            from network.checkpoint import load_checkpoint
            checkpoint = load_checkpoint(model)
            model, version = checkpoint.model, checkpoint.step
        self.runner = ModelRunner(model, device=device, channels_last=channels_last,
                                  capacity=capacity, **runner_options)
        self.config = model.config
        self.board_size = model.config.board_size
        self.model_version = version

    def evaluate(self, planes):
        _check(planes, self.board_size)
        if planes.shape[1] != self.config.planes:
            raise ValueError(f"model takes {self.config.planes} planes, got {planes.shape[1]}")
        return self.runner.forward(planes)
