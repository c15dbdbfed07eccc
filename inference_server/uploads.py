"""Checkpoints sent to the server in chunks (protocol `upload` messages) before a `reload` names
them: bytes held per (client identity, upload id) until the reload takes them. Bounded: at most
MAX_UPLOADS open at once, each at most its declared total (which the protocol caps at
server.max_checkpoint_bytes); chunks come in order, and a resent chunk is accepted."""
from __future__ import annotations

import hashlib

from wire import protocol

MAX_UPLOADS = 4                  # checkpoint uploads open at once
UPLOAD_IDLE_S = 120.0            # an upload untouched this long may be dropped


class _Upload:
    __slots__ = ("data", "total", "touched")

    def __init__(self, total):
        self.total = total
        self.data = bytearray()
        self.touched = 0.0


class Uploads:
    """The open uploads. `add` and `take` raise protocol.ProtocolError, whose code and message
    are the error reply the client gets."""

    def __init__(self):
        self.open = {}               # (identity, upload id) -> _Upload

    def __len__(self):
        return len(self.open)

    def add(self, identity, request, now: float) -> int:
        """Appends the chunk of upload `request` (protocol.Request, kind "upload") received at
        `now` (any monotonic clock, seconds); returns the bytes held. A new upload starts at
        offset 0; when MAX_UPLOADS are open, those untouched for UPLOAD_IDLE_S are dropped to
        make room, else the answer is busy."""
        key = (identity, request.upload)
        upload = self.open.get(key)
        if upload is None:
            if request.offset != 0:
                raise protocol.ProtocolError(protocol.BAD_HEADER, f"upload {request.upload} is unknown; "
                                             "start at offset 0", request.request_id)
            if len(self.open) >= MAX_UPLOADS:
                for stale in [k for k, u in self.open.items() if now - u.touched > UPLOAD_IDLE_S]:
                    del self.open[stale]
            if len(self.open) >= MAX_UPLOADS:
                raise protocol.ProtocolError(protocol.BUSY, "too many uploads open; try again later",
                                             request.request_id)
            upload = self.open[key] = _Upload(request.total)
        if request.total != upload.total:
            raise protocol.ProtocolError(protocol.BAD_HEADER, "upload total changed", request.request_id)
        end = request.offset + len(request.data)
        if request.offset == len(upload.data):
            upload.data += request.data
        elif end > len(upload.data):
            raise protocol.ProtocolError(protocol.BAD_HEADER, f"chunk at {request.offset} out of order "
                                         f"(have {len(upload.data)} bytes)", request.request_id)
        upload.touched = now
        return len(upload.data)

    def take(self, identity, upload_id: int, request_id) -> bytes:
        """The bytes of a finished upload, which is closed; an unknown or unfinished one is a
        ProtocolError (BAD_HEADER) answering `request_id`."""
        upload = self.open.get((identity, upload_id))
        if upload is None or len(upload.data) != upload.total:
            raise protocol.ProtocolError(protocol.BAD_HEADER, f"upload {upload_id} "
                                         "is unknown or unfinished", request_id)
        del self.open[(identity, upload_id)]
        return bytes(upload.data)


def check_sha256(data: bytes, expected: str, request_id):
    """Refuses checkpoint bytes whose sha256 hex digest is not `expected` (the sender's):
    ProtocolError RELOAD_FAILED answering `request_id`."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise protocol.ProtocolError(
            protocol.RELOAD_FAILED, f"checkpoint bytes hash to sha256 {actual[:16]}..., "
            f"the sender says {expected[:16]}...: altered or truncated on the "
            f"way; not loaded", request_id)
