"""Helpers shared by several test files (imported as `from conftest import ...`)."""


def reachable(t):
    """Node indices of a search tree dict (fastgo.mcts tree arrays) below and including the
    root; the rest are garbage of earlier roots."""
    from fastgo.mcts import UNEXPANDED

    stack, out = [t["root"]], []
    while stack:
        i = stack.pop()
        out.append(i)
        first = t["first_child"][i]
        if first != UNEXPANDED:
            stack.extend(range(first, first + t["num_children"][i]))
    return out


def forward(model, x):
    """The reference evaluation: the eval-mode torch model on uint8 planes x [B, P, N, N] ->
    (logits float32 [B, N*N+1], values float32 [B]) as numpy arrays."""
    import torch

    with torch.no_grad():
        logits, values = model.eval()(torch.from_numpy(x).float())
    return logits.numpy(), values.numpy()


def gnugo_path():
    """GNU Go's executable (on PATH or Debian's /usr/games), or None where it is not installed."""
    import os
    import shutil

    found = shutil.which("gnugo")
    if found:
        return found
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


# Interim while the shared helpers move into fixtures: every test folder importable.
import os as _os
import sys as _sys

for _dir, _subdirs, _files in _os.walk(_os.path.dirname(_os.path.abspath(__file__))):
    if _os.path.basename(_dir) in ("unit", "system", "learning", "fastgo", "inference_server",
                                   "selfplay_workers", "trainer", "fastgo_cli") and _dir not in _sys.path:
        _sys.path.append(_dir)
