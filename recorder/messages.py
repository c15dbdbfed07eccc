"""The recorder's wire format: self-play workers on other hosts send finished games to
`fastgo recorder` (recorder.server) over ZeroMQ, framed as the inference server's
messages are (wire.protocol: a msgpack header frame, then payload frames), but its own kinds:
`game` (a worker's finished game) and `recorded` (the recorder's confirmation or error). Its
two users sit beside it: recorder.sink (the worker's end) and recorder.server.
"""
from __future__ import annotations

from wire.protocol import (
    BAD_FRAMES,
    BAD_HEADER,
    BAD_KIND,
    HEX_DIGITS,
    MAX_HEADER_BYTES,
    NO_ID,
    TOO_LARGE,
    ProtocolError,
    frame_buffer,
    int_field,
    pack_header,
    str_field,
    unpack_header,
)

#   game     -> [header{k "game", id, game, worker}, record]
#               record: one GameRecord as msgpack (a shard record), at most the recorder's
#               max_game_bytes; game: its 32-hex id; worker: the sender's worker id
#   recorded <- [header{k "recorded", id, game, duplicate}]  only once the game is in a shard
#               that is closed, fsynced and renamed (duplicate: it was there already)
#   error    <- [header{code, msg}]  the record was refused (bad_record) or could not be read
#
# A worker resends a game until it is recorded; the recorder drops games it holds already.

BAD_RECORD = "bad_record"        # a game record that fails the shard reader's checks


def game_message(request_id: int, game_id: str, worker: int, record: bytes) -> list:
    return [pack_header({"k": "game", "id": request_id, "game": game_id, "worker": int(worker)}), record]


def parse_game_message(frames, max_record_bytes: int):
    """Recorder side: (request id, game id, worker, record buffer). Sizes are checked before
    anything is decoded. Raises ProtocolError."""
    if not frames:
        raise ProtocolError(BAD_FRAMES, "empty message")
    header = unpack_header(frame_buffer(frames[0]), MAX_HEADER_BYTES)
    request_id = header["id"]
    if header.get("k") != "game":
        raise ProtocolError(BAD_KIND, f"unknown message kind {header.get('k')!r}", request_id)
    if len(frames) != 2:
        raise ProtocolError(BAD_FRAMES, f"game needs 2 frames, got {len(frames)}", request_id)
    game_id = str_field(header, "game", request_id)
    if len(game_id) != 32 or not set(game_id) <= HEX_DIGITS:
        raise ProtocolError(BAD_HEADER, "field 'game' must be 32 lowercase hex digits", request_id)
    worker = int_field(header, "worker", request_id)
    if worker >= 1 << 63:
        raise ProtocolError(BAD_HEADER, "field 'worker' out of range", request_id)
    record = frame_buffer(frames[1])
    if not 0 < len(record) <= max_record_bytes:
        raise ProtocolError(TOO_LARGE, f"game record of {len(record)} bytes (limit "
                                       f"{max_record_bytes})", request_id)
    return request_id, game_id, worker, record


def recorded_reply(request_id, game_id, duplicate=False) -> list:
    return [pack_header({"k": "recorded", "id": request_id, "game": game_id, "duplicate": bool(duplicate)})]


def parse_game_reply(frames):
    """Worker side: (kind "recorded" or "error", request id, header). Raises ProtocolError."""
    if len(frames) != 1:
        raise ProtocolError(BAD_FRAMES, f"a recorder reply has 1 frame, got {len(frames)}")
    header = unpack_header(frame_buffer(frames[0]), MAX_HEADER_BYTES, require_id=False)
    kind = header.get("k")
    if kind == "recorded":
        if header["id"] == NO_ID or not isinstance(header.get("game"), str):
            raise ProtocolError(BAD_HEADER, "recorded reply without id or game")
        return kind, header["id"], header
    if kind == "error":
        return kind, header["id"], header
    raise ProtocolError(BAD_KIND, f"unknown reply kind {kind!r}", header["id"])
