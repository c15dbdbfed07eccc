"""Checkpoint files: a network's state_dict plus its model config, training step and a content
hash, written atomically (temporary name, fsync, rename) and read with `weights_only=True`.

Written by the trainer, read by the server (hot reload), the arena and the GTP engine. A file
whose hash, config or tensor shapes disagree is refused with `CheckpointError`.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
from dataclasses import dataclass

import torch

from fastgo.config import ConfigError, ModelConfig, parse_section, to_dict
from inference_server.model import PolicyValueNet, build_model

FORMAT = "fastgo-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


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
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".ckpt", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return content_hash


def load_checkpoint(path, *, expect: ModelConfig | None = None, data: bytes | None = None) -> Checkpoint:
    """Read and verify a checkpoint file (or its bytes `data`, named `path` in messages).
    `expect`, when given, must match the stored model config in board size and encoding (the
    input and output shapes a server slot serves)."""
    path = os.fspath(path)
    try:
        source = path if data is None else io.BytesIO(data)
        payload = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as err:  # corrupt zip, truncated file, forbidden pickle global, ...
        raise CheckpointError(f"{path}: unreadable checkpoint: {type(err).__name__}: {err}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a fastgo checkpoint")
    if payload.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: format version {payload.get('format_version')!r}, "
                              f"this build reads {FORMAT_VERSION}")
    try:
        config = parse_section(ModelConfig, payload.get("model_config"), source=path, prefix="model_config")
    except ConfigError as err:
        raise CheckpointError(str(err)) from None
    state = payload.get("state_dict")
    step = payload.get("step")
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{path}: state_dict missing or not all tensors")
    if not isinstance(step, int) or isinstance(step, bool):
        raise CheckpointError(f"{path}: step missing or not an integer")
    actual = state_hash(state)
    if payload.get("hash") != actual:
        raise CheckpointError(f"{path}: content hash mismatch (stored {payload.get('hash')!r}, "
                              f"computed {actual[:16]}...): the file is corrupt")
    if expect is not None and (config.board_size, config.encoding) != (expect.board_size, expect.encoding):
        raise CheckpointError(
            f"{path}: model is {config.board_size}x{config.board_size} {config.encoding}, "
            f"expected {expect.board_size}x{expect.board_size} {expect.encoding}")
    model = build_model(config)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise CheckpointError(f"{path}: weights do not fit model {config.name}: {err}") from None
    model.eval()
    return Checkpoint(model=model, config=config, step=step, content_hash=actual,
                      extra=payload.get("extra") or {})
