"""A process that built and freed OpenVINO backends, two alive at once as in a hot reload,
still handles SIGTERM (OpenVINO's CPU plugin swaps the thread's signal stack; a freed one left
installed made the next signal a segmentation fault)."""
import subprocess
import sys

SCRIPT = r"""
import gc, os, signal
from rundata.config import ModelConfig
from network.backend_choice import reference_positions
from network.backends import build_backend
from network.model import build_model, fuse_for_inference

net = fuse_for_inference(build_model(ModelConfig(board_size=7, blocks=2, channels=16), seed=0))
positions = reference_positions(net.config, 16)
cache = {}
first = build_backend("openvino-f32", net, threads=1, onnx_cache=cache)
second = build_backend("openvino-int8", net, threads=1, calibration=positions, onnx_cache=cache)
first.run(positions); second.run(positions)
del first
gc.collect()
second.run(positions)
del second
gc.collect()
got = []
signal.signal(signal.SIGTERM, lambda number, frame: got.append(number))
os.kill(os.getpid(), signal.SIGTERM)
print("handled", got)
"""


def test_sigterm_is_handled_after_two_openvino_models_lived_at_once():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "handled [15]" in done.stdout
