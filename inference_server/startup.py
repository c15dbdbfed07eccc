"""The start of `fastgo serve`'s server: what the config names is checked before any model is
built (the device, each checkpoint file's path, the CURVE key file), then the InferenceServer is
made (it binds the endpoint, then loads the checkpoints). torch's thread count is the process's:
its role sets it.
"""
from __future__ import annotations

import os
import stat

from inference_server.binding import StartupError
from inference_server.server import InferenceServer
from network.backend_choice import BackendSetup
from network.checkpoint import CheckpointError
from rundata.config import Config


def start_server(config: Config, setup: BackendSetup | None = None) -> InferenceServer:
    """The server, with what the config names checked first: the device, the checkpoint files
    (each a regular, readable, valid checkpoint), the key file and the endpoint. `setup`: how
    its runners choose and check their CPU backend (the run's shards, where progress is said;
    None: no shards, nothing said). Raises StartupError, CheckpointError or ConfigError naming
    the key."""
    import torch

    server = config.server
    if server.device == "cuda" and not torch.cuda.is_available():
        raise StartupError("server.device: 'cuda' but this machine has no usable CUDA device")
    for name, path in server.checkpoints.items():
        if os.path.lexists(path):
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    raise OSError("not a regular file")
            except OSError as err:
                raise StartupError(f"server.checkpoints.{name}: {path}: {err.strerror or err}") from None
        elif not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise StartupError(f"server.checkpoints.{name}: folder of {path} does not exist")
    if server.curve_secret_key_file and not os.path.isfile(server.curve_secret_key_file):
        raise StartupError(f"server.curve_secret_key_file: {server.curve_secret_key_file} "
                           f"is not a file")
    try:
        return InferenceServer(config, setup=setup)
    except CheckpointError as err:
        raise StartupError(f"server.checkpoints: {err}") from None
    except RuntimeError as err:
        raise StartupError(f"server: cannot start the model runner: {err}") from None

