"""The recorder and the worker's remote sink as real processes on loopback: a game a worker saw
confirmed survives kill -9 of the recorder, a worker killed with -9 and started again sends
what was unconfirmed, no game is recorded twice, a bad record is refused while the recorder
goes on serving, and a recorder that never answers pauses the worker at its bound until it
comes up and everything drains."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from rundata.shards import GameRecord


@pytest.fixture(scope="module")
def server(tmp_path_factory, write_tiny_config, start_server):
    tmp = tmp_path_factory.mktemp("server")
    config = write_tiny_config(tmp / "server.toml", size=5, endpoint="tcp://127.0.0.1:5555")
    proc = start_server(config, tmp / "server.log")
    try:
        yield proc.endpoint
    finally:
        proc.stop()


def worker_stats(log_path):
    with open(log_path) as handle:
        lines = [line for line in handle if line.startswith("fastgo selfplay: stats ")]
    assert lines, open(log_path).read()[-2000:]
    return json.loads(lines[-1].split("stats ", 1)[1])


@pytest.fixture
def start_worker(fastgo):
    """start_worker(config, run_dir, server, log_path, *extra) -> a `fastgo selfplay` process."""
    def start(config, run_dir, server, log_path, *extra):
        return fastgo("selfplay", "--config", config, "--run-dir", run_dir, "--server", server,
                      "--quiet", *extra, log_path=log_path)
    return start


def test_confirmed_games_survive_kill9_of_recorder_and_worker(
        tmp_path, server, free_endpoint, recorder_config, start_recorder, start_worker, wait_for,
        stop, confirmed_ids, outbox_ids, shard_ids):
    recorder_endpoint = free_endpoint()
    config = recorder_config(tmp_path / "c.toml", server, recorder_endpoint, shard_seconds=0.7)
    rec_dir, work_dir = tmp_path / "rec", tmp_path / "work"
    recorder = start_recorder(config, rec_dir, tmp_path / "rec.log")
    worker = start_worker(config, work_dir, server, tmp_path / "w.log")
    procs = [recorder, worker]
    try:
        # kill -9 of the recorder while games stream in: what was confirmed is in shards
        wait_for(lambda: len(confirmed_ids(work_dir)) >= 8, 30, what="8 confirmed games")
        recorder.send_signal(signal.SIGKILL)
        recorder.wait(10)
        seen = confirmed_ids(work_dir)
        recorded = shard_ids(rec_dir / "shards")
        assert seen <= set(recorded), "a confirmed game is missing after kill -9"
        recorder = start_recorder(config, rec_dir, tmp_path / "rec.log")
        procs.append(recorder)
        # kill -9 of the worker while it holds unconfirmed games; a restart sends them
        wait_for(lambda: len(confirmed_ids(work_dir)) >= len(seen) + 8 and outbox_ids(work_dir),
                 30, what="new confirmations and an unconfirmed game")
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        left = outbox_ids(work_dir)
        assert left, "the worker held no unconfirmed game when killed"
        worker = start_worker(config, work_dir, server, tmp_path / "w2.log", "--max-games", "8")
        procs.append(worker)
        wait_for(lambda: worker.poll() is not None, 40, what="the restarted worker to finish")
        assert worker.returncode == 0
        wait_for(lambda: not outbox_ids(work_dir), 20, what="the outbox to drain")
        recorded = shard_ids(rec_dir / "shards")
        assert len(recorded) == len(set(recorded)), "a game was recorded twice"
        assert left <= set(recorded), "games unconfirmed at kill -9 of the worker were lost"
        assert confirmed_ids(work_dir) <= set(recorded)
        stats = worker_stats(tmp_path / "w2.log")
        assert stats["restored"] == len(left) and stats["games"] == 8
    finally:
        for proc in procs:
            stop(proc)


def test_a_silent_recorder_pauses_the_worker_at_its_bound(
        tmp_path, server, free_endpoint, recorder_config, start_recorder, start_worker, wait_for,
        stop, outbox_ids, shard_ids):
    recorder_endpoint = free_endpoint()
    bound = 16                                  # games = 8: pauses once more than 8 are held
    config = recorder_config(tmp_path / "c.toml", server, recorder_endpoint, shard_seconds=0.3,
                             max_unconfirmed=bound, timeout_s=1.0)
    rec_dir, work_dir = tmp_path / "rec", tmp_path / "work"
    status = work_dir / "logs" / "selfplay-w0.status.json"

    def read_status():
        try:
            return json.loads(status.read_text())
        except (OSError, ValueError):
            return None

    worker = start_worker(config, work_dir, server, tmp_path / "w.log")
    procs = [worker]
    try:
        paused = wait_for(lambda: (s := read_status()) and s.get("pauses", 0) >= 1 and s, 30,
                          what="the worker to pause")
        held = len(outbox_ids(work_dir))
        assert bound - 8 < held <= bound and paused["unconfirmed"] == held
        # paused: further heartbeats show no new game
        mtime = status.stat().st_mtime_ns
        wait_for(lambda: status.stat().st_mtime_ns != mtime, 10, what="a heartbeat")
        again = read_status()
        assert again["games"] == paused["games"] == held and again["unconfirmed"] == held
        recorder = start_recorder(config, rec_dir, tmp_path / "rec.log")
        procs.append(recorder)
        wait_for(lambda: len(shard_ids(rec_dir / "shards")) >= held + 8, 30,
                 what="the held games recorded and play resumed")
        stop(worker)
        wait_for(lambda: not outbox_ids(work_dir), 1, what="an empty outbox")
        stats = worker_stats(tmp_path / "w.log")
        recorded = shard_ids(rec_dir / "shards")
        assert len(recorded) == len(set(recorded)) == stats["games"]
        assert stats["pauses"] >= 1 and stats["unconfirmed"] <= bound
    finally:
        for proc in procs:
            stop(proc)


def test_a_bad_record_is_refused_and_the_recorder_goes_on(tmp_path, free_endpoint, recorder_config,
                                                          start_recorder, stop, shard_ids):
    import numpy as np
    import zmq

    from recorder import messages
    from recorder.sink import RemoteSink

    endpoint = free_endpoint()
    config = recorder_config(tmp_path / "c.toml", "tcp://127.0.0.1:5555", endpoint, shard_seconds=0.2)
    recorder = start_recorder(config, tmp_path / "rec", tmp_path / "rec.log")
    socket = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    try:
        nn = 25
        # Black and White pass: over, empty board, White wins by komi 0.5
        good = GameRecord(size=5, komi=0.5, moves=np.array([nn, nn], np.int16),
                          full=np.zeros(2, np.uint8), root_value=np.zeros(2, np.float32),
                          policy_count=np.zeros(2, np.uint16), policy_moves=np.zeros(0, np.int16),
                          policy_visits=np.zeros(0, np.float32), winner=-1, score=-0.5,
                          end="passes", ownership=np.zeros(nn, np.int8), versions=[0],
                          id="a" * 32)
        bad = GameRecord(**{**good.__dict__, "winner": 1, "id": "b" * 32})   # wrong result
        socket.send_multipart(messages.game_message(1, "b" * 32, 0, bad.to_msgpack()))
        socket.send_multipart(messages.game_message(2, "c" * 32, 0, b"\xc1garbage"))
        socket.send_multipart(messages.game_message(3, "a" * 32, 0, good.to_msgpack()))
        socket.send_multipart(messages.game_message(4, "a" * 32, 0, good.to_msgpack()))
        replies = {}
        while len(replies) < 4:
            assert socket.poll(10_000), f"no reply; have {replies}"
            kind, request_id, header = messages.parse_game_reply(socket.recv_multipart())
            replies.setdefault(request_id, []).append((kind, header))
        assert replies[1][0][0] == "error" and replies[1][0][1]["code"] == messages.BAD_RECORD
        assert "disagree" in replies[1][0][1]["msg"]
        assert replies[2][0][0] == "error" and "undecodable" in replies[2][0][1]["msg"]
        assert [k for k, _ in replies[3]] == ["recorded"] and [k for k, _ in replies[4]] == ["recorded"]
        assert shard_ids(tmp_path / "rec" / "shards") == ["a" * 32]
        # a game sent again later is confirmed as a duplicate and not written again
        socket.send_multipart(messages.game_message(5, "a" * 32, 0, good.to_msgpack()))
        assert socket.poll(10_000)
        kind, _, header = messages.parse_game_reply(socket.recv_multipart())
        assert kind == "recorded" and header["duplicate"] is True
        # the sink sends the same game from its outbox; the recorder confirms without a copy
        sink = RemoteSink(endpoint, outbox=tmp_path / "outbox", timeout_s=5.0)
        try:
            sink.add(good)
            assert sink.flush(10.0) and sink.duplicates == 1
        finally:
            sink.close()
        assert shard_ids(tmp_path / "rec" / "shards") == ["a" * 32]
        # started again, the recorder knows the ids of its shards: still no second copy
        assert stop(recorder) == 0
        recorder = start_recorder(config, tmp_path / "rec", tmp_path / "rec.log")
        socket.send_multipart(messages.game_message(6, "a" * 32, 0, good.to_msgpack()))
        assert socket.poll(10_000)
        kind, request_id, header = messages.parse_game_reply(socket.recv_multipart())
        assert (kind, request_id, header["duplicate"]) == ("recorded", 6, True)
        assert shard_ids(tmp_path / "rec" / "shards") == ["a" * 32]
    finally:
        socket.close(0)
        assert stop(recorder) == 0


def test_recorder_refuses_a_remote_bind_without_keys_in_one_line(tmp_path, free_endpoint,
                                                                 recorder_config):
    config = recorder_config(tmp_path / "c.toml", "tcp://127.0.0.1:5555", free_endpoint(),
                             shard_seconds=1)
    for bind, words in (("tcp://0.0.0.0:5999", "curve_secret_key_file"),
                        ("tcp://127.0.0.1:99999", "not in 1..65535")):
        result = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "recorder", "--config",
                                 config, "--run-dir", str(tmp_path / "rec"), "--bind", bind],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and words in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
