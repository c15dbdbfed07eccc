"""The interfaces the self-play workers meet, as typing.Protocols: where finished games go (a
game sink) and the inference client of the policy-only worker. The evaluator the search worker
takes is network.batch_evaluator.BatchEvaluator."""
from __future__ import annotations

from collections.abc import Sized
from typing import Protocol

import numpy as np

from rundata.shards import GameRecord


class GameSink(Protocol):
    """Takes finished games and keeps each until its receiver confirms it
    (recorder.sink.RemoteSink sends them to a recorder). Not thread-safe.

    The worker holds back new work while full(headroom=G) is true, G being its games at once,
    so that at most max_unconfirmed games are ever held."""

    max_unconfirmed: int           # the bound on games added and not yet confirmed
    unconfirmed: Sized             # the games added and not yet confirmed

    def add(self, record: GameRecord) -> None:
        """Keeps `record` until it is confirmed, and sends it."""

    def full(self, headroom: int = 0) -> bool:
        """True when `headroom` more games would take the unconfirmed ones past the bound."""

    def poll(self, timeout_s: float = 0.0) -> int:
        """Reads confirmations, waiting up to `timeout_s` seconds for the first; returns how many
        games were confirmed."""

    def flush(self, wait_s: float) -> bool:
        """Waits up to `wait_s` seconds for every game to be confirmed; True when none is left."""

    def close(self) -> None:
        """Releases the connection; unconfirmed games are kept for the next start."""

    def stats(self) -> dict:
        """JSON-able counters, `unconfirmed` among them."""


class PolicyClient(Protocol):
    """The inference client of the policy-only worker: batches to named model slots
    (wire.client.InferenceClient).

    planes: np.uint8 [B, P, N, N], unchanged until its receive returns; receive gives
    (logits np.float32 [B, N*N + 1], values np.float32 [B]) and sets model_version to the
    version of the slot's model that answered."""

    model_version: int | None

    def submit(self, planes: np.ndarray, slot: str | None = None) -> int:
        """Sends a batch to `slot` (None: the client's default slot); returns its ticket."""

    def receive(self, ticket: int) -> tuple[np.ndarray, np.ndarray]:
        """The reply to `ticket`; raises wire.client.ServerError on an error reply."""

    def reload(self, slot: str, path: str = "", *, data: bytes | None = None) -> int:
        """Loads checkpoint bytes `data` into `slot`; returns the version now served there."""
