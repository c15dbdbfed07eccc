"""The REINFORCE policy gradient is over the moves the workers could sample: the kernel's
acceptable-move masks against the sampler's own distribution and the board's rules in Python,
the masked loss against the formula by hand, exactly zero policy gradient on masked logits, and
the mask term (-log P(acceptable)) pushing only those logits down."""
from __future__ import annotations

import math

import numpy as np
import torch

from fastgo.board import Board
from fastgo.game import Game
from fastgo.policy_play import acceptable_masks, distribution
from network.model import build_model
from rundata.config import ModelConfig
from trainer.reinforce import learner_batch, reinforce_loss
from trainer.window import block_from_games


def eyeish_game(size, komi, rng):
    """A legal game (positional superko) that forms eyes: mostly moves that do not fill the
    mover's own eye, sometimes any legal move (eye fills included) or a pass; when nothing but
    eye fills is left, a pass. Ends at two passes or the move cap."""
    game = Game(size, komi)
    nn = size * size
    moves = []
    while not game.is_over():
        board = game.board
        legal = np.flatnonzero(game.legal_moves()[:nn])
        fine = [m for m in legal if not board.is_eye(int(m), board.to_move)]
        r = rng.random()
        if r < 0.03:
            move = nn
        elif r < 0.13 and len(legal):
            move = int(rng.choice(legal))
        elif fine:
            move = int(rng.choice(fine))
        else:
            move = nn
        game.play(move)
        moves.append(move)
    return moves


def test_kernel_mask_equals_the_sampler_and_the_rules(rule_mask):
    rng = np.random.default_rng(5)
    for size, count in ((5, 12), (9, 4)):
        nn = size * size
        games = [eyeish_game(size, 7.5, rng) for _ in range(count)]
        moves = np.concatenate([np.asarray(g, np.int16) for g in games])
        start = np.zeros(count + 1, np.int64)
        np.cumsum([len(g) for g in games], out=start[1:])
        game = np.concatenate([np.full(len(g), i, np.int32) for i, g in enumerate(games)])
        move = np.concatenate([np.arange(len(g), dtype=np.int32) for g in games])
        eyes = forced = 0
        for allow_pass in (False, True):
            # Every position, in order (one replay per game), and a shuffled subset (replays
            # restart whenever the order goes back).
            pick = rng.permutation(len(game))[:len(game) // 2]
            for rows in (np.arange(len(game)), pick):
                out = np.full((len(rows), nn + 1), 7, np.uint8)
                acceptable_masks(size, 7.5, moves, start, game[rows], move[rows], out,
                                 allow_pass=allow_pass)
                expected = np.zeros_like(out)
                for i, (g, m) in enumerate(zip(game[rows], move[rows])):
                    board = Board(size, 7.5)
                    for mv in games[g][:m]:
                        board.play(int(mv))
                    logits = rng.uniform(-3, 3, nn + 1).astype(np.float32)
                    sampler = distribution(board, logits, floor=0.0, allow_pass=allow_pass) > 0
                    expected[i] = rule_mask(board, allow_pass)
                    assert np.array_equal(sampler, expected[i] == 1), (size, g, m)
                    legal = board.legal_moves()[:nn] == 1
                    eyes += int((legal & (expected[i][:nn] == 0)).any())
                    forced += int(not allow_pass and expected[i][nn] == 1)
                assert np.array_equal(out, expected), size
        # The positions covered own eyes (legal points masked) and forced passes.
        assert eyes > 0 and forced > 0, (size, eyes, forced)


def test_kernel_refuses_bad_indices():
    moves = np.array([0, 1, 25, 25], np.int16)
    start = np.array([0, 4], np.int64)
    out = np.zeros((1, 26), np.uint8)
    for g, m in ((1, 0), (0, 4), (0, -1)):
        try:
            acceptable_masks(5, 0.5, moves, start, np.array([g], np.int32),
                             np.array([m], np.int32), out)
        except ValueError as e:
            assert "out of range" in str(e)
        else:
            raise AssertionError(f"game {g} move {m} accepted")
    try:
        acceptable_masks(5, 0.5, moves, start, np.array([0], np.int32), np.array([0], np.int32),
                         np.zeros((1, 25), np.uint8))
    except ValueError as e:
        assert "out" in str(e)
    else:
        raise AssertionError("a mask row of the wrong width accepted")


def test_loss_equals_the_masked_formula_by_hand():
    gen = torch.Generator().manual_seed(3)
    rows, width = 6, 26
    logits = torch.randn(rows, width, generator=gen, dtype=torch.float64) * 2
    value = torch.rand(rows, generator=gen, dtype=torch.float64) * 2 - 1
    mask = torch.rand(rows, width, generator=gen) < 0.5
    action = torch.tensor([0, 3, 25, 7, 11, 25])
    mask[torch.arange(rows), action] = True
    mask[0, 25] = False
    z = torch.tensor([1.0, -1.0, 1.0, -1.0, 0.0, -1.0], dtype=torch.float64)
    for baseline, floor in (("zero", 0.0), ("value", 0.0), ("value", 0.05)):
        loss, policy, value_loss, mask_loss = reinforce_loss(
            logits.float(), value.float(), action, z.float(), mask, n_games=4, n_positions=rows,
            baseline=baseline, value_weight=0.3, floor=floor, mask_weight=0.7)
        by_hand, clipped, off_mask = 0.0, 0, 0.0
        for i in range(rows):
            allowed = [logits[i, j].item() for j in range(width) if mask[i, j]]
            every = [logits[i, j].item() for j in range(width)]
            top = max(allowed)
            log_p = logits[i, action[i]].item() - top - math.log(
                sum(math.exp(x - top) for x in allowed))
            # -log P(acceptable) under the softmax over every move
            off_mask -= math.log(sum(math.exp(x) for x in allowed) / sum(math.exp(x) for x in every))
            if floor > 0 and log_p < math.log(floor):
                log_p, clipped = math.log(floor), clipped + 1
            b = value[i].item() if baseline == "value" else 0.0
            by_hand -= log_p * (z[i].item() - b)
        by_hand /= 4
        vl = float(((value - z) ** 2).sum() / rows) if baseline == "value" else 0.0
        assert math.isclose(float(policy), by_hand, rel_tol=1e-5, abs_tol=1e-6)
        assert math.isclose(float(value_loss), vl, rel_tol=1e-5, abs_tol=1e-6)
        off_mask /= 4                   # n_games
        assert off_mask > 0.1 and math.isclose(float(mask_loss), off_mask, rel_tol=1e-5)
        assert math.isclose(float(loss), by_hand + 0.3 * vl + 0.7 * off_mask, rel_tol=1e-5,
                            abs_tol=1e-6)
        if floor:
            assert 0 < clipped < rows       # the clip is active for some rows only
    # The unmasked softmax gives another loss: the mask is not a no-op here.
    full = reinforce_loss(logits.float(), value.float(), action, z.float(),
                          torch.ones_like(mask), n_games=4, n_positions=rows)[1]
    assert not math.isclose(float(full), float(policy), rel_tol=1e-3)
    bad = mask.clone()
    bad[1, 3] = False
    try:
        reinforce_loss(logits.float(), value.float(), action, z.float(), bad, n_games=4,
                       n_positions=rows)
    except ValueError as e:
        assert "outside" in str(e)
    else:
        raise AssertionError("an action outside the mask was accepted")


def test_masked_logits_get_zero_policy_gradient_and_the_mask_term_lowers_them(game_record, random_moves,
                                                                              rule_mask):
    size, komi = 5, 0.5
    rng = np.random.default_rng(8)
    games = [game_record(size, komi, random_moves(size, komi, rng, length=length), learner)
             for length, learner in ((9, 1), (12, -1), (8, 0))]
    config = ModelConfig(board_size=size, blocks=1, channels=8, value_hidden=8)
    model = build_model(config, seed=1)
    batch = learner_batch(block_from_games(games, size, "g"), size, komi, "alphazero",
                          config.planes)
    nn = size * size
    # The mask is the kernel's rule plus the move played (random games pass at the end while
    # board moves remain, a pass the sampler would only draw as its superko fallback).
    occupied = np.zeros_like(batch.mask)
    row = 0
    for game in games:
        board = Board(size, komi)
        for t, move in enumerate(game.moves.tolist()):
            if game.full[t]:
                expected = rule_mask(board, False)
                expected[move] = 1
                assert np.array_equal(batch.mask[row], expected == 1), (row, t)
                occupied[row, :nn] = board.stones().reshape(-1) != 0
                row += 1
            board.play(move)
    assert row == len(batch.action)
    assert not (batch.mask & occupied).any()
    pass_masked = ~batch.mask[:, nn] & batch.mask[:, :nn].any(1)
    assert pass_masked.any() and occupied.any()

    def grad(mask, mask_weight=0.0):
        model.eval()
        with torch.no_grad():
            logits, value = model(torch.from_numpy(batch.planes).float())
        logits = logits.clone().requires_grad_(True)
        z = torch.from_numpy(batch.z)
        z[z == 0] = -1.0               # every row pushes: lost games are the ones that matter
        loss = reinforce_loss(logits, value, torch.from_numpy(batch.action), z,
                              torch.from_numpy(mask), n_games=batch.games,
                              n_positions=len(batch.action), floor=1e-3,
                              mask_weight=mask_weight)[0]
        loss.backward()
        return logits.grad.numpy()

    g = grad(batch.mask)
    assert np.all(g[~batch.mask] == 0.0)
    assert np.all(g[pass_masked, nn] == 0.0) and np.all(g[occupied] == 0.0)
    assert np.abs(g[batch.mask]).max() > 0
    # The mask term moves only probability off the masked moves: each masked logit's gradient
    # is mask_weight * p_all / n (> 0, so a step lowers it), whatever the game's result.
    with torch.no_grad():
        p_all = torch.softmax(model(torch.from_numpy(batch.planes).float())[0], 1).numpy()
    g_m = grad(batch.mask, mask_weight=0.5)
    expected = 0.5 * p_all[~batch.mask] / batch.games
    assert np.all(g_m[~batch.mask] > 0)
    assert np.allclose(g_m[~batch.mask], expected, rtol=1e-4, atol=1e-9)
    # Over all moves (the old loss) the pass and occupied points would move.
    g_all = grad(np.ones_like(batch.mask))
    assert np.abs(g_all[pass_masked, nn]).min() > 0 and np.abs(g_all[occupied]).min() > 0


def test_learner_batch_allow_pass_keeps_the_pass(game_record, random_moves):
    size, komi = 5, 0.5
    rng = np.random.default_rng(2)
    games = [game_record(size, komi, random_moves(size, komi, rng, length=10), 0)]
    block = block_from_games(games, size, "p")
    config = ModelConfig(board_size=size, blocks=1, channels=8, value_hidden=8)
    no = learner_batch(block, size, komi, "alphazero", config.planes)
    yes = learner_batch(block, size, komi, "alphazero", config.planes, allow_pass=True)
    assert yes.mask[:, size * size].all()
    assert not no.mask[:, size * size].all()
    assert np.array_equal(no.mask[:, :size * size], yes.mask[:, :size * size])
