"""The recorder (`fastgo recorder`): one ROUTER socket beside the trainer that takes finished
games from workers on other hosts and writes the same shards a local worker would.

A game is acknowledged ("recorded") only once it is in a shard that is closed, fsynced and
renamed, so a confirmed game survives kill -9 of the recorder; a game in the open shard when the
recorder dies was never confirmed and its worker sends it again. Games are checked with the shard
reader's record checks (moves legal, result and ownership equal to the replay) before they are
accepted; a bad one gets a bad_record error naming the problem. Resent games are dropped by id:
the ids of the recorder's own shards are read back at start (the newest `dedup_games`) and kept
while it runs. Shards close after selfplay.shard_games games or selfplay.shard_seconds.
"""
from __future__ import annotations

import logging
import os
import resource
import time
from collections import OrderedDict

import zmq

from recorder import messages
from rundata.config import ConfigError
from rundata.shards import (
    RotatingShards,
    ShardError,
    check_record,
    list_shards,
    read_shard,
    remove_stale_temporaries,
    unpack_record,
)
from wire import protocol
from wire.keys import CurveKeyError, make_server

log = logging.getLogger("fastgo.recorder")

PREFIX = "rec"
SHUTDOWN_LINGER_MS = 1000


class Recorder:
    """Recorder(config, run_dir, endpoint=None).serve_forever(); `stop()` from a signal handler
    ends it after the open shard is closed (its games confirmed)."""

    def __init__(self, config, run_dir, *, endpoint=None, status=None, context=None):
        rc = config.recorder
        self.config = config
        self.size = config.model.board_size
        self.komi = float(config.selfplay.komi)
        self.shard_games = config.selfplay.shard_games
        self.shard_seconds = config.selfplay.shard_seconds
        self.max_game_bytes = rc.max_game_bytes
        self.dedup_games = rc.dedup_games
        self.run_dir = run_dir
        self.shard_dir = run_dir.shards
        self.status = status
        self.prefix = f"{PREFIX}-{os.getpid()}"
        removed = remove_stale_temporaries(self.shard_dir, PREFIX)
        if removed:
            log.info("removed %d unfinished shard(s) of an earlier recorder", removed)
        self.recorded = OrderedDict()          # game id -> None, the newest dedup_games
        self._load_recorded_ids()
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, self.max_game_bytes + (64 << 10))
        self.allow = None
        endpoint = endpoint or rc.endpoint
        try:
            if rc.curve_secret_key_file:
                try:
                    self.allow = make_server(self.socket, rc.curve_secret_key_file,
                                             rc.curve_allowed, what="recorder")
                except CurveKeyError as err:
                    raise ConfigError(f"recorder.curve_secret_key_file / curve_allowed: {err}") from None
            try:
                self.socket.bind(endpoint)
            except zmq.ZMQError as err:
                raise ConfigError(f"recorder.endpoint: cannot bind {endpoint}: {err}") from None
        except BaseException:
            self.socket.close(0)
            raise
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.out = RotatingShards(self.shard_dir, prefix=self.prefix, size=self.size,
                                     komi=self.komi, worker=0, max_games=self.shard_games,
                                     max_seconds=self.shard_seconds)
        self.pending = {}                      # game id in the open shard -> [(identity, request id)]
        self._stop = False
        self.started = time.monotonic()
        self.games = 0                         # games written into closed shards by this process
        self.duplicates = 0
        self.refused = 0
        self.messages = 0

    # -- dedup ------------------------------------------------------------------------------------

    def _load_recorded_ids(self):
        """The ids in this recorder's earlier shards (names '*-rec-*'), newest shards first,
        at most dedup_games of them."""
        names = [n for n in list_shards(self.shard_dir) if f"-{PREFIX}-" in n]
        ids = []
        for name in reversed(names):
            if len(ids) >= self.dedup_games:
                break
            try:
                shard = read_shard(os.path.join(self.shard_dir, name), check_rules=False)
            except ShardError as err:
                log.warning("cannot read %s for its game ids: %s", name, err)
                continue
            ids.extend(reversed([g.id for g in shard.games]))
        for game_id in reversed(ids[:self.dedup_games]):
            self.recorded[game_id] = None
        if names:
            log.info("%d game ids known from %d earlier shard(s)", len(self.recorded), len(names))

    def _remember(self, game_id):
        self.recorded[game_id] = None
        while len(self.recorded) > self.dedup_games:
            self.recorded.popitem(last=False)

    # -- loop ---------------------------------------------------------------------------------------

    def stop(self, *_):
        self._stop = True

    @property
    def stop_requested(self) -> bool:
        """Whether stop() was called (a signal): a wait for disk space ends then."""
        return self._stop

    def serve_forever(self):
        try:
            while not self._stop:
                if self.socket.poll(self._poll_timeout_ms(), zmq.POLLIN):
                    for _ in range(1000):
                        try:
                            frames = self.socket.recv_multipart(zmq.NOBLOCK, copy=False)
                        except zmq.Again:
                            break
                        self._handle(frames)
                        if self._stop:
                            break
                self._maybe_close()
                if self.status is not None:
                    self.status.beat(self.stats)
        finally:
            self.close()

    def _poll_timeout_ms(self):
        left = self.out.seconds_left()
        if left is None:
            return 100
        return max(0, min(100, int(left * 1000) + 1))

    def _handle(self, frames):
        self.messages += 1
        if len(frames) < 2:
            return
        identity = frames[0].bytes
        request_id = protocol.NO_ID
        try:
            request_id, game_id, worker, record = messages.parse_game_message(
                frames[1:], self.max_game_bytes)
            if game_id in self.recorded:
                self.duplicates += 1
                self._send(identity, messages.recorded_reply(request_id, game_id, duplicate=True))
                return
            waiters = self.pending.get(game_id)
            if waiters is not None:            # resent while its shard is open: answered at close
                self.duplicates += 1
                if len(waiters) < 16:
                    waiters.append((identity, request_id))
                return
            game = self._check(record, game_id)
            self.out.add(game)
            self.pending[game_id] = [(identity, request_id)]
            if self.out.due():                 # shard_games (at most MAX_SHARD_GAMES) or time
                self.close_shard()
        except protocol.ProtocolError as err:
            self.refused += 1
            if self.refused <= 20 or self.refused % 1000 == 0:
                log.warning("refused a game message (%d so far): %s", self.refused, err)
            self._send(identity, protocol.error_reply(err.request_id if err.request_id != protocol.NO_ID
                                                      else request_id, err.code, err.message))

    def _check(self, record, game_id):
        """The GameRecord in `record` (msgpack bytes) after the shard reader's checks."""
        def bad(text):
            return protocol.ProtocolError(messages.BAD_RECORD, f"game {game_id}: {text}")

        try:
            data = unpack_record(record)       # bounded: containers, lengths, nesting
        except ValueError as err:
            raise bad(str(err)) from None
        try:
            game = check_record(data, size=self.size, komi=self.komi, allow_recorded=False)
        except ShardError as err:
            raise bad(str(err)) from None
        except (ValueError, TypeError, OverflowError) as err:
            raise bad(f"{type(err).__name__}: {err}") from None
        if game.id != game_id:
            raise bad(f"the record's id {game.id} differs from the message's")
        return game

    def _maybe_close(self):
        if self.out.due():
            self.close_shard()

    def close_shard(self):
        """Seals the open shard under its final name, then confirms its games."""
        closed = self.out.close()
        if closed is None:
            return
        path, count = closed
        self.games += count
        pending, self.pending = self.pending, {}
        for game_id, waiters in pending.items():
            self._remember(game_id)
            for identity, request_id in waiters:
                self._send(identity, messages.recorded_reply(request_id, game_id))
        log.info("shard closed: %s games=%d", os.path.basename(path), count)

    def _send(self, identity, frames):
        try:
            self.socket.send_multipart([identity, *frames], zmq.NOBLOCK)
        except zmq.ZMQError as err:            # peer gone or HWM: it sends the game again
            log.debug("reply dropped: %s", err)

    def close(self):
        if self.socket.closed:
            return
        self.close_shard()
        if self.status is not None:
            self.status.beat(self.stats, force=True)
        self.socket.close(SHUTDOWN_LINGER_MS)

    def stats(self) -> dict:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime
        return {
            "pid": os.getpid(), "endpoint": self.endpoint,
            "seconds": time.monotonic() - self.started, "games": self.games,
            "duplicates": self.duplicates, "refused": self.refused, "shards": self.out.shards_closed,
            "open_games": len(self.pending), "known_ids": len(self.recorded),
            "messages": self.messages, "denied": self.allow.denied if self.allow else 0,
            "cpu_s": cpu, "cpu_s_per_game": cpu / self.games if self.games else None,
        }
