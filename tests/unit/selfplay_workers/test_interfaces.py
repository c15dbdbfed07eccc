"""The implementations meet the interfaces the workers are written against
(selfplay_workers.interfaces): every member a Protocol names exists, and its methods take the
parameters the Protocol gives them."""
from __future__ import annotations

import inspect

import pytest

from selfplay_workers.interfaces import GameSink, PolicyClient


def _members(protocol):
    """(methods, attributes) a Protocol declares."""
    methods = {name for name, value in vars(protocol).items()
               if inspect.isfunction(value) and not name.startswith("_")}
    attributes = set(getattr(protocol, "__annotations__", {}))
    return methods, attributes


def _check(protocol, implementation):
    methods, attributes = _members(protocol)
    assert methods and attributes
    for name in sorted(methods):
        method = getattr(implementation, name, None)
        assert callable(method), f"{type(implementation).__name__} has no {name}()"
        wanted = list(inspect.signature(getattr(protocol, name)).parameters)[1:]
        offered = inspect.signature(method).parameters
        assert set(wanted) <= set(offered), f"{name}{tuple(wanted)} vs {tuple(offered)}"
    for name in sorted(attributes):
        assert hasattr(implementation, name), f"{type(implementation).__name__} has no {name}"


def test_remote_sink_is_a_game_sink(tmp_path):
    from recorder.sink import RemoteSink

    # nothing listens there: a DEALER connects lazily, and nothing is sent
    sink = RemoteSink("tcp://127.0.0.1:9", outbox=tmp_path / "outbox", max_unconfirmed=7)
    try:
        _check(GameSink, sink)
        assert sink.max_unconfirmed == 7 and len(sink.unconfirmed) == 0
        assert not sink.full(headroom=7) and sink.full(headroom=8)   # 0 + 8 > 7
        assert sink.stats()["unconfirmed"] == 0
    finally:
        sink.close()


def test_the_inference_client_is_a_policy_client():
    from wire.client import InferenceClient

    # nothing listens there: a DEALER connects lazily, and nothing is sent
    client = InferenceClient("tcp://127.0.0.1:9", timeout_s=1.0, retries=0)
    try:
        _check(PolicyClient, client)
        assert client.model_version is None                # no reply received yet
    finally:
        client.close()


@pytest.mark.parametrize("protocol", [GameSink, PolicyClient])
def test_the_protocols_name_their_members(protocol):
    methods, attributes = _members(protocol)
    assert {"add", "full", "poll", "close"} <= methods or {"submit", "receive"} <= methods
    assert attributes
