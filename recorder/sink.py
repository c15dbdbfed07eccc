"""Where a worker on another host puts its finished games: a DEALER to the recorder
(`fastgo recorder`), with every game kept until the recorder confirms it.

A game is written to the worker's outbox folder (temporary name + rename) and sent; the
recorder confirms it once it is in a closed shard, and only then is it forgotten. A game
unconfirmed for `timeout_s` makes the sink reconnect and send every unconfirmed game again
(Lazy Pirate); the recorder drops the ones it holds already. A worker started again on the same
outbox sends what its predecessor left unconfirmed, so kill -9 of a worker loses no finished
game. Confirmed ids are appended to OUTBOX/confirmed.ids (one line each; the file is rotated to
confirmed.ids.1 past CONFIRMED_LOG_BYTES) for audits. A game the recorder refuses as bad
(bad_record, too_large) is logged and dropped.

RemoteSink meets selfplay_workers.interfaces.GameSink.
"""
from __future__ import annotations

import itertools
import logging
import os
import re
import time
import uuid
from collections import OrderedDict

import zmq

from recorder import messages
from wire import protocol
from wire.keys import make_client

log = logging.getLogger("fastgo.selfplay")

SUFFIX = ".game"
_NAME = re.compile(r"[0-9a-f]{32}\.game")
REFUSED_FOR_GOOD = (messages.BAD_RECORD, protocol.TOO_LARGE)
CONFIRMED_LOG = "confirmed.ids"
CONFIRMED_LOG_BYTES = 4 << 20


class RemoteSink:
    """RemoteSink(endpoint, outbox=DIR, max_unconfirmed=N, ...). Not thread-safe."""

    def __init__(self, endpoint, *, outbox, worker_id=0, max_unconfirmed=256, timeout_s=30.0,
                 max_game_bytes=16 << 20, server_public_key=None, key_pair=None, context=None):
        self.endpoint = endpoint
        self.outbox = os.fspath(outbox)
        self.worker_id = int(worker_id)
        self.max_unconfirmed = int(max_unconfirmed)
        self.timeout_s = float(timeout_s)
        self.max_game_bytes = int(max_game_bytes)
        self.server_public_key = server_public_key
        self.key_pair = key_pair
        self.context = context or zmq.Context.instance()
        self.unconfirmed = OrderedDict()       # game id -> record bytes, oldest first
        self._sent_at = {}                     # game id -> monotonic time last sent
        self._ids = itertools.count(int.from_bytes(os.urandom(3), "little") << 20)
        self.confirmed = 0
        self.duplicates = 0                    # confirmations of games the recorder had already
        self.rejected = 0
        self.resent = 0
        self.reconnects = 0
        self.socket = None
        os.makedirs(self.outbox, exist_ok=True)
        self._remove_temporaries()
        self._connect()
        self.restored = self._load_outbox()
        if self.restored:
            log.info("resending %d unconfirmed game(s) left in %s", self.restored, self.outbox)

    # -- the sink interface -----------------------------------------------------------------------

    def add(self, record):
        """Keeps `record` (a GameRecord) in the outbox and sends it."""
        data = record.to_msgpack()
        if len(data) > self.max_game_bytes:
            self.rejected += 1
            log.error("game %s: %d bytes, over the recorder's limit of %d; dropped",
                      record.id, len(data), self.max_game_bytes)
            return
        path = os.path.join(self.outbox, record.id + SUFFIX)
        tmp = os.path.join(self.outbox, f".{record.id}.{uuid.uuid4().hex[:6]}.tmp")
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        self.unconfirmed[record.id] = data
        self._send(record.id)

    def full(self, headroom=0) -> bool:
        """True when `headroom` more games would take the unconfirmed ones past the bound."""
        return len(self.unconfirmed) + headroom > self.max_unconfirmed

    def poll(self, timeout_s=0.0):
        """Reads confirmations (waiting up to `timeout_s` for the first); resends after a
        timeout. Returns the number of games confirmed."""
        before = self.confirmed
        if self.socket.poll(max(0, int(timeout_s * 1000)), zmq.POLLIN):
            self._read_available()
        self._resend_overdue()
        return self.confirmed - before

    def flush(self, wait_s):
        """Waits up to `wait_s` for every game to be confirmed; True when none is left."""
        deadline = time.monotonic() + wait_s
        while self.unconfirmed and time.monotonic() < deadline:
            self.poll(min(0.1, max(0.0, deadline - time.monotonic())))
        return not self.unconfirmed

    def close(self):
        """Closes the socket; unconfirmed games stay in the outbox for the next start."""
        if self.socket is not None:
            self.socket.close(0)
            self.socket = None
        if self.unconfirmed:
            log.info("%d game(s) unconfirmed, kept in %s", len(self.unconfirmed), self.outbox)

    def stats(self) -> dict:
        return {"unconfirmed": len(self.unconfirmed), "confirmed": self.confirmed,
                "duplicates": self.duplicates, "rejected": self.rejected, "resent": self.resent,
                "reconnects": self.reconnects, "restored": self.restored}

    # -- wire -------------------------------------------------------------------------------------

    def _connect(self):
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SNDHWM, 0)       # the bound is max_unconfirmed, not the socket's
        socket.setsockopt(zmq.RCVHWM, 0)
        socket.setsockopt(zmq.MAXMSGSIZE, 1 << 16)
        if self.server_public_key:
            make_client(socket, self.server_public_key, self.key_pair)
        socket.connect(self.endpoint)
        self.socket = socket

    def _send(self, game_id):
        self._sent_at[game_id] = time.monotonic()
        try:                 # never blocks: a game not sent now is sent again after its timeout
            self.socket.send_multipart(messages.game_message(next(self._ids), game_id, self.worker_id,
                                                             self.unconfirmed[game_id]),
                                       zmq.NOBLOCK, copy=False)
        except zmq.Again:
            pass

    def _read_available(self):
        while True:
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                kind, _, header = messages.parse_game_reply(frames)
            except protocol.ProtocolError as err:
                log.warning("unreadable reply from the recorder: %s", err)
                continue
            if kind == "recorded":
                if self._forget(header["game"]):
                    self._log_confirmed(header["game"])
                    self.confirmed += 1
                    self.duplicates += bool(header.get("duplicate"))
                continue
            code, text = header.get("code"), str(header.get("msg", ""))[:300]
            match = re.match(r"game ([0-9a-f]{32}):", text)
            if code in REFUSED_FOR_GOOD and match and self._forget(match.group(1)):
                self.rejected += 1
                log.error("the recorder refused a game: %s; dropped", text)
            else:
                log.warning("the recorder answered %s: %s", code, text)

    def _forget(self, game_id) -> bool:
        if self.unconfirmed.pop(game_id, None) is None:
            return False
        self._sent_at.pop(game_id, None)
        try:
            os.unlink(os.path.join(self.outbox, game_id + SUFFIX))
        except FileNotFoundError:
            pass
        return True

    def _log_confirmed(self, game_id):
        path = os.path.join(self.outbox, CONFIRMED_LOG)
        try:
            with open(path, "a") as handle:
                handle.write(game_id + "\n")
                if handle.tell() > CONFIRMED_LOG_BYTES:
                    os.replace(path, path + ".1")
        except OSError as err:
            log.warning("cannot append to %s: %s", path, err)

    def _resend_overdue(self):
        if not self.unconfirmed:
            return
        # every resend sends all, later games are added at the end: the first was sent first
        oldest = self._sent_at[next(iter(self.unconfirmed))]
        if time.monotonic() - oldest < self.timeout_s:
            return
        self.reconnects += 1
        log.info("no confirmation from %s for %.0fs: reconnecting, sending %d game(s) again",
                 self.endpoint, self.timeout_s, len(self.unconfirmed))
        self.socket.close(0)
        self._connect()
        for game_id in self.unconfirmed:
            self.resent += 1
            self._send(game_id)

    # -- outbox -----------------------------------------------------------------------------------

    def _remove_temporaries(self):
        for name in os.listdir(self.outbox):
            if name.startswith(".") and name.endswith(".tmp"):
                try:
                    os.unlink(os.path.join(self.outbox, name))
                except FileNotFoundError:
                    pass

    def _load_outbox(self):
        names = sorted(os.listdir(self.outbox),
                       key=lambda n: _mtime(os.path.join(self.outbox, n)))
        loaded = 0
        for name in names:
            if not _NAME.fullmatch(name):
                continue
            path = os.path.join(self.outbox, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read(self.max_game_bytes + 1)
            except OSError as err:
                log.warning("cannot read %s: %s", path, err)
                continue
            if not 0 < len(data) <= self.max_game_bytes:
                log.warning("%s: %d bytes, not a game; left alone", path, len(data))
                continue
            self.unconfirmed[name[:-len(SUFFIX)]] = data
            loaded += 1
        for game_id in self.unconfirmed:
            self._send(game_id)
        return loaded


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
