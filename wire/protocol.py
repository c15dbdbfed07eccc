"""The wire between workers (DEALER) and the inference server (ROUTER); nothing else builds or
parses these messages. Its framing (pack_header, unpack_header, frame_buffer, int_field,
str_field) also carries the recorder's messages (recorder.messages). Imports numpy
and msgpack only (workers never import torch or zmq here).

Every message is a list of frames; frame 0 is a msgpack map (the header), at most
MAX_HEADER_BYTES, with magic "m" = MAGIC, protocol version "v" = VERSION, kind "k" and request id
"id" (an int the client chooses; replies echo it).

  eval     -> [header{slot, n, size, planes, dtype="uint8"}, planes]
              planes: n * planes * size * size bytes, layout [n, planes, size, size], 0/1
  result   <- [header{slot, n, moves, version}, logits, values]
              logits: float32 little-endian [n, moves] (moves = size*size + 1, pass last)
              values: float32 little-endian [n]; version: the model version that answered
  stats    -> [header]                 <- [header{stats: map}]
  reload   -> [header{slot, path}] or [header{slot, path=""}, checkpoint file bytes]
              or [header{slot, path="", upload}]: the bytes of a finished upload
              with bytes, an optional sha256 (64 hex digits) of them: the server refuses bytes
              that hash otherwise before loading anything
              <- [header{kind "reloaded", slot, version}]   (bytes: no shared filesystem needed)
  upload   -> [header{upload, offset, total}, chunk]  <- [header{kind "uploaded", upload, received}]
              checkpoint bytes in chunks of at most CHUNK_BYTES, in order (a resent chunk is
              harmless), so no message is ever larger than an eval: the server's message size
              limit stays that of the largest eval however large checkpoints are
  error    <- [header{code, msg}]      (id = -1 when the request's id could not be read)

msgpack is read with explicit size limits, a fresh unpacker per message, and no ext types
(no pickle anywhere).
"""
from __future__ import annotations

from dataclasses import dataclass

import msgpack
import numpy as np

MAGIC = "fgo"
VERSION = 1
MAX_HEADER_BYTES = 4096          # requests; replies may carry a larger stats map
MAX_REPLY_HEADER_BYTES = 1 << 20
CHUNK_BYTES = 1 << 20            # checkpoint bytes per upload message (and the most a reload carries)
NO_ID = -1
HEX_DIGITS = frozenset("0123456789abcdef")   # sha256 digests and game ids, lowercase
_MAX_UPLOAD_ID = (1 << 62) - 1

# error codes
BAD_HEADER = "bad_header"        # not a msgpack map with the required fields
BAD_VERSION = "bad_version"      # magic or protocol version mismatch
BAD_KIND = "bad_kind"            # unknown message kind
BAD_FRAMES = "bad_frames"        # wrong number of frames
BAD_SHAPE = "bad_shape"          # board size / planes / dtype not what the slot serves
BAD_SIZE = "bad_size"            # payload length does not match the declared shape
TOO_LARGE = "too_large"          # declared count beyond the server's limit
UNKNOWN_SLOT = "unknown_slot"
RELOAD_FAILED = "reload_failed"
SERVER_ERROR = "server_error"
BUSY = "busy"                    # the slot's queue or the reload queue is full: try again later
SHUTTING_DOWN = "shutting_down"  # the server stopped before answering this request


class ProtocolError(ValueError):
    """A message that breaks the protocol. `request_id` is NO_ID when unknown."""

    def __init__(self, code, message, request_id=NO_ID):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id


@dataclass
class Request:
    kind: str                    # "eval" | "stats" | "reload"
    request_id: int
    slot: str = ""
    count: int = 0               # positions
    board_size: int = 0
    planes: int = 0
    payload: object = None       # eval: the planes frame (a buffer), length checked
    path: str = ""               # reload from a file on the server's host
    data: object = None          # reload from checkpoint bytes sent along (a buffer); upload: the chunk
    upload: int = -1             # upload: its id; reload: the finished upload to load (-1: none)
    offset: int = 0              # upload: where the chunk starts
    total: int = 0               # upload: the checkpoint's size in bytes
    sha256: str = ""             # reload of bytes: their sha256 (hex) as the sender computed it


@dataclass
class Reply:
    kind: str                    # "result" | "stats" | "reloaded" | "error"
    request_id: int
    header: dict
    logits: np.ndarray | None = None     # float32 [n, moves], read-only view of the frame
    values: np.ndarray | None = None     # float32 [n]


def pack_header(header: dict) -> bytes:
    return msgpack.packb({"m": MAGIC, "v": VERSION, **header}, use_bin_type=True)


def unpack_header(data, limit, require_id=True) -> dict:
    if len(data) > limit:
        raise ProtocolError(BAD_HEADER, f"header of {len(data)} bytes exceeds {limit}")
    try:
        header = msgpack.unpackb(
            data, raw=False, strict_map_key=True, use_list=True,
            max_str_len=limit, max_bin_len=0, max_ext_len=0,
            max_array_len=limit, max_map_len=limit // 2 + 1)
    except Exception as err:  # msgpack raises several unrelated types on garbage
        raise ProtocolError(BAD_HEADER, f"undecodable header: {type(err).__name__}") from None
    if not isinstance(header, dict):
        raise ProtocolError(BAD_HEADER, "header is not a map")
    request_id = header.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool) \
            or not -(1 << 63) <= request_id < 1 << 63:      # ids are int64 on every side
        request_id = NO_ID
    if header.get("m") != MAGIC or header.get("v") != VERSION:
        raise ProtocolError(BAD_VERSION, f"magic/version {header.get('m')!r}/{header.get('v')!r}, "
                                         f"expected {MAGIC!r}/{VERSION}", request_id)
    if request_id == NO_ID and require_id:
        raise ProtocolError(BAD_HEADER, "missing integer request id")
    header["id"] = request_id
    return header


def int_field(header, key, request_id, low=0):
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ProtocolError(BAD_HEADER, f"field {key!r} must be an integer >= {low}", request_id)
    return value


def str_field(header, key, request_id):
    value = header.get(key)
    if not isinstance(value, str):
        raise ProtocolError(BAD_HEADER, f"field {key!r} must be a string", request_id)
    return value


# -- requests (client side builds, server side parses) ----------------------------------------

def eval_request(request_id: int, planes: np.ndarray, slot: str) -> list:
    """Frames for an eval request; the planes buffer is sent as-is (no copy) when contiguous."""
    if planes.dtype != np.uint8 or planes.ndim != 4 or planes.shape[2] != planes.shape[3]:
        raise ValueError(f"planes must be uint8 [B, P, N, N], got {planes.dtype} {planes.shape}")
    if not planes.flags.c_contiguous:
        planes = np.ascontiguousarray(planes)
    count, nplanes, size, _ = planes.shape
    header = pack_header({"k": "eval", "id": request_id, "slot": slot, "n": count, "size": size,
                    "planes": nplanes, "dtype": "uint8"})
    return [header, planes.data.cast("B")]


def stats_request(request_id: int) -> list:
    return [pack_header({"k": "stats", "id": request_id})]


def reload_request(request_id: int, slot: str, path: str = "", data: bytes | None = None,
                   upload: int | None = None, sha256: str | None = None) -> list:
    """Reload `slot` from `path` on the server's host, from checkpoint bytes `data` (at most
    CHUNK_BYTES), or from the bytes of a finished `upload`; `sha256`: the hex digest of those
    bytes."""
    fields = {"k": "reload", "id": request_id, "slot": slot,
              "path": path if data is None and upload is None else ""}
    if upload is not None:
        fields["upload"] = int(upload)
    if sha256 is not None:
        fields["sha256"] = sha256
    header = pack_header(fields)
    return [header] if data is None else [header, data]


def upload_request(request_id: int, upload: int, offset: int, total: int, chunk) -> list:
    """One chunk (at most CHUNK_BYTES) of a checkpoint of `total` bytes, starting at `offset`."""
    return [pack_header({"k": "upload", "id": request_id, "upload": int(upload), "offset": int(offset),
                   "total": int(total)}), chunk]


def uploaded_reply(request_id, upload, received) -> list:
    return [pack_header({"k": "uploaded", "id": request_id, "upload": int(upload),
                         "received": int(received)})]


def parse_request(frames, max_positions: int, max_checkpoint_bytes: int = 1 << 30) -> Request:
    """frames: the message without the ROUTER identity. Raises ProtocolError."""
    if not frames:
        raise ProtocolError(BAD_FRAMES, "empty message")
    header = unpack_header(frame_buffer(frames[0]), MAX_HEADER_BYTES)
    request_id = header["id"]
    kind = header.get("k")
    if kind == "eval":
        if len(frames) != 2:
            raise ProtocolError(BAD_FRAMES, f"eval needs 2 frames, got {len(frames)}", request_id)
        count = int_field(header, "n", request_id, low=1)
        size = int_field(header, "size", request_id, low=1)
        planes = int_field(header, "planes", request_id, low=1)
        slot = str_field(header, "slot", request_id)
        if header.get("dtype") != "uint8":
            raise ProtocolError(BAD_SHAPE, f"dtype {header.get('dtype')!r}, expected 'uint8'", request_id)
        if count > max_positions:
            raise ProtocolError(TOO_LARGE, f"{count} positions exceed the limit {max_positions}", request_id)
        if size > 64 or planes > 256:
            raise ProtocolError(BAD_SHAPE, f"board size {size} / planes {planes} out of range", request_id)
        payload = frame_buffer(frames[1])
        expected = count * planes * size * size
        if len(payload) != expected:
            raise ProtocolError(BAD_SIZE, f"payload is {len(payload)} bytes, header says "
                                          f"{count}x{planes}x{size}x{size} = {expected}", request_id)
        return Request("eval", request_id, slot=slot, count=count, board_size=size,
                       planes=planes, payload=payload)
    if kind == "stats":
        if len(frames) != 1:
            raise ProtocolError(BAD_FRAMES, f"stats needs 1 frame, got {len(frames)}", request_id)
        return Request("stats", request_id)
    if kind == "upload":
        if len(frames) != 2:
            raise ProtocolError(BAD_FRAMES, f"upload needs 2 frames, got {len(frames)}", request_id)
        upload = int_field(header, "upload", request_id)
        offset = int_field(header, "offset", request_id)
        total = int_field(header, "total", request_id, low=1)
        chunk = frame_buffer(frames[1])
        if upload > _MAX_UPLOAD_ID:
            raise ProtocolError(BAD_HEADER, "upload id out of range", request_id)
        if total > max_checkpoint_bytes:
            raise ProtocolError(TOO_LARGE, f"checkpoint of {total} bytes exceeds {max_checkpoint_bytes}",
                                request_id)
        if not 0 < len(chunk) <= CHUNK_BYTES or offset + len(chunk) > total:
            raise ProtocolError(BAD_SIZE, f"chunk of {len(chunk)} bytes at {offset} does not fit "
                                          f"{total} bytes in chunks of at most {CHUNK_BYTES}", request_id)
        return Request("upload", request_id, data=chunk, upload=upload, offset=offset, total=total)
    if kind == "reload":
        if len(frames) not in (1, 2):
            raise ProtocolError(BAD_FRAMES, f"reload needs 1 or 2 frames, got {len(frames)}", request_id)
        path = str_field(header, "path", request_id)
        data = frame_buffer(frames[1]) if len(frames) == 2 else None
        sha256 = ""
        if "sha256" in header:
            sha256 = str_field(header, "sha256", request_id)
            if len(sha256) != 64 or not set(sha256) <= HEX_DIGITS:
                raise ProtocolError(BAD_HEADER, "field 'sha256' must be 64 lowercase hex digits",
                                    request_id)
        upload = -1
        if "upload" in header:
            upload = int_field(header, "upload", request_id)
            if data is not None or path or upload > _MAX_UPLOAD_ID:
                raise ProtocolError(BAD_HEADER, "a reload of an upload carries no path or bytes", request_id)
            return Request("reload", request_id, slot=str_field(header, "slot", request_id), upload=upload,
                           sha256=sha256)
        if data is None and not path:
            raise ProtocolError(BAD_HEADER, "reload needs a path or checkpoint bytes", request_id)
        if data is not None and len(data) > max_checkpoint_bytes:
            raise ProtocolError(TOO_LARGE, f"checkpoint of {len(data)} bytes exceeds {max_checkpoint_bytes}",
                                request_id)
        return Request("reload", request_id, slot=str_field(header, "slot", request_id), path=path,
                       data=data, sha256=sha256)
    raise ProtocolError(BAD_KIND, f"unknown message kind {kind!r}", request_id)


def frame_buffer(frame):
    """A zmq.Frame (copy=False), bytes or memoryview -> a byte buffer without copying."""
    buf = getattr(frame, "buffer", frame)
    return buf if isinstance(buf, (bytes, bytearray)) else memoryview(buf).cast("B")


# -- replies (server side builds, client side parses) -----------------------------------------

def result_reply(request_id, slot, version, logits: np.ndarray, values: np.ndarray) -> list:
    """logits float32 [n, moves], values float32 [n] (C-contiguous rows of the batch output)."""
    count, moves = logits.shape
    header = pack_header({"k": "result", "id": request_id, "slot": slot, "n": count, "moves": moves,
                    "version": int(version)})
    return [header, logits, values]


def error_reply(request_id, code, message) -> list:
    return [pack_header({"k": "error", "id": request_id, "code": code, "msg": str(message)[:500]})]


def stats_reply(request_id, stats: dict) -> list:
    return [pack_header({"k": "stats", "id": request_id, "stats": stats})]


def reloaded_reply(request_id, slot, version) -> list:
    return [pack_header({"k": "reloaded", "id": request_id, "slot": slot, "version": int(version)})]


def parse_reply(frames) -> Reply:
    """Client side. Raises ProtocolError on anything malformed."""
    if not frames:
        raise ProtocolError(BAD_FRAMES, "empty reply")
    header = unpack_header(frame_buffer(frames[0]), MAX_REPLY_HEADER_BYTES, require_id=False)
    request_id, kind = header["id"], header.get("k")
    if request_id == NO_ID and kind != "error":
        raise ProtocolError(BAD_HEADER, "missing integer request id")
    if kind == "result":
        if len(frames) != 3:
            raise ProtocolError(BAD_FRAMES, f"result needs 3 frames, got {len(frames)}", request_id)
        count = int_field(header, "n", request_id, low=1)
        moves = int_field(header, "moves", request_id, low=1)
        int_field(header, "version", request_id, low=-(1 << 62))
        logits_buf, values_buf = frame_buffer(frames[1]), frame_buffer(frames[2])
        if len(logits_buf) != 4 * count * moves or len(values_buf) != 4 * count:
            raise ProtocolError(BAD_SIZE, "result payload sizes do not match the header", request_id)
        logits = np.frombuffer(logits_buf, dtype="<f4").reshape(count, moves)
        values = np.frombuffer(values_buf, dtype="<f4")
        logits.flags.writeable = values.flags.writeable = False   # views of a reply frame
        return Reply("result", request_id, header, logits, values)
    if kind in ("error", "stats", "reloaded", "uploaded"):
        return Reply(kind, request_id, header)
    raise ProtocolError(BAD_KIND, f"unknown reply kind {kind!r}", request_id)
