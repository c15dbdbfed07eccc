"""The REINFORCE loss on a hand-built mini-batch against the formula computed position by
position from fastgo.board's own feature encoder and rules: sign, baseline, only the learner's
moves, pi the softmax over the acceptable moves (the ones the workers could sample)."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from fastgo.board import Board
from network.model import build_model
from rundata.config import ModelConfig
from trainer.reinforce import learner_batch, reinforce_step
from trainer.window import block_from_games

SIZE, KOMI = 5, 0.5


def tiny_model(seed=0):
    config = ModelConfig(board_size=SIZE, blocks=1, channels=8, value_hidden=8)
    return config, build_model(config, seed=seed)


@pytest.fixture
def hand_batch(game_record, random_moves):
    """hand_batch() -> four seeded 5x5 games; the learner is Black, White, Black, both."""
    def games():
        rng = np.random.default_rng(11)
        return [game_record(SIZE, KOMI, random_moves(SIZE, KOMI, rng, length=length), learner)
                for length, learner in ((7, 1), (10, -1), (4, 1), (6, 0))]
    return games


@pytest.fixture
def by_hand(rule_mask):
    """by_hand(model, games, baseline, value_weight, floor=0.0, mask_weight=0.0, train=True) ->
    (loss, policy, value, positions): see _by_hand; baseline "mean": b is the learner's mean
    result over the games where the learner played one colour."""
    def loss(model, games, baseline, value_weight, floor=0.0, mask_weight=0.0, train=True):
        mean = 0.0
        if baseline == "mean":
            results = [(1 if g.full[0] else -1) * g.winner for g in games if not g.full.all()]
            mean = sum(results) / len(results)
        return _by_hand(model, games, baseline, value_weight, floor, mask_weight, mean, train,
                        rule_mask)
    return loss


def _by_hand(model, games, baseline, value_weight, floor, mask_weight, mean, train, rule_mask):
    """The loss as the formula says, in float64 (log pi clipped below at log(floor) when
    floor > 0), the positions and masks built one at a time from fastgo.board. pi is the
    softmax over the moves the sampler accepts (legal, not the mover's own eye, pass only when
    nothing else is) plus the move played: these random games pass at the end while board moves
    remain, a move the sampler draws only as its superko fallback; the learner's batch adds the
    played move to its row the same way. (Before the mask, this was log_softmax over all N*N+1
    logits.) The network sees all the learner's positions in one forward in training mode
    (BatchNorm on the batch's statistics, as the update evaluates it), on a copy, so the
    model's running statistics are not touched."""
    rows = []
    for game in games:
        board = Board(SIZE, KOMI)
        for t, move in enumerate(game.moves.tolist()):
            mover = 1 if t % 2 == 0 else -1
            if game.full[t] == 1:
                allowed = torch.from_numpy(rule_mask(board, False) == 1)
                allowed[move] = True
                rows.append((board.features("alphazero").astype(np.float32), move, allowed,
                             float(mover * game.winner)))
            board.play(move)
    net = copy.deepcopy(model).train(train)
    with torch.no_grad():
        logits, v = net(torch.from_numpy(np.stack([r[0] for r in rows])))
    policy, value_sum, off_mask = 0.0, 0.0, 0.0
    for i, (_, move, allowed, z) in enumerate(rows):
        masked = logits.double()[i].masked_fill(~allowed, float("-inf"))
        log_p = float(torch.log_softmax(masked, 0)[move])
        off_mask -= math.log(float(torch.softmax(logits.double()[i], 0)[allowed].sum()))
        if floor > 0:
            log_p = max(log_p, math.log(floor))
        b = float(v[i]) if baseline == "value" else mean
        policy += -log_p * (z - b)
        value_sum += (float(v[i]) - z) ** 2
    policy /= len(games)
    value = value_sum / len(rows) if baseline == "value" else 0.0
    return policy + value_weight * value + mask_weight * off_mask / len(games), policy, value, len(rows)


@pytest.mark.parametrize("baseline,floor", [("zero", 0.0), ("value", 0.0), ("value", 0.039),
                                            ("mean", 0.0)])
def test_loss_equals_the_formula(baseline, floor, hand_batch, by_hand):
    config, model = tiny_model()
    games = hand_batch()
    assert {g.winner for g in games} >= {1, -1}, "the batch should hold wins of both colours"
    expected, policy, value, positions = by_hand(model, games, baseline, 0.7, floor, 0.4)
    if baseline == "mean":          # the mean is not 0 here: another loss than "zero"
        assert not math.isclose(policy, by_hand(model, games, "zero", 0.7)[1], rel_tol=1e-4)
    if floor:       # the clip is active for some positions and not for others
        unclipped = by_hand(model, games, baseline, 0.7)[1]
        assert not math.isclose(policy, unclipped, rel_tol=1e-4)
    batch = learner_batch(block_from_games(games, SIZE, "hand"), SIZE, KOMI, "alphazero", config.planes)
    assert len(batch.action) == positions
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    terms = reinforce_step(model, optimizer, batch, baseline=baseline, value_weight=0.7,
                           floor=floor, mask_weight=0.4, chunk=positions)
    assert math.isclose(terms["policy_loss"], policy, rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(terms["value_loss"], value, rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(terms["loss"], expected, rel_tol=1e-5, abs_tol=1e-6)
    # The learner's result per game: its colour's outcome; both colours -> nan.
    for g, game in enumerate(games):
        learner = 1 if game.full[0] else -1
        if game.full.all():
            assert math.isnan(batch.learner_result[g])
        else:
            assert batch.learner_result[g] == learner * game.winner


def test_opponent_moves_contribute_nothing(hand_batch, by_hand, game_record):
    config, model = tiny_model()
    games = hand_batch()[:2]
    base = learner_batch(block_from_games(games, SIZE, "a"), SIZE, KOMI, "alphazero", config.planes)
    # The same games with every move marked as the learner's: more positions, another loss.
    both = [game_record(SIZE, KOMI, g.moves, 0) for g in games]
    more = learner_batch(block_from_games(both, SIZE, "b"), SIZE, KOMI, "alphazero", config.planes)
    assert len(more.action) == sum(len(g.moves) for g in games)
    assert len(base.action) == sum(int(g.full.sum()) for g in games)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    a = reinforce_step(model, optimizer, base, baseline="zero", value_weight=1.0)
    b = reinforce_step(model, optimizer, more, baseline="zero", value_weight=1.0)
    assert not math.isclose(a["loss"], b["loss"], rel_tol=1e-4)
    assert math.isclose(a["loss"], by_hand(model, games, "zero", 1.0)[0], rel_tol=1e-5)


def test_sign_more_probability_for_won_moves_less_for_lost(hand_batch, by_hand):
    config, model = tiny_model(seed=4)
    games = hand_batch()
    won = [g for g in games if not g.full.all() and (1 if g.full[0] else -1) * g.winner == 1]
    lost = [g for g in games if not g.full.all() and (1 if g.full[0] else -1) * g.winner == -1]
    assert won and lost
    for chosen, direction in ((won[:1], 1), (lost[:1], -1)):
        _, model = tiny_model(seed=4)
        batch = learner_batch(block_from_games(chosen, SIZE, "s"), SIZE, KOMI, "alphazero",
                              config.planes)
        before = -by_hand(model, chosen, "zero", 0.0)[1]     # = sum z * log p
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        reinforce_step(model, optimizer, batch, baseline="zero", value_weight=0.0)
        after = -by_hand(model, chosen, "zero", 0.0)[1]
        # z * log p rises: won moves gain probability, lost ones lose it.
        assert after > before, (direction, before, after)


def test_value_baseline_trains_the_value_head_toward_the_result(hand_batch):
    config, model = tiny_model(seed=2)
    games = hand_batch()
    batch = learner_batch(block_from_games(games, SIZE, "v"), SIZE, KOMI, "alphazero", config.planes)
    # baseline "zero": the value head gets no gradient at all.
    head = [p for name, p in model.named_parameters() if name.startswith("value_fc")]
    before = [p.detach().clone() for p in head]
    reinforce_step(model, torch.optim.SGD(model.parameters(), lr=0.1), batch, baseline="zero",
                   value_weight=1.0)
    assert all(torch.equal(a, p) for a, p in zip(before, head))
    # baseline "value": the value head fits the results of the same positions.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    first = reinforce_step(model, optimizer, batch, baseline="value", value_weight=1.0)
    for _ in range(30):
        last = reinforce_step(model, optimizer, batch, baseline="value", value_weight=1.0)
    assert last["value_loss"] < first["value_loss"] - 0.05


def test_kl_of_the_update_equals_the_two_networks_compared_by_hand(hand_batch):
    config, model = tiny_model(seed=3)
    games = hand_batch()
    batch = learner_batch(block_from_games(games, SIZE, "k"), SIZE, KOMI, "alphazero", config.planes)
    before = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    terms = reinforce_step(model, optimizer, batch, baseline="zero", value_weight=0.0, chunk=8)
    bounds = np.linspace(0, len(batch.action), -(-len(batch.action) // 8) + 1).round().astype(int)
    rows = int(bounds[1])                         # the first chunk: 8 or fewer, equal chunks
    assert len(bounds) > 2 and rows <= 8
    x = torch.from_numpy(batch.planes[:rows]).float()
    allowed = torch.from_numpy(batch.mask[:rows])
    kl = 0.0
    with torch.no_grad():
        p = torch.log_softmax(copy.deepcopy(before).train()(x)[0].double(), 1)
        q = torch.log_softmax(copy.deepcopy(model).train()(x)[0].double(), 1)
    for i in range(rows):
        a = p[i][allowed[i]] - torch.logsumexp(p[i][allowed[i]], 0)
        b = q[i][allowed[i]] - torch.logsumexp(q[i][allowed[i]], 0)
        kl += float((a.exp() * (a - b)).sum())
    assert kl / rows > 1e-4
    assert math.isclose(terms["kl"], kl / rows, rel_tol=1e-3, abs_tol=1e-7)
    # The probe forward leaves no trace in the running statistics: they are those of the
    # update's own chunk forwards (made with the weights before the step).
    replay = copy.deepcopy(before).train()
    with torch.no_grad():
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            replay(torch.from_numpy(batch.planes[lo:hi]).float())
    for (name, mine), theirs in zip(model.named_buffers(), replay.buffers()):
        assert torch.allclose(mine.float(), theirs.float(), rtol=1e-6, atol=1e-7), name
    assert any(not torch.equal(a, b) for a, b in zip(before.buffers(), model.buffers()))


def test_adapt_lr_follows_the_kl_target_within_its_bounds():
    from trainer.reinforce import adapt_lr
    assert adapt_lr(1e-3, 0.5, 0.0, 2e-3, 1e-6) == 2e-3                 # off: the ceiling
    assert math.isclose(adapt_lr(1e-3, 0.04, 0.01, 1e-3, 1e-6), 5e-4)  # sqrt(0.01 / 0.04)
    assert math.isclose(adapt_lr(1e-3, 100.0, 0.01, 1e-3, 1e-6), 1e-4)  # at most / 10
    assert adapt_lr(1e-3, 0.015, 0.01, 1e-3, 1e-6) == 1e-3               # inside the band
    assert math.isclose(adapt_lr(1e-4, 0.001, 0.01, 1e-3, 1e-6), 1.5e-4)
    assert adapt_lr(9e-4, 0.0, 0.01, 1e-3, 1e-6) == 1e-3                 # the ceiling
    assert adapt_lr(1.5e-6, 9.0, 0.01, 1e-3, 1e-6) == 1e-6               # the floor


def test_recalibrate_takes_the_served_gradient_then_refits_the_running_statistics(hand_batch,
                                                                                   by_hand):
    """batchnorm = "recalibrate": the loss is the served network's (running statistics), and
    after the step each BatchNorm's running mean and variance are the average over the update's
    chunks of each chunk's mean and (unbiased) variance under the new weights (here the first
    BatchNorm's, computed by hand)."""
    config, model = tiny_model(seed=5)
    games = hand_batch()
    batch = learner_batch(block_from_games(games, SIZE, "r"), SIZE, KOMI, "alphazero", config.planes)
    expected = by_hand(model, games, "value", 0.7, 0.0, 0.4, train=False)[0]
    assert not math.isclose(expected, by_hand(model, games, "value", 0.7, 0.0, 0.4)[0], rel_tol=1e-3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    terms = reinforce_step(model, optimizer, batch, baseline="value", value_weight=0.7,
                           mask_weight=0.4, chunk=7, batchnorm="recalibrate")
    assert math.isclose(terms["loss"], expected, rel_tol=1e-5, abs_tol=1e-6)
    count = len(batch.action)
    bounds = np.linspace(0, count, -(-count // 7) + 1).round().astype(int)
    means, variances = [], []
    with torch.no_grad():
        for lo, hi in zip(bounds[:-1], bounds[1:]):     # the stem conv under the new weights
            h = model.stem(torch.from_numpy(batch.planes[lo:hi]).float())
            means.append(h.mean(dim=(0, 2, 3)))
            variances.append(h.transpose(0, 1).reshape(h.shape[1], -1).var(dim=1, unbiased=True))
    mean, var = torch.stack(means).mean(0), torch.stack(variances).mean(0)
    assert torch.allclose(model.stem_bn.running_mean, mean, rtol=1e-4, atol=1e-5)
    assert torch.allclose(model.stem_bn.running_var, var, rtol=1e-3, atol=1e-5)
    assert not model.training and terms["kl"] > 0
    with pytest.raises(ValueError, match="batchnorm"):
        reinforce_step(model, optimizer, batch, baseline="zero", value_weight=0.0,
                       batchnorm="frozen")
