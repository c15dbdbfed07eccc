"""Checkpoint files: a network's state_dict plus its model config, training step and a content
hash, written atomically (temporary name, fsync, rename) and read with `weights_only=True`.

A file whose hash, config or tensor shapes disagree is refused with `CheckpointError`. The file's
bytes and zip archive are read and checked by network.checkpoint_file, without torch.
"""
from __future__ import annotations

import hashlib
import io
import operator
import os
from dataclasses import dataclass

import torch

from fastgo.files import atomic_write, escaped
from network.checkpoint_file import (
    MAX_CHECKPOINT_BYTES,
    SHOWN_CHARS,
    CheckpointError,
    CheckpointUnreadable,
    check_archive,
    read_checkpoint_bytes,
)
from network.model import PolicyValueNet
from rundata.config import ConfigError, ModelConfig, parse_section, to_dict

FORMAT = "fastgo-checkpoint"
FORMAT_VERSION = 1
MAX_STEP = (1 << 63) - 1         # steps are reported as model versions: int64 on the wire


@dataclass
class Checkpoint:
    model: PolicyValueNet          # eval mode, on the CPU
    config: ModelConfig
    step: int                      # training step; the server reports it as the model version
    content_hash: str              # sha256 of the state_dict (see state_hash)
    extra: dict


def state_hash(state_dict) -> str:
    """sha256 over names, dtypes, shapes and raw bytes of every tensor, in key order."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().to("cpu").contiguous()
        digest.update(name.encode())
        digest.update(str(tensor.dtype).encode())
        digest.update(repr(tuple(tensor.shape)).encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def save_checkpoint(path, model: PolicyValueNet, *, step: int, extra: dict | None = None) -> str:
    """Write atomically; returns the content hash. `extra` must hold only tensors, numbers,
    strings, lists and dicts (it is read back with weights_only=True)."""
    if isinstance(step, bool) or not 0 <= operator.index(step) <= MAX_STEP:
        raise ValueError(f"step must be an integer in 0..{MAX_STEP}, got {step!r}")
    state = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    content_hash = state_hash(state)
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_config": to_dict(model.config),
        "step": int(step),
        "hash": content_hash,
        "state_dict": state,
        "extra": extra or {},
    }
    atomic_write(path, lambda handle: torch.save(payload, handle), suffix=".ckpt")
    return content_hash


def load_checkpoint(path, *, expect: ModelConfig | None = None, data: bytes | None = None,
                    max_bytes: int = MAX_CHECKPOINT_BYTES) -> Checkpoint:
    """Read and verify a checkpoint file (or its bytes `data`, named `path` in messages).
    `expect`, when given, must match the stored model config in board size and encoding (the
    input and output shapes a server slot serves).

    Bounds: the file must be a regular file of at most `max_bytes` (a FIFO or device is refused
    without blocking; CheckpointUnreadable). Its zip entries must be stored uncompressed and
    together fit in the bytes held, so the archive's declared sizes cannot exceed the input.
    The stored config is checked against ModelConfig's limits, the step against 0..MAX_STEP,
    and every tensor's name, shape, dtype and layout (contiguous or channels-last: no zero or
    overlapping strides) against the model that config describes, built on the meta device
    (no memory) - all before any tensor is copied, hashed or a model allocated. Peak memory is
    about three times the file size; time is linear in it."""
    path = os.fspath(path)
    if data is None:
        data = read_checkpoint_bytes(path, max_bytes)
    elif len(data) > max_bytes:
        raise CheckpointError(f"{path}: {len(data)} bytes, the limit is {max_bytes}")
    else:
        check_archive(path, data)
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # corrupt zip, truncated file, forbidden pickle global, ...
        # torch's own text advises weights_only=False: never repeat that advice to a user
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
        if "weights_only" in first or "unpickl" in first.lower():
            first = "it holds objects other than tensors and plain data"
        raise CheckpointUnreadable(f"{path}: not a fastgo checkpoint (unreadable: "
                                   f"{type(err).__name__}: {first})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointUnreadable(f"{path}: not a fastgo checkpoint")
    if payload.get("format_version") != FORMAT_VERSION:
        version = escaped(repr(payload.get("format_version")), SHOWN_CHARS)
        raise CheckpointError(f"{path}: format version {version}, this build reads {FORMAT_VERSION}")
    try:
        config = parse_section(ModelConfig, payload.get("model_config"), source=path, prefix="model_config")
    except ConfigError as err:
        raise CheckpointError(escaped(err, 500, one_line=True)) from None
    state = payload.get("state_dict")
    step = payload.get("step")
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{path}: state_dict missing or not all tensors")
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= MAX_STEP:
        raise CheckpointError(f"{path}: step must be an integer in 0..{MAX_STEP}, got "
                              f"{escaped(repr(step), SHOWN_CHARS)}")
    if expect is not None and (config.board_size, config.encoding) != (expect.board_size, expect.encoding):
        raise CheckpointError(
            f"{path}: model is {config.board_size}x{config.board_size} {config.encoding}, "
            f"expected {expect.board_size}x{expect.board_size} {expect.encoding}")
    with torch.device("meta"):
        model = PolicyValueNet(config)       # shapes only: nothing allocated yet
    _check_tensors(path, config, model.state_dict(), state, len(data))
    actual = state_hash(state)
    if payload.get("hash") != actual:
        stored = escaped(repr(payload.get("hash")), SHOWN_CHARS)
        raise CheckpointError(f"{path}: content hash mismatch (stored {stored}, computed "
                              f"{actual[:16]}...): the file is corrupt")
    expected = model.state_dict()
    try:
        model.load_state_dict({name: tensor.to(expected[name].dtype).contiguous()
                               for name, tensor in state.items()}, strict=True, assign=True)
    except RuntimeError as err:
        raise CheckpointError(f"{path}: weights do not fit model {config.name}: "
                              f"{escaped(err, 300, one_line=True)}") from None
    model.eval()
    extra = payload.get("extra")
    return Checkpoint(model=model, config=config, step=step, content_hash=actual,
                      extra=extra if isinstance(extra, dict) else {})


def _check_tensors(path, config, expected, state, held):
    """Names, shapes, dtypes and layouts of the stored tensors against the model's, before any
    of them is copied; the model's bytes must fit in the `held` bytes of the file."""
    need = sum(t.numel() for t in expected.values()) * 2     # at least 16-bit weights
    if need > held:
        raise CheckpointError(f"{path}: model {config.name} needs at least {need} bytes of "
                              f"weights, the file holds {held}")
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: weights do not fit model {config.name}: missing "
                              f"{escaped(repr(missing[:3]), SHOWN_CHARS)}, unexpected "
                              f"{escaped(repr(unexpected[:3]), SHOWN_CHARS)}")
    for name, want in expected.items():
        tensor = state[name]
        if tuple(tensor.shape) != tuple(want.shape):
            raise CheckpointError(f"{path}: {name} has shape "
                                  f"{escaped(repr(tuple(tensor.shape)), SHOWN_CHARS)}, "
                                  f"model {config.name} needs {tuple(want.shape)}")
        if want.dtype.is_floating_point != tensor.dtype.is_floating_point or \
                (not want.dtype.is_floating_point and tensor.dtype != want.dtype) or \
                tensor.dtype.is_complex or tensor.is_quantized:
            raise CheckpointError(f"{path}: {name} has dtype {tensor.dtype}, expected {want.dtype}")
        layouts = (torch.contiguous_format, torch.channels_last) if tensor.dim() == 4 \
            else (torch.contiguous_format,)
        if tensor.layout != torch.strided or \
                not any(tensor.is_contiguous(memory_format=f) for f in layouts):
            raise CheckpointError(f"{path}: {name} has strides "
                                  f"{escaped(repr(tensor.stride()), SHOWN_CHARS)}: only dense "
                                  "tensors are accepted")
