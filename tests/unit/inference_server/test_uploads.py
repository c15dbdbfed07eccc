"""Chunked checkpoint uploads: bytes kept in order per (identity, upload id), every refusal a
ProtocolError with the code the client gets, and the bound on uploads open at once."""
import hashlib

import pytest

from inference_server.uploads import MAX_UPLOADS, UPLOAD_IDLE_S, Uploads, check_sha256
from wire import protocol
from wire.protocol import ProtocolError

DATA = bytes(range(256)) * 10          # 2560 bytes, sent in chunks of 1000, 1000, 560


def chunk(upload, offset, size=1000, *, total=len(DATA), request_id=1):
    frames = protocol.upload_request(request_id, upload, offset, total, DATA[offset:offset + size])
    return protocol.parse_request([bytes(f) for f in frames], 16)


def code_of(call):
    with pytest.raises(ProtocolError) as info:
        call()
    return info.value.code


def test_chunks_in_order_give_back_the_exact_bytes_once():
    uploads = Uploads()
    assert [uploads.add(b"a", chunk(5, offset), now=1.0) for offset in (0, 1000, 2000)] == \
        [1000, 2000, 2560]
    assert uploads.take(b"a", 5, request_id=9) == DATA
    assert len(uploads) == 0                                 # taken: closed
    assert code_of(lambda: uploads.take(b"a", 5, request_id=9)) == protocol.BAD_HEADER


def test_a_resent_chunk_is_accepted_and_not_appended_twice():
    uploads = Uploads()
    uploads.add(b"a", chunk(1, 0), now=0.0)
    assert uploads.add(b"a", chunk(1, 0), now=0.0) == 1000   # a retry of the first chunk
    assert uploads.add(b"a", chunk(1, 1000), now=0.0) == 2000
    assert uploads.add(b"a", chunk(1, 2000), now=0.0) == 2560
    assert uploads.take(b"a", 1, 0) == DATA


def test_out_of_order_unknown_and_changed_uploads_are_refused():
    uploads = Uploads()
    assert code_of(lambda: uploads.add(b"a", chunk(1, 1000), now=0.0)) == protocol.BAD_HEADER
    uploads.add(b"a", chunk(1, 0), now=0.0)
    assert code_of(lambda: uploads.add(b"a", chunk(1, 2000), now=0.0)) == protocol.BAD_HEADER  # a gap
    assert code_of(lambda: uploads.add(b"a", chunk(1, 1000, total=5000), now=0.0)) == protocol.BAD_HEADER
    assert code_of(lambda: uploads.take(b"a", 1, 0)) == protocol.BAD_HEADER                  # unfinished
    assert code_of(lambda: uploads.take(b"b", 1, 0)) == protocol.BAD_HEADER                  # not b's


def test_uploads_are_kept_apart_by_identity():
    uploads = Uploads()
    uploads.add(b"a", chunk(1, 0, size=2560), now=0.0)
    assert code_of(lambda: uploads.add(b"b", chunk(1, 1000), now=0.0)) == protocol.BAD_HEADER
    assert uploads.take(b"a", 1, 0) == DATA


def test_at_most_max_uploads_open_and_idle_ones_make_room():
    uploads = Uploads()
    for upload in range(MAX_UPLOADS):
        uploads.add(b"a", chunk(upload, 0), now=float(upload))
    # Every open upload touched within UPLOAD_IDLE_S: busy.
    assert code_of(lambda: uploads.add(b"a", chunk(99, 0), now=UPLOAD_IDLE_S)) == protocol.BUSY
    assert len(uploads) == MAX_UPLOADS
    # At 0.5 + UPLOAD_IDLE_S only upload 0 (touched at 0.0) has been idle longer: it goes.
    uploads.add(b"a", chunk(99, 0), now=0.5 + UPLOAD_IDLE_S)
    assert len(uploads) == MAX_UPLOADS
    assert code_of(lambda: uploads.add(b"a", chunk(0, 1000), now=1.0 + UPLOAD_IDLE_S)) == protocol.BAD_HEADER
    assert uploads.add(b"a", chunk(1, 1000), now=1.0 + UPLOAD_IDLE_S) == 2000


def test_sha256_mismatch_is_a_reload_failure():
    check_sha256(DATA, hashlib.sha256(DATA).hexdigest(), 3)
    with pytest.raises(ProtocolError) as info:
        check_sha256(DATA[:-1], hashlib.sha256(DATA).hexdigest(), 3)
    assert (info.value.code, info.value.request_id) == (protocol.RELOAD_FAILED, 3)
    assert "altered or truncated" in info.value.message
