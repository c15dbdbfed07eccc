"""Peak RSS of a real process decoding a 16 MiB message built to amplify (millions of one-byte
empty arrays: plain msgpack turns each into a 56-byte list plus an 8-byte slot, ~70x the bytes):
through the recorder's path (recorder.messages.parse_game_message, then
rundata.records.unpack_record) and as a shard read by rundata.shards.read_shard, the growth
stays under 4x the message. tests/unit/rundata/test_records.py bounds the same with tracemalloc
on 1 MiB in-process; this measures the whole process at the recorder's byte limit
(recorder.max_game_bytes = 16 MiB).

Each case runs in a subprocess that reports VmHWM (Linux's peak RSS of the process image) before
and after decoding: ru_maxrss would start from this test runner's own peak, as it is kept across
fork and exec. A control case with plain msgpack on 1 MiB shows the measurement sees
amplification."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import msgpack
import pytest

from rundata import shards

MESSAGE_BYTES = 16 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/status"),
                                reason="VmHWM is read from /proc/self/status (Linux)")

CHILD = textwrap.dedent("""
    import json, sys
    import msgpack
    from rundata.records import unpack_record
    from rundata.shards import read_shard
    from recorder import messages

    def hwm():
        with open("/proc/self/status") as handle:
            return next(int(l.split()[1]) * 1024 for l in handle if l.startswith("VmHWM:"))

    case, size, shard = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    head = (b"\\x82" + msgpack.packb("id") + msgpack.packb("a" * 32) + msgpack.packb("aux"))
    count = size - len(head) - 5
    message = head + b"\\xdd" + count.to_bytes(4, "big") + b"\\x90" * count if case != "shard" else b""
    before = hwm()
    outcome = "decoded"
    try:
        if case == "recorder":
            frames = messages.game_message(1, "a" * 32, 0, message)
            _, _, _, record = messages.parse_game_message(frames, 16 << 20)
            unpack_record(record)
        elif case == "plain":
            msgpack.unpackb(message, raw=False)
        else:
            read_shard(shard)
    except ValueError as err:
        outcome = type(err).__name__ + ": " + str(err)[-60:]
    print(json.dumps({"len": len(message), "growth": hwm() - before, "outcome": outcome}))
""")


def amplified(size: int) -> bytes:
    """The record map {"id": ..., "aux": [empty array x N]} of `size` bytes (the child's)."""
    head = b"\x82" + msgpack.packb("id") + msgpack.packb("a" * 32) + msgpack.packb("aux")
    count = size - len(head) - 5
    return head + b"\xdd" + count.to_bytes(4, "big") + b"\x90" * count


def measure(case: str, size: int, shard: str = "-") -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", CHILD, case, str(size), shard],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_recorder_path_decodes_a_16_mib_bomb_within_4x_its_size():
    result = measure("recorder", MESSAGE_BYTES)
    assert result["len"] == MESSAGE_BYTES
    assert "max_array_len" in result["outcome"]            # refused, not decoded
    assert result["growth"] < 4 * MESSAGE_BYTES, result


def test_a_shard_of_the_same_body_is_read_within_4x_its_size(tmp_path):
    header = msgpack.packb({"magic": shards.MAGIC, "version": shards.FORMAT_VERSION, "size": 9,
                            "komi": 7.5, "rules": shards.RULES, "model_version": 0, "worker": 0},
                           use_bin_type=True)
    content = header + amplified(MESSAGE_BYTES)
    path = tmp_path / "bomb.shard"
    path.write_bytes(content + shards.TRAILER.pack(shards.TRAILER_MAGIC, 1,
                                                   hashlib.sha256(content).digest()))
    result = measure("shard", MESSAGE_BYTES, str(path))
    assert "max_array_len" in result["outcome"]
    # the file's bytes and the unpacker's copy of them: about 2x
    assert result["growth"] < 4 * MESSAGE_BYTES, result


def test_the_measurement_sees_plain_msgpack_amplify():
    size = 1 << 20
    result = measure("plain", size)
    assert result["outcome"] == "decoded"
    assert result["growth"] > 20 * size, result             # ~72x measured
