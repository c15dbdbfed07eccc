"""Hostile checkpoints: out-of-range steps, configs asking for huge models, zero-stride
tensors, compressed archives, FIFOs and directories. Each is refused before memory is spent."""
import io
import os
import subprocess
import sys
import threading
import zipfile

import pytest
import torch

from network.checkpoint import (
    MAX_STEP,
    CheckpointError,
    CheckpointUnreadable,
    load_checkpoint,
    save_checkpoint,
    state_hash,
)
from network.model import build_model
from rundata.config import ModelConfig

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CONFIG = ModelConfig(blocks=1, channels=8)


@pytest.fixture(scope="module")
def payload(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "a.ckpt"
    save_checkpoint(path, build_model(CONFIG, seed=0), step=5)
    return torch.load(path, weights_only=True)


def saved(payload, tmp_path, name="x.ckpt", rehash=True, **changes):
    data = dict(payload, **changes)
    if rehash:
        data["hash"] = state_hash(data["state_dict"])
    path = tmp_path / name
    torch.save(data, path)
    return path


@pytest.mark.parametrize("step", [MAX_STEP + 1, 1 << 64, -1, True, 1.5, "7"])
def test_steps_out_of_range_are_refused_at_load(payload, tmp_path, step):
    with pytest.raises(CheckpointError, match="step must be an integer"):
        load_checkpoint(saved(payload, tmp_path, step=step))


def test_largest_step_loads_and_save_refuses_beyond(payload, tmp_path):
    assert load_checkpoint(saved(payload, tmp_path, step=MAX_STEP)).step == MAX_STEP
    with pytest.raises(ValueError):
        save_checkpoint(tmp_path / "b.ckpt", build_model(CONFIG, seed=0), step=1 << 64)


def test_zero_stride_tensor_of_the_right_shape_is_refused(payload, tmp_path):
    state = dict(payload["state_dict"])
    shape = state["stem.weight"].shape
    state["stem.weight"] = torch.zeros(1).expand(*shape)
    with pytest.raises(CheckpointError, match="only dense tensors"):
        load_checkpoint(saved(payload, tmp_path, state_dict=state))


def test_huge_zero_stride_tensor_is_refused_before_it_is_expanded(payload, tmp_path):
    state = dict(payload["state_dict"])
    state["stem.weight"] = torch.zeros(1).expand(1 << 40)        # 4 TB if ever made dense
    with pytest.raises(CheckpointError, match="stem.weight has shape"):
        load_checkpoint(saved(payload, tmp_path, rehash=False, state_dict=state))


def test_config_asking_for_a_huge_model_is_refused_before_building_it(payload, tmp_path):
    huge = dict(payload["model_config"], blocks=80, channels=1024)   # ~6 GB of weights
    path = saved(payload, tmp_path, rehash=False, model_config=huge)
    assert path.stat().st_size < 200_000
    code = ("import resource, sys\n"
            "from network.checkpoint import load_checkpoint, CheckpointError\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    load_checkpoint(sys.argv[1])\nexcept CheckpointError as err:\n"
            "    print(err)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    message, grown_mb = done.stdout.strip().rsplit("\n", 1)
    assert "needs at least" in message
    assert int(grown_mb) < 100, done.stdout


def test_compressed_archive_entries_are_refused(payload, tmp_path):
    path = saved(payload, tmp_path)
    squeezed = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(squeezed, "w", zipfile.ZIP_DEFLATED) as out:
        for entry in source.infolist():
            out.writestr(entry.filename, source.read(entry))
    with pytest.raises(CheckpointError, match="compressed archive entry"):
        load_checkpoint("squeezed", data=squeezed.getvalue())


def test_size_limit_just_under_and_over(payload, tmp_path):
    path = saved(payload, tmp_path)
    size = path.stat().st_size
    assert load_checkpoint(path, max_bytes=size).step == 5
    with pytest.raises(CheckpointUnreadable):
        load_checkpoint(path, max_bytes=size - 1)
    with pytest.raises(CheckpointError):
        load_checkpoint("bytes", data=path.read_bytes(), max_bytes=size - 1)


def test_fifo_and_directory_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.ckpt"
    os.mkfifo(fifo)
    errors = []

    def load():
        try:
            load_checkpoint(fifo)
        except CheckpointError as err:
            errors.append(err)
    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and isinstance(errors[0], CheckpointUnreadable)
    with pytest.raises(CheckpointUnreadable):
        load_checkpoint(tmp_path)


def test_channels_last_weights_still_load(tmp_path):
    model = build_model(CONFIG, seed=1).to(memory_format=torch.channels_last)
    save_checkpoint(tmp_path / "cl.ckpt", model, step=2)
    loaded = load_checkpoint(tmp_path / "cl.ckpt")
    for name, tensor in loaded.model.state_dict().items():
        assert torch.equal(tensor, model.state_dict()[name])


@pytest.mark.parametrize("command", [["bench", "backends", "--seconds", "0.05"],
                                     ["gtp"], ["analysis"]])
def test_a_config_that_lies_about_its_tensors_is_one_line_everywhere(payload, tmp_path, command):
    """The stored shape says b1c16, the tensors are b1c8's: every command that takes --model
    refuses the file in one line (bench backends used to print a CheckpointError traceback)."""
    lying = saved(payload, tmp_path, model_config=dict(payload["model_config"], channels=16))
    with pytest.raises(CheckpointError):
        load_checkpoint(lying)
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", *command, "--model",
                           str(lying)], input="", capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 2, (done.returncode, done.stderr[-1500:])
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(lying) in lines[0], done.stderr
