"""Peak RSS of decoding a message built to amplify: msgpack of millions of one-byte containers
(empty arrays 0x90 or empty maps 0x80), which plain msgpack turns into one Python list or dict
each (56 to 64 bytes, plus an 8-byte slot in the outer list).

Two paths, each measured for the current code and for plain msgpack (the "before"):
  recorder  the message as the recorder gets it: recorder.messages.parse_game_message
            then rundata.records.unpack_record (recorder.server); plain: msgpack.unpackb
  shard     the same body in a shard file (header, body, trailer with count and sha256) read by
            rundata.shards.read_shard; plain: the file's bytes through msgpack.Unpacker

Every case runs in a fresh subprocess: "before" is read once the message is in memory
(recorder) or the imports are done (shard: the file is written by another subprocess), "after"
once decoding returned or raised. Two peaks are read: resource.getrusage's ru_maxrss and Linux's
VmHWM (/proc/self/status). ru_maxrss is kept across fork and exec, so a child starts with its
parent's peak: this script keeps itself small (no msgpack, no message) so that both agree; a
large parent (a test runner) must read VmHWM, the peak of the process image alone.

    python docs/experiments/amplification_rss.py [--mib 16] [--shapes arrays,maps] [--paths ...]

Standalone: needs numpy and msgpack, and the fastgo package importable for the current code.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GAME_ID = "a" * 32
BYTES_PER_CONTAINER = {"arrays": b"\x90", "maps": b"\x80"}
TRAILER_BYTES = 48             # a shard's trailer: magic (8), record count (8), sha256 (32)


def body(shape: str, size: int) -> bytes:
    """A record map {"id": GAME_ID, "aux": [N one-byte containers]} of about `size` bytes."""
    import msgpack

    head = b"\x82" + msgpack.packb("id") + msgpack.packb(GAME_ID) + msgpack.packb("aux")
    count = size - len(head) - 5
    return head + b"\xdd" + count.to_bytes(4, "big") + BYTES_PER_CONTAINER[shape] * count


def shard_file(path: str, data: bytes):
    """A shard of one record `data`: a valid header, the record, a trailer sealing both."""
    import msgpack

    from rundata import shards

    header = msgpack.packb({"magic": shards.MAGIC, "version": shards.FORMAT_VERSION, "size": 9,
                            "komi": 7.5, "rules": shards.RULES, "model_version": 0,
                            "worker": 0}, use_bin_type=True)
    content = header + data
    with open(path, "wb") as handle:
        handle.write(content)
        handle.write(shards.TRAILER.pack(shards.TRAILER_MAGIC, 1, hashlib.sha256(content).digest()))


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0     # Linux: KiB


def hwm_mib() -> float:
    """VmHWM of this process in MiB (0 where /proc is not there)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def child(path: str, code: str, shape: str, size: int, shard: str | None) -> dict:
    """One case in this process: {'before', 'after' (MiB), 'seconds', 'outcome'}."""
    import msgpack

    if code == "current":
        from recorder import messages
        from rundata.records import unpack_record
        from rundata.shards import read_shard
    message = body(shape, size) if path == "recorder" else None
    before, hwm_before = peak_mib(), hwm_mib()
    started = time.perf_counter()
    try:
        if path == "recorder" and code == "current":
            frames = messages.game_message(1, GAME_ID, 0, message)
            _, _, _, record = messages.parse_game_message(frames, 16 << 20)
            decoded = unpack_record(record)
        elif path == "recorder":
            decoded = msgpack.unpackb(message, raw=False)
        elif code == "current":
            decoded = read_shard(shard)
        else:
            with open(shard, "rb") as handle:
                data = handle.read()
            unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(data))
            unpacker.feed(data[:-TRAILER_BYTES])
            decoded = list(unpacker)
        outcome = f"decoded ({type(decoded).__name__})"
    except Exception as err:             # the outcome is part of the figure
        outcome = f"{type(err).__name__}: {str(err)[:90]}"
    return {"before": before, "after": peak_mib(), "hwm_before": hwm_before, "hwm_after": hwm_mib(),
            "seconds": time.perf_counter() - started, "outcome": outcome}


def _python(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, os.path.abspath(__file__), *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)


def run_case(path, code, shape, size, shard=None) -> dict:
    out = _python("--child", path, code, shape, size, *([shard] if shard else []))
    if out.returncode != 0:
        return {"before": 0.0, "after": 0.0, "hwm_before": 0.0, "hwm_after": 0.0,
                "seconds": 0.0,
                "outcome": f"child failed ({out.returncode}): {out.stderr.strip()[-200:]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=16.0, help="message size in MiB")
    parser.add_argument("--shapes", default="arrays,maps")
    parser.add_argument("--paths", default="recorder,shard")
    parser.add_argument("--codes", default="current,plain")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--make-shard", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make_shard:
        shape, size, path = args.make_shard
        shard_file(path, body(shape, int(size)))
        return 0
    if args.child:
        path, code, shape, size = args.child[:4]
        shard = args.child[4] if len(args.child) > 4 else None
        print(json.dumps(child(path, code, shape, int(size), shard)))
        return 0
    size = int(args.mib * (1 << 20))
    print(f"python {sys.version.split()[0]}, message {size} bytes ({args.mib:g} MiB); "
          f"peak RSS in MiB of a fresh process per case")
    print(f"{'':<25} {'ru_maxrss':^33} {'VmHWM':^17}")
    print(f"{'path':<9} {'code':<8} {'body':<6} {'before':>7} {'after':>8} {'growth':>8} "
          f"{'x msg':>6}  {'growth':>8} {'x msg':>6} {'s':>6}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            shard = None
            if "shard" in args.paths:
                shard = os.path.join(tmp, f"{shape}.shard")
                made = _python("--make-shard", shape, size, shard)
                if made.returncode != 0:
                    raise SystemExit(f"cannot write the shard: {made.stderr[-500:]}")
            for path in args.paths.split(","):
                for code in args.codes.split(","):
                    r = run_case(path, code, shape, size, shard if path == "shard" else None)
                    growth = r["after"] - r["before"]
                    hwm = r["hwm_after"] - r["hwm_before"]
                    print(f"{path:<9} {code:<8} {shape:<6} {r['before']:7.1f} {r['after']:8.1f} "
                          f"{growth:8.1f} {growth * (1 << 20) / size:6.1f}  {hwm:8.1f} "
                          f"{hwm * (1 << 20) / size:6.1f} {r['seconds']:6.2f}  {r['outcome']}",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
