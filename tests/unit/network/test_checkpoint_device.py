"""A checkpoint whose tensors were saved on a CUDA device loads on a machine without one: the
reader maps every storage to the CPU (what a GPU trainer's checkpoint looks like to a CPU
machine), with the same weights and hash."""
import io
import zipfile

import pytest
import torch

from network.checkpoint import load_checkpoint, save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig

CPU_LOCATION = b"X\x03\x00\x00\x00cpu"          # the pickled storage location, memoized once
CUDA_LOCATION = b"X\x06\x00\x00\x00cuda:0"


def as_if_saved_on_cuda(data: bytes) -> bytes:
    """The same archive with every tensor's storage location rewritten to cuda:0."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename.endswith("data.pkl"):
                assert body.count(CPU_LOCATION) == 1
                body = body.replace(CPU_LOCATION, CUDA_LOCATION)
            target.writestr(info.filename, body)
    return out.getvalue()


def test_a_checkpoint_saved_on_cuda_loads_on_the_cpu(tmp_path):
    model = build_model(ModelConfig(blocks=1, channels=8))
    path = tmp_path / "ckpt-5.ckpt"
    content_hash = save_checkpoint(path, model, step=5)
    cuda_path = tmp_path / "ckpt-5-cuda.ckpt"
    cuda_path.write_bytes(as_if_saved_on_cuda(path.read_bytes()))
    if not torch.cuda.is_available():
        # the archive really names a CUDA device: torch's own reader refuses it here
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(io.BytesIO(cuda_path.read_bytes()), weights_only=True)
    loaded = load_checkpoint(cuda_path)
    assert loaded.step == 5 and loaded.content_hash == content_hash
    restored = loaded.model.state_dict()
    for name, tensor in model.state_dict().items():
        assert restored[name].device.type == "cpu"
        assert torch.equal(restored[name], tensor)
