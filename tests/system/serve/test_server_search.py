"""The worker's pattern end to end: the batched search (fastgo.mcts) collects leaves into two
alternating buffers and keeps two batches in flight through a real server process."""
from collections import deque

import numpy as np
import torch

import fastgo.mcts as mcts  # every build has it: a broken one fails here, never skips
from fastgo.search_settings import SearchSettings
from network.batch_evaluator import InProcessEvaluator
from network.checkpoint import save_checkpoint
from network.model import build_model
from rundata.config import ModelConfig
from supervision.role_process import ServerProcess
from wire.client import InferenceClient

torch.set_num_threads(1)
GAMES, VISITS = 6, 24


def search_two_in_flight(evaluator):
    """Run one search over GAMES games with submit/receive; returns the positions evaluated."""
    search = mcts.BatchedSearch(games=GAMES, size=9, seed=3,
                                settings=SearchSettings(noise_weight=0.0))
    search.start(VISITS)
    buffers = [np.zeros((GAMES, 17, 9, 9), np.uint8) for _ in range(2)]
    flight, batches, positions = deque(), 0, 0
    while not search.done:
        if search.in_flight < 2:
            count = search.collect(buffers[batches % 2])
            if count:
                flight.append(evaluator.submit(buffers[batches % 2][:count]))
                batches += 1
                positions += count
                continue
        if not flight:
            break
        search.apply(*evaluator.receive(flight.popleft()))
    assert search.done and not flight
    for game in range(GAMES):
        assert search.root_visits(game).sum() >= VISITS
    return positions


def test_search_through_the_server(tmp_path, write_config):
    config = ModelConfig(board_size=9, blocks=1, channels=8)
    model = build_model(config, seed=4)
    save_checkpoint(tmp_path / "m.ckpt", model, step=3)
    path = write_config(tmp_path / "s.toml", {"blocks": 1, "channels": 8}, {
        "endpoint": "tcp://127.0.0.1:*", "threads": 1, "device": "cpu", "max_batch": 16,
        "checkpoints": {"current": str(tmp_path / "m.ckpt")}})
    with ServerProcess(path) as server, InferenceClient(server.endpoint, timeout_s=20) as client:
        positions = search_two_in_flight(client)
        stats = client.stats()
    assert client.model_version == 3
    assert stats["positions"] == positions and stats["errors_total"] == 0
    assert search_two_in_flight(InProcessEvaluator(model)) > 0     # the same loop in one process
