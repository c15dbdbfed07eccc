"""The AlphaZero loss step over the replay window: policy cross-entropy to the search's visit
distribution, value MSE to the result, KataGo's auxiliary terms (ownership, score margin, the
opponent's reply); weight decay is the optimizer's. Trained by trainer.window_trainer.WindowTrainer.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from trainer.metrics import ALPHAZERO_FIELDS, ALPHAZERO_TERMS
from trainer.training_core import autocast


def policy_terms(logits, target, weight):
    """(policy_loss, policy_acc) of float logits [B, N*N+1] against target distributions
    [B, N*N+1] with row weights [B]: -sum_i w_i sum_a pi_i(a) log p_i(a) / max(1, sum_i w_i), and
    the w-weighted share of rows whose most likely move is the target's (no gradient)."""
    log_p = F.log_softmax(logits, dim=1)
    wsum = weight.sum().clamp_min(1.0)
    policy_loss = -((target * log_p).sum(1) * weight).sum() / wsum
    with torch.no_grad():
        hit = (logits.argmax(1) == target.argmax(1)).float()
        acc = (hit * weight).sum() / wsum
    return policy_loss, acc


# The soft policy target (KataGo's auxiliary soft policy): the target plus this floor on every
# move, raised to SOFT_POWER and renormalised. The floor gives the moves the search left
# unvisited a small, equal share ((1e-7)^(1/4) = 0.018 before renormalising).
SOFT_FLOOR = 1e-7
SOFT_POWER = 0.25


def soft_policy_target(target):
    """[B, M] policy targets (rows summing to 1, or all zero where the row has none) -> the
    rows (t + 1e-7)^(1/4) / sum (t + 1e-7)^(1/4): flatter, so the moves the search liked less
    still differ from one another in the target (KataGo's auxiliary soft policy target). A row
    of zeros comes out uniform; its weight in policy_terms is 0 anyway."""
    soft = (target.float() + SOFT_FLOOR).pow(SOFT_POWER)
    return soft / soft.sum(1, keepdim=True)


# The least margin a winner has under area scoring with a half-point komi (points).
WIN_MARGIN = 0.5


def score_terms(score, target, weight, area, sign=None):
    """score_loss = (sum_i k_i ((s_i - t_i) / area)^2 + sum_i b_i (max(0, 1/2 - g_i s_i) / area)^2)
    / max(1, sum_i k_i + sum_i b_i): the MSE of predicted margins s [B] to the final margins t [B]
    (points, mover's view) in units of the board's area over the rows with weight k [B] = 1
    (games that ended on the board), and a one-sided bound over the rows whose game only tells
    the winner (resignations): g [B] = +1 / -1 where the mover won / lost (b_i = |g_i|), else 0;
    a winner's predicted margin below half a point costs as a miss of that size, above it
    nothing. sign=None: the first sum only."""
    err = (score - target) / area
    total = (err * err * weight).sum()
    count = weight.sum()
    if sign is not None:
        short = torch.relu(WIN_MARGIN - sign * score) / area * sign.abs()
        total = total + (short * short).sum()
        count = count + sign.abs().sum()
    return total / count.clamp_min(1.0)


def lead_terms(lead, target, weight, area, sign=None):
    """lead_loss = (sum_i k_i |l_i - t_i| / area + sum_i b_i max(0, 1/2 - g_i l_i) / area)
    / max(1, sum_i k_i + sum_i b_i): score_terms with the absolute error in place of the
    squared one, so the lead l [B] learns the median final margin where s learns the mean. The
    median m of the margin is the points that would even the game (KataGo's scoreLead): at m
    the game is won as often as lost, so sign(m) = sign(P(win) - 1/2), which the mean of a
    skewed margin need not be. Rows, weights and signs as in score_terms."""
    total = ((lead - target).abs() / area * weight).sum()
    count = weight.sum()
    if sign is not None:
        total = total + (torch.relu(WIN_MARGIN - sign * lead) / area * sign.abs()).sum()
        count = count + sign.abs().sum()
    return total / count.clamp_min(1.0)


def ownership_terms(ownership, target, weight):
    """ownership_loss = sum_i k_i mean_x (o_ix - u_ix)^2 / max(1, sum_i k_i): the MSE of
    predicted ownership o [B, N*N] to the final board's u [B, N*N] over the rows with weight
    k [B] = 1 (games that ended by passes, whose final board is the game's settled area)."""
    err = ((ownership - target) ** 2).mean(1)
    return (err * weight).sum() / weight.sum().clamp_min(1.0)


def reply_terms(logits, reply, weight):
    """opponent_policy_loss = -sum_i r_i log q_i(a_i) / max(1, sum_i r_i): the cross-entropy of
    reply logits [B, N*N+1] to the opponent's next move a [B] (int64), over the rows with weight
    r [B] = 1 (every position but a game's last)."""
    nll = F.cross_entropy(logits, reply, reduction="none")
    return (nll * weight).sum() / weight.sum().clamp_min(1.0)


class AlphaZeroObjective:
    """For a batch of B positions drawn uniformly from the window under a random symmetry:

        loss = policy_loss + value_weight * value_loss + ownership_weight * ownership_loss
               + score_weight * (score_loss + lead_loss)
               + opponent_policy_weight * opponent_policy_loss
               + soft_policy_weight * soft_policy_loss
        policy_loss = -sum_i w_i sum_a pi_i(a) log p_i(a) / max(1, sum_i w_i)
        value_loss = mean_i (v_i - z_i)^2
        ownership_loss = sum_i k_i mean_x (o_ix - u_ix)^2 / max(1, sum_i k_i)
        score_loss = (sum_i k_i ((s_i - t_i) / N^2)^2 + sum_i |g_i| (max(0, 1/2 - g_i s_i) / N^2)^2)
                     / max(1, sum_i (k_i + |g_i|))
        lead_loss = (sum_i k_i |l_i - t_i| / N^2 + sum_i |g_i| max(0, 1/2 - g_i l_i) / N^2)
                    / max(1, sum_i (k_i + |g_i|))
        opponent_policy_loss = -sum_i r_i log q_i(a_i) / max(1, sum_i r_i)
        soft_policy_loss = -sum_i w_i sum_a pi'_i(a) log p'_i(a) / max(1, sum_i w_i)

    pi: the visit distribution, w: 1 for positions whose visits are a policy target (full
    searches), z: the result from the mover's view, u: the final ownership (+1 the mover's),
    s / t: the predicted / final Tromp-Taylor margin in points from the mover's view, l: the
    lead head's prediction of the same margin (its median, model.lead_head), k: 1 for
    games that ended by two passes (trainer.window.SCORED_ENDS: not by resignation, not at the
    move cap, where the board is a scramble and not the game's area), g: +1 / -1 where the
    game ended by resignation and the mover won / lost (trainer.window.SIGNED_ENDS: the winner's
    margin is at least half a point, its size unknown), else 0; q: the reply head's distribution, a: the
    move the opponent played next, r: 0 at a game's last position; p': the soft policy output,
    pi' = (pi + 1e-7)^(1/4) renormalised (soft_policy_target). Each auxiliary term is there
    when the network has its head and its weight is > 0 (else it reports 0). Default weights:
    opponent_policy_weight 0.15, KataGo's; soft_policy_weight 1 (KataGo's 8 starves the served
    policy of the 2 channels it shares with the soft output here); score_weight 1.0, a fifth
    of KataGo's score-mean term (0.0015 Huber(s - t, delta 12 points)), which on 9x9 is
    4.9 ((s - t) / 81)^2 for errors under 12 points.
    policy_acc: the w-weighted share of positions whose most likely move is the most visited;
    value_mse: value_loss. The network trains in training mode, bf16 autocast on CUDA.
    Samples are allowed from trainer.min_positions positions on: samples_per_position per
    position ever added to the window."""

    algorithm = "alphazero"
    fields = ALPHAZERO_FIELDS
    terms = ALPHAZERO_TERMS
    trainable = None

    def __init__(self, tc):
        self.tc = tc

    def allowed_samples(self, window) -> float:
        if window.total_positions < self.tc.min_positions:
            return 0
        return self.tc.samples_per_position * window.total_positions

    def loss(self, model, window, rng, buffers, device):
        batch = window.sample(rng, buffers)
        x = torch.from_numpy(batch["planes"]).to(device, non_blocking=True).float()
        target = torch.from_numpy(batch["policy"]).to(device)
        weight = torch.from_numpy(batch["policy_weight"]).to(device)
        z = torch.from_numpy(batch["value"]).to(device)
        own_t = torch.from_numpy(batch["ownership"]).to(device)
        model.train()
        with autocast(device, self.tc.precision):
            out = model.forward_train(x)
        logits, value, own = out.logits.float(), out.value.float(), out.ownership
        policy_loss, acc = policy_terms(logits, target, weight)
        value_loss = F.mse_loss(value, z)
        loss = policy_loss + self.tc.value_weight * value_loss
        ownership_loss = torch.zeros((), device=device)
        if own is not None and self.tc.ownership_weight > 0:
            ownership_loss = ownership_terms(
                own.float(), own_t, torch.from_numpy(batch["score_weight"]).to(device))
            loss = loss + self.tc.ownership_weight * ownership_loss
        score_loss = torch.zeros((), device=device)
        lead_loss = torch.zeros((), device=device)
        if out.score is not None and self.tc.score_weight > 0:
            # the score and the lead (its second output, where the head has one) share targets
            targets = (torch.from_numpy(batch["score"]).to(device),
                       torch.from_numpy(batch["score_weight"]).to(device),
                       float(window.size * window.size),
                       torch.from_numpy(batch["score_sign"]).to(device))
            score_loss = score_terms(out.score.float(), *targets)
            if out.lead is not None:
                lead_loss = lead_terms(out.lead.float(), *targets)
            loss = loss + self.tc.score_weight * (score_loss + lead_loss)
        opponent_policy_loss = torch.zeros((), device=device)
        if out.opponent_policy is not None and self.tc.opponent_policy_weight > 0:
            opponent_policy_loss = reply_terms(out.opponent_policy.float(),
                                               torch.from_numpy(batch["reply"]).to(device),
                                               torch.from_numpy(batch["reply_weight"]).to(device))
            loss = loss + self.tc.opponent_policy_weight * opponent_policy_loss
        soft_policy_loss = torch.zeros((), device=device)
        if out.soft_policy is not None and self.tc.soft_policy_weight > 0:
            soft_policy_loss, _ = policy_terms(out.soft_policy.float(),
                                               soft_policy_target(target), weight)
            loss = loss + self.tc.soft_policy_weight * soft_policy_loss
        return x.shape[0], loss, {"policy_loss": policy_loss, "value_loss": value_loss,
                                  "ownership_loss": ownership_loss, "policy_acc": acc,
                                  "value_mse": value_loss, "score_loss": score_loss,
                                  "lead_loss": lead_loss,
                                  "opponent_policy_loss": opponent_policy_loss,
                                  "soft_policy_loss": soft_policy_loss}
