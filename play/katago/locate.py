"""Where KataGo's program and network are found, in one documented order, and what its failures
mean in one line.

Program: $FASTGO_KATAGO, then the cache's extracted program (CACHE/katago/AppRun, written by
`fastgo katago fetch`), then `katago` on PATH. Network: the spec's own (katago:VISITS:MODEL),
then $FASTGO_KATAGO_MODEL, then the cache's network (CACHE/model.bin.gz). CACHE is
$FASTGO_KATAGO_HOME, else $XDG_CACHE_HOME/fastgo/katago, else ~/.cache/fastgo/katago. Nothing
is ever downloaded here: only `fastgo katago fetch` fills the cache.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

PROGRAM_ENV = "FASTGO_KATAGO"
MODEL_ENV = "FASTGO_KATAGO_MODEL"
HOME_ENV = "FASTGO_KATAGO_HOME"
PROGRAM_NAME = "katago"
CACHE_PROGRAM = os.path.join("katago", "AppRun")   # the AppImage's extracted launcher
CACHE_MODEL = "model.bin.gz"
APPIMAGE_MAGIC = b"AI\x02"                          # bytes 8..10 of a type 2 AppImage
FETCH_HINT = "run `fastgo katago fetch` to download it into the cache"


class KataGoMissing(ValueError):
    """KataGo's program or network is not found, or KataGo cannot run here: one line."""


@dataclass(frozen=True)
class Located:
    """KataGo's program and network as found; `appimage`: the program is an AppImage that must
    run with APPIMAGE_EXTRACT_AND_RUN=1 (no FUSE needed)."""
    program: str
    model: str
    cache: str
    appimage: bool = False


def cache_dir(env=None) -> str:
    """The folder KataGo's program, network, tuning and logs are kept in (not created here)."""
    env = os.environ if env is None else env
    if env.get(HOME_ENV):
        return os.path.abspath(env[HOME_ENV])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "fastgo", "katago")


def is_appimage(path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(11)[8:11] == APPIMAGE_MAGIC
    except OSError:
        return False


def find_program(env=None) -> tuple:
    """(path, where) of KataGo's program in the order of this module; KataGoMissing when none."""
    env = os.environ if env is None else env
    given = env.get(PROGRAM_ENV)
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise KataGoMissing(f"KataGo: ${PROGRAM_ENV}={given!r} is not an executable file")
        return os.path.abspath(given), f"${PROGRAM_ENV}"
    cached = os.path.join(cache_dir(env), CACHE_PROGRAM)
    if os.path.isfile(cached) and os.access(cached, os.X_OK):
        return cached, "the cache"
    found = shutil.which(PROGRAM_NAME, path=env.get("PATH"))
    if found:
        return found, "PATH"
    raise KataGoMissing(f"KataGo's program not found (${PROGRAM_ENV}, {cached}, or `katago` on "
                        f"PATH): {FETCH_HINT}")


def find_model(model=None, env=None) -> tuple:
    """(path, where) of KataGo's network: `model` (the spec's), $FASTGO_KATAGO_MODEL, the
    cache's; KataGoMissing when none."""
    env = os.environ if env is None else env
    for given, where in ((model, "the player spec"), (env.get(MODEL_ENV), f"${MODEL_ENV}")):
        if given:
            if not os.path.isfile(given):
                raise KataGoMissing(f"KataGo's network {given!r} (from {where}): no such file")
            return os.path.abspath(given), where
    cached = os.path.join(cache_dir(env), CACHE_MODEL)
    if os.path.isfile(cached):
        return cached, "the cache"
    raise KataGoMissing(f"KataGo's network not found (katago:VISITS:MODEL, ${MODEL_ENV}, or "
                        f"{cached}): {FETCH_HINT}")


def locate(model=None, env=None) -> Located:
    """KataGo's program and network (KataGoMissing naming the one missing)."""
    env = os.environ if env is None else env
    program, _ = find_program(env)
    found, _ = find_model(model, env)
    return Located(program, found, cache_dir(env), is_appimage(program))


# KataGo's own words on stderr (or the loader's) -> what it means, for the one line of a failure
_MEANINGS = (
    (("CL_PLATFORM_NOT_FOUND_KHR", "No OpenCL platforms", "no OpenCL devices",
      "CL_DEVICE_NOT_FOUND"),
     "no OpenCL device: install an OpenCL driver (on a CPU: apt-get install pocl-opencl-icd)"),
    (("libOpenCL.so",),
     "the OpenCL loader is missing: apt-get install ocl-icd-libopencl1 pocl-opencl-icd"),
    (("fusermount", "Cannot mount AppImage"),
     "the program is an AppImage and this machine has no FUSE: `fastgo katago fetch` extracts "
     "it, or point $FASTGO_KATAGO at `katago --appimage-extract`'s squashfs-root/AppRun"),
    (("Could not find key", "unused keys", "Could not parse", "config"),
     "KataGo refused its config"),
    (("model", "Model", ".bin.gz"), "KataGo could not load its network"),
)


def explain(said: str) -> str:
    """The meaning of KataGo's last words `said` (stderr), or '' when unknown."""
    for words, meaning in _MEANINGS:
        if any(word in said for word in words):
            return meaning
    return ""
