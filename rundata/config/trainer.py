"""The [trainer] section of a run's config: the replay window and what a run keeps of it, the
optimiser and its schedule, checkpoints, growth stages, the algorithm and its extra terms."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastgo.bounds import SEED
from fastgo.variants import Algorithm, Device
from rundata.config.fields import ConfigError, setting


@dataclass(frozen=True)
class TrainerConfig:
    """The trainer (`fastgo train`): window, optimisation, checkpoint cadence."""

    batch_size: int = setting(256, min=1, max=65536)
    optimizer: Literal["sgd", "adamw"] = setting("sgd", doc="SGD with momentum, or AdamW")
    lr: float = setting(0.02, min=0.0, max=10.0)
    lr_half_life_steps: int = setting(0, min=0, max=1 << 31,
                                      doc="learning-rate decay: lr x 0.5^(step / this), never "
                                          "below lr x lr_floor; 0 = a constant lr")
    lr_floor: float = setting(0.1, min=0.0, max=1.0, doc="the decayed lr's floor, a share of lr")
    weight_average: float = setting(0.0, min=0.0, max=0.99999,
                                    doc="decay of the exponential weight average served to "
                                        "self-play, the evaluator and checkpoints (KataGo "
                                        "serves averaged weights), e.g. 0.999; 0 = the raw "
                                        "weights")
    grow: tuple[str, ...] = setting(
        (), pattern=r"[0-9]{1,12}:b[0-9]{1,3}c[0-9]{1,4}",
        doc="a network that grows with the run: 'STEP:bBLOCKScCHANNELS' entries; from STEP "
            "on the trainer trains (and publishes) that larger tower, grown from the smaller "
            "one so it computes the same function at the switch; empty = model's shape "
            "throughout")
    grow_when_flat: tuple[str, ...] = setting(
        (), pattern=r"b[0-9]{1,3}c[0-9]{1,4}",
        doc="a network that grows when the evaluator's curve flattens: 'bBLOCKScCHANNELS' "
            "shapes in rising order; the trainer moves to the next one at a checkpoint once "
            "the last flat_steps steps of the current shape brought no evaluated checkpoint "
            "more than flat_elo above the best one before them (needs cluster.evaluate); "
            "not together with grow")
    flat_steps: int = setting(5000, min=1, max=1 << 31,
                              doc="grow_when_flat: the training steps a shape is given to gain")
    flat_elo: float = setting(50.0, min=0.0, max=10000.0,
                              doc="grow_when_flat: the least Elo gain over flat_steps that "
                                  "counts as still gaining")
    momentum: float = setting(0.9, min=0.0, max=1.0)
    weight_decay: float = setting(1e-4, min=0.0, max=1.0)
    value_weight: float = setting(1.0, min=0.0, max=100.0)
    ownership_weight: float = setting(1.0, min=0.0, max=100.0,
                                      doc="auxiliary ownership loss (KataGo); 0 = off")
    score_weight: float = setting(1.0, min=0.0, max=100.0,
                                  doc="auxiliary score loss, MSE of the final margin / (N*N) "
                                      "(model.score_head); 0 = off")
    opponent_policy_weight: float = setting(0.15, min=0.0, max=100.0,
                                            doc="auxiliary cross-entropy to the opponent's reply "
                                                "(model.opponent_policy_head, KataGo: 0.15); 0 = off")
    soft_policy_weight: float = setting(1.0, min=0.0, max=100.0,
                                        doc="auxiliary cross-entropy to the policy target raised "
                                            "to the power 1/4 and renormalised "
                                            "(model.soft_policy_head); 0 = off. KataGo's 8 "
                                            "held the served policy at uniform for 2,800 steps "
                                            "of the quickstart, whose policy head shares 2 "
                                            "channels (docs/learning.md)")
    window: Literal["power", "fixed"] = setting("power",
                                                doc="power: grows with the data (KataGo); fixed")
    window_size: int = setting(100_000, min=1, max=1 << 31,
                               doc="fixed: positions kept; power: the scale c")
    value_q_weight: float = setting(0.0, min=0.0, max=1.0,
                                    doc="the value target's share of the search's root value: "
                                        "(1 - w) x the game's outcome + w x the root value the "
                                        "search saw there (self-play games; an imported game "
                                        "keeps its outcome); 0 = the outcome alone")
    surprise_weight: float = setting(0.0, min=0.0, max=1.0,
                                     doc="policy surprise weighting (KataGo): the share of each "
                                         "game's full-search positions' sampling weight given "
                                         "out in proportion to their surprise, KL(policy target "
                                         "|| prior), the rest evenly (KataGo: 0.5); 0 = uniform")
    window_alpha: float = setting(0.75, min=0.0, max=1.0)
    window_beta: float = setting(0.4, min=0.0, max=10.0)
    window_max: int = setting(4_000_000, min=0, max=1 << 31,
                              doc="the window's positions at most, whatever it grows to (about "
                                  "85 bytes each, twice that while sampling: 4,000,000 is about "
                                  "700 MB, reached after about 64 hours of the quickstart on a "
                                  "2-core Zen 4); 0 = no bound")
    shards_kept_mb: int = setting(2048, min=0, max=1 << 30,
                                  doc="RUN/shards kept on disk, in MB: past it the oldest shards "
                                      "the trainer has taken in and its window no longer holds "
                                      "are deleted (about 25 hours of a 2-core Zen 4 run; a "
                                      "week is 13 GB); 0 = keep every shard")
    min_positions: int = setting(2_000, min=1, max=1 << 31,
                                 doc="positions needed before the first step")
    samples_per_position: float = setting(4.0, min=0.01, max=1e6,
                                          doc="cap: training samples per self-play position")
    checkpoint_every: int = setting(100, min=1, max=1 << 31, doc="steps between checkpoints")
    keep_checkpoints: int = setting(20, min=1, max=1_000_000, doc="numbered checkpoints kept")
    device: Device = setting(Device.AUTO)
    precision: Literal["auto", "fp32", "bf16"] = setting(
        "auto", doc="forward passes under bf16 autocast: auto = on CUDA, and on a CPU with bf16 "
                    "instructions (AVX512_BF16 or AMX); fp32 = never; bf16 = always")
    threads: int = setting(1, min=0, max=1024, doc="torch threads on CPU; 0 = torch default")
    compile: bool = setting(False, doc="the training step through torch.compile (compiled when "
                                       "the network is placed; eager, with a warning, where it "
                                       "cannot be; fastgo bench train times both)")
    channels_last: bool = setting(True, doc="the trained network in the channels_last memory "
                                            "format (on CPU about 1.3x the samples/s of the "
                                            "default layout for the quickstart network)")
    publish: bool = setting(True, doc="ask the server to hot-reload each new checkpoint")
    publish_slot: str = setting("current", pattern=r"[A-Za-z0-9_.:-]{1,64}")
    max_refused: int = setting(3, min=0, max=1 << 20,
                               doc="stop (exit status 2) after the server refuses this many "
                                   "published checkpoints in a row (diverged weights fail its "
                                   "canary check); 0 = never stop")
    seed: int = setting(1, min=SEED.low, max=SEED.high)
    poll_s: float = setting(1.0, min=0.01, max=3600.0, doc="how often to look for new shards")
    curve_key_file: str = setting("", doc="the trainer's CURVE secret key file for publishing "
                                          "to a server with CURVE; empty = a fresh key pair")
    server_public_key: str = setting("", doc="the server's CURVE public key (Z85 or a .key "
                                             "file) for publishing; empty = no CURVE")
    algorithm: Algorithm = setting(
        Algorithm.ALPHAZERO, doc="alphazero: search targets from a replay window; reinforce: policy "
                         "gradient on games against the opponent pool; value: the value head on "
                         "one position per game (AlphaGo's value stage)")
    minibatch_games: int = setting(32, min=1, max=1 << 20,
                                   doc="reinforce: games per update (each game used once)")
    pool_every: int = setting(10, min=1, max=1 << 31,
                              doc="reinforce: add the current checkpoint to the opponent pool "
                                  "every K updates")
    pool_max: int = setting(0, min=0, max=1_000_000,
                            doc="reinforce: pool entries kept (oldest dropped); 0 = unbounded")
    max_staleness: int = setting(0, min=0, max=1 << 31,
                                 doc="reinforce: games whose learner is more than this many "
                                     "updates behind the trainer are dropped unused (counted in "
                                     "metrics.csv); 0 = every game is used")
    baseline: Literal["zero", "value", "mean"] = setting(
        "zero", doc="reinforce: b = 0; the value head's prediction (then the value head is "
                    "trained toward the outcome on the same positions, weight value_weight); or "
                    "the learner's mean result in the mini-batch (one opponent per mini-batch: "
                    "the opponent's strength cancels out)")
    mask_weight: float = setting(1.0, min=0.0, max=100.0,
                                 doc="reinforce: weight of -log P(acceptable moves), which keeps "
                                     "the network's probability off the moves the sampler never "
                                     "plays (pass while others remain, own-eye fills)")
    reinforce_batchnorm: Literal["batch", "recalibrate"] = setting(
        "batch", doc="reinforce: BatchNorm in the update. batch: training mode (batch "
                     "statistics; the running ones follow by momentum); recalibrate: the "
                     "gradient of the served network (running statistics), which are then "
                     "re-estimated on the mini-batch for the new weights (needed from a "
                     "pretrained network)")
    target_kl: float = setting(0.01, min=0.0, max=10.0,
                               doc="reinforce: the policy's KL change per update that the "
                                   "learning rate is adapted to (trainer.lr is its ceiling, "
                                   "lr / 1000 its floor); 0 = a fixed lr")
    freeze_policy: bool = setting(True, doc="value: train the value head only (the trunk and the "
                                            "policy and ownership heads stay as they are)")
    positions_per_game: int = setting(1, min=1, max=1 << 16,
                                      doc="value: positions drawn from each game (1 = AlphaGo's "
                                          "decorrelation)")

    def check(self):
        self.grow_stages()
        if self.grow and self.grow_when_flat:
            raise ConfigError("grow and grow_when_flat: a run grows at configured steps or when "
                              "its curve flattens, not both")
        self.flat_shapes()

    def flat_shapes(self) -> list[tuple[int, int]]:
        """[(blocks, channels)] of `grow_when_flat`, in order; ConfigError when a shape is out of
        bounds or smaller than the one before it."""
        shapes = [(int(s[1:].split("c")[0]), int(s.split("c")[1])) for s in self.grow_when_flat]
        for blocks, channels in shapes:
            if not (1 <= blocks <= 80 and 1 <= channels <= 1024):
                raise ConfigError(f"grow_when_flat: b{blocks}c{channels}: blocks must be 1..80 "
                                  f"and channels 1..1024")
        for (b0, c0), (b1, c1) in zip(shapes, shapes[1:]):
            if (b1, c1) == (b0, c0) or b1 < b0 or c1 < c0:
                raise ConfigError(f"grow_when_flat: b{b1}c{c1} after b{b0}c{c0}: each shape "
                                  f"must be larger than the one before it")
        return shapes

    def grow_stages(self) -> list[tuple[int, int, int]]:
        """[(step, blocks, channels)] of `grow`, by step; ConfigError when steps repeat, a shape
        is out of model's bounds, or a stage is smaller than the one before it."""
        stages = sorted((int(step), int(shape[1:].split("c")[0]), int(shape.split("c")[1]))
                        for step, shape in (entry.split(":") for entry in self.grow))
        for step, blocks, channels in stages:
            if not (1 <= blocks <= 80 and 1 <= channels <= 1024):
                raise ConfigError(f"grow: b{blocks}c{channels} at step {step}: blocks must be "
                                  f"1..80 and channels 1..1024")
        for (s0, b0, c0), (s1, b1, c1) in zip(stages, stages[1:]):
            if s0 == s1:
                raise ConfigError(f"grow: two stages at step {s0}")
            if b1 < b0 or c1 < c0:
                raise ConfigError(f"grow: the stage at step {s1} (b{b1}c{c1}) is smaller than "
                                  f"the one at step {s0} (b{b0}c{c0}): a network only grows")
        return stages
