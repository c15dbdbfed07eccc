"""The sections of a run's config, one frozen dataclass each, and `Config`, one field per section.

To add a section, write its dataclass (fields with defaults, constraints in `setting(...)`,
cross-field rules in `check()`) and add a field to `Config`: the loader is generic. Stdlib only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from fastgo.bounds import KOMI, SEED
from fastgo.constants import ENCODING_PLANES, MAX_BOARD_SIZE, MIN_BOARD_SIZE
from fastgo.variants import CUDA_BACKENDS, Algorithm, Backend, Device, PassRule, Search
from rundata.config.endpoints import check_bind
from rundata.config.evaluator import EvaluatorConfig
from rundata.config.fields import ConfigError, mapping_setting, parse_section, setting
from rundata.config.loop import ClusterConfig, RecorderConfig

MODEL_NAME = re.compile(r"b(\d+)c(\d+)")
MAX_GRAPH_BATCHES = 16                  # server.graph_batches: each size is compiled ahead


@dataclass(frozen=True)
class ModelConfig:
    """The policy/value network: a residual tower of `blocks` x `channels` (named like b6c64)."""

    board_size: int = setting(9, min=MIN_BOARD_SIZE, max=MAX_BOARD_SIZE, doc="points per side")
    encoding: Literal["alphazero", "liberty", "katago"] = setting(
        "alphazero", doc="input feature planes: alphazero (17, 8 positions of history), liberty "
                         "(11, liberties and ko), katago (16, liberties, ko and the last 5 moves)")
    blocks: int = setting(6, min=1, max=80, doc="residual blocks")
    channels: int = setting(64, min=1, max=1024, doc="channels in the tower")
    global_pool_every: int = setting(0, min=0, doc="every k-th block adds a global pooling bias; 0 = none")
    policy_channels: int = setting(2, min=1, max=64)
    value_channels: int = setting(1, min=1, max=64)
    value_hidden: int = setting(64, min=1, max=4096)
    ownership_head: bool = setting(True, doc="auxiliary Tromp-Taylor ownership head (training only)")
    score_head: bool = setting(False, doc="auxiliary head for the final Tromp-Taylor score margin "
                                          "from the side to move's view (training only)")
    lead_head: bool = setting(False, doc="with score_head: a second score output, the median "
                                         "final margin (KataGo's scoreLead, the points that "
                                         "would even the game; training and analysis only)")
    opponent_policy_head: bool = setting(False, doc="auxiliary policy head for the opponent's "
                                                    "reply, the move played next (training only)")

    def check(self):
        if self.lead_head and not self.score_head:
            raise ConfigError("lead_head: needs score_head = true (the lead is a second output "
                              "of the score head)")

    @property
    def name(self) -> str:
        return f"b{self.blocks}c{self.channels}"

    @property
    def planes(self) -> int:
        return ENCODING_PLANES[self.encoding]

    @property
    def moves(self) -> int:
        """Length of a policy vector: every point, then pass."""
        return self.board_size * self.board_size + 1

    @classmethod
    def from_name(cls, name: str, **overrides) -> ModelConfig:
        match = MODEL_NAME.fullmatch(name)
        if not match:
            raise ConfigError(f"model name {name!r}: expected bBLOCKScCHANNELS, e.g. b6c64")
        return parse_section(cls, {"blocks": int(match.group(1)), "channels": int(match.group(2)),
                                   **overrides}, source=f"model name {name!r}", prefix="model")


@dataclass(frozen=True)
class ServerConfig:
    """The batching inference server (`fastgo serve`)."""

    endpoint: str = setting("tcp://127.0.0.1:5555", pattern=r"(tcp|ipc|inproc)://.+",
                            doc="ROUTER bind address; loopback by default")
    max_batch: int = setting(64, min=1, max=65536, doc="positions per forward pass")
    max_wait_us: int = setting(1000, min=0, max=10_000_000,
                               doc="longest wait after the first queued request for more to "
                                   "join its batch (none once no request of the recent sizes "
                                   "could still fit)")
    max_request_positions: int = setting(1024, min=1, max=1 << 20,
                                         doc="largest count one request may carry")
    max_checkpoint_bytes: int = setting(256 << 20, min=1 << 10, max=1 << 34,
                                        doc="largest checkpoint a reload message may carry")
    device: Device = setting(Device.AUTO)
    backend: Backend = setting(
        Backend.TORCH, doc="CPU inference backend: auto = time every available one at max_batch and serve "
                           "the fastest that agrees with fp32 (cached per machine and network shape); "
                           "torch = torch-fp32, onnx = onnx-fp32 (ONNX Runtime); bf16 where the CPU has "
                           "bf16 instructions, int8 where it has VNNI. CUDA runs torch")
    precision: Literal["auto", "fp32", "bf16", "fp16"] = setting(
        "auto", doc="autocast dtype on CUDA (auto = bf16 where supported); CPU runs fp32")
    threads: int = setting(1, min=0, max=1024, doc="intra-op threads on CPU (torch or ONNX Runtime); "
                                                  "0 = torch default (all cores: contends with workers)")
    channels_last: bool = setting(True, doc="channels_last memory format for the tower")
    fuse_batchnorm: bool = setting(True, doc="fold batch norm into convolutions for inference")
    overlap: bool = setting(False, doc="run forward passes on their own thread so the next batch is "
                                       "gathered meanwhile (two batches outstanding); pays off on GPU")
    cuda_graphs: bool = setting(False, doc="capture CUDA graphs for the batch sizes in graph_batches")
    graph_batches: tuple[int, ...] = setting(
        (), doc="batch sizes prepared ahead: CUDA graphs (with cuda_graphs; empty = the runner's "
                "capacity) and OpenVINO's static shapes on CPU (empty = (max_batch,)); a batch runs "
                "padded to the smallest that holds it")
    slots: tuple[str, ...] = setting(("current",), doc="model slots served; requests name one")
    checkpoints: dict[str, str] = mapping_setting(
        doc="slot -> checkpoint file, watched and hot-reloaded; a slot without one (or whose file "
            "does not exist yet) serves seeded random weights as version 0")
    init_seed: int = setting(0, min=SEED.low, max=SEED.high, doc="seed for slots without a checkpoint")
    watch_interval_s: float = setting(1.0, min=0.05, max=3600.0)
    canary_max_abs_logit: float = setting(1e4, min=1.0, doc="canary refuses a model beyond this")
    log_file: str = setting("", doc="log file; empty = stderr only")
    curve_secret_key_file: str = setting(
        "", doc="the server's CURVE secret key file (fastgo keys new); clients then need "
                "the matching public key")
    allow_insecure_remote: bool = setting(False, doc="bind a non-loopback address without CURVE")
    curve_allowed: tuple[str, ...] = setting(
        (), doc="client public keys allowed with CURVE: key files (NAME.key), folders of *.key "
                "files or Z85 keys; required on a non-loopback endpoint; empty = any client key")

    def check(self):
        check_bind(self)
        if not self.slots:
            raise ConfigError("slots: at least one slot is needed")
        for name in self.slots:
            if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", name):
                raise ConfigError(f"slots: bad slot name {name!r}")
        if len(set(self.slots)) != len(self.slots):
            raise ConfigError("slots: duplicate slot names")
        for name in self.checkpoints:
            if name not in self.slots:
                raise ConfigError(f"checkpoints.{name}: no such slot (slots = {list(self.slots)})")
        if self.backend not in CUDA_BACKENDS and self.device == Device.CUDA:
            raise ConfigError(f"backend: {str(self.backend)!r} runs on the CPU; use device = "
                              f"\"cpu\"")
        if len(self.graph_batches) > MAX_GRAPH_BATCHES:
            raise ConfigError(f"graph_batches: at most {MAX_GRAPH_BATCHES} sizes (each is compiled "
                              f"ahead), got {len(self.graph_batches)}")
        for size in self.graph_batches:
            if not 1 <= size <= 1 << 20:
                raise ConfigError(f"graph_batches: batch size {size} must be in 1..{1 << 20}")



@dataclass(frozen=True)
class SelfplayConfig:
    """Self-play workers (`fastgo selfplay`): the search per move and how games are stored."""

    # keys the schema no longer takes -> what replaced each (the refusal names it)
    RENAMED_KEYS = {"pass_when_filled": 'pass_rule = "fill" (true) or "free" (false)',
                    "no_pass_before": "earliest_pass",
                    "policy_pass": 'policy_pass_rule = "free" (true) or "fill" (false)'}

    games: int = setting(64, min=1, max=4096, doc="games played at once by one worker")
    visits: int = setting(64, min=1, max=100_000, doc="root visits of a full search")
    cheap_visits: int = setting(0, min=0, max=100_000,
                                doc="playout-cap randomization: visits of a cheap search; 0 = off")
    full_search_fraction: float = setting(1.0, min=0.0, max=1.0,
                                          doc="share of moves with a full search (a policy target)")
    komi: float = setting(7.5, min=KOMI.low, max=KOMI.high)
    temperature_moves: int = setting(8, min=0, max=10_000,
                                     doc="moves sampled by visit count; the most visited after")
    pass_rule: PassRule = setting(
        PassRule.FREE, doc="fastgo.move_choice's pass rule of search self-play (never the winning pass): "
                           "fill = no pass while a legal point outside the player's own eyes is left "
                           "(games are played out; the pass is then never a policy target); settled = "
                           "as fill, and the pass also allowed once every empty region borders one "
                           "colour only; decided = as fill, and the pass also allowed once the position "
                           "is decided (every region one colour's or seki, every group two eyes or in "
                           "seki; a stone in the own area is then played as the pass); free = the pass "
                           "is a move like any other")
    earliest_pass: int = setting(0, min=0, max=100_000,
                                 doc="no pass before this move number while another move was "
                                     "searched (and none in the policy target); 0 = off")
    c_puct: float = setting(1.25, min=0.0, max=100.0)
    fpu_reduction: float = setting(0.25, min=0.0, max=10.0)
    dirichlet_alpha: float = setting(0.0, min=0.0, max=100.0,
                                     doc="root noise; 0 = 0.03 x 361 / legal moves")
    noise_weight: float = setting(0.25, min=0.0, max=1.0)
    resign_threshold: float = setting(-0.9, min=-1.0, max=1.0,
                                      doc="resign when the root value stays below; -1 = never")
    resign_consecutive: int = setting(3, min=1, max=1000)
    resign_disabled_fraction: float = setting(0.1, min=0.0, max=1.0,
                                              doc="games that never resign (false-positive count)")
    shard_games: int = setting(64, min=1, max=1_000_000, doc="close a shard after this many games")
    shard_seconds: float = setting(120.0, min=0.1, max=86_400.0, doc="... or after this long")
    sgf_every: int = setting(0, min=0, max=1_000_000,
                             doc="write one game in K as SGF to the run's sgf/; 0 = none")
    seed: int = setting(0, min=SEED.low, max=SEED.high, doc="0 = a fresh seed per worker start")
    timeout_s: float = setting(30.0, min=0.1, max=3600.0,
                               doc="a batch unanswered this long is sent again (then retried)")
    recorder: str = setting("", pattern=r"((tcp|ipc)://.+)?",
                            doc="recorder endpoint (tcp://HOST:PORT): finished games go there "
                                "instead of local shards; empty = local shards")
    max_unconfirmed: int = setting(256, min=1, max=1_000_000,
                                   doc="games sent to the recorder and not yet confirmed; at "
                                       "this bound self-play pauses (must be >= games)")
    recorder_timeout_s: float = setting(30.0, min=0.1, max=3600.0,
                                        doc="a game unconfirmed for shard_seconds + this long "
                                            "is sent again after a reconnect")
    curve_key_file: str = setting("", doc="this worker's CURVE secret key file (fastgo keys new); "
                                          "its public half must be allowed by the server and the "
                                          "recorder; empty = a fresh key pair per connection")
    server_public_key: str = setting("", doc="the server's CURVE public key (Z85 or a .key "
                                             "file); empty = no CURVE to the server")
    recorder_public_key: str = setting("", doc="the recorder's CURVE public key (Z85 or a .key "
                                               "file); empty = no CURVE to the recorder")
    policy_floor: float = setting(1e-3, min=0.0, max=0.5,
                                  doc="policy-only play (reinforce, value): every acceptable move's "
                                      "probability is raised to at least this, then renormalised")
    policy_pass_rule: PassRule = setting(
        PassRule.FILL, doc="policy-only play (reinforce, value), fastgo.move_choice's vocabulary: fill = "
                           "pass only when no legal move outside the player's own eyes is left; free = "
                           "the pass is a move the policy may choose")
    search: Search = setting(
        Search.PUCT, doc="root search: puct (AlphaZero: Dirichlet noise, visit-count targets) or "
                    "gumbel (Gumbel MuZero: Gumbel-top-k and sequential halving at the root, the "
                    "improved policy as the target; fastgo.gumbel)")
    gumbel_considered: int = setting(16, min=1, max=1000, doc="gumbel: moves sampled at the root")
    gumbel_c_visit: float = setting(50.0, min=0.0, max=1e6,
                                    doc="gumbel: sigma(q) = (c_visit + max N) * c_scale * q")
    gumbel_c_scale: float = setting(1.0, min=0.0, max=1e3, doc="gumbel: see gumbel_c_visit")
    gumbel_rescale: bool = setting(False, doc="gumbel: completed q min-max rescaled to [0, 1] "
                                              "(mctx's default); false = as a win probability "
                                              "(q + 1) / 2, the paper's scale for Go")
    visits_schedule: tuple[str, ...] = setting(
        (), pattern=r"[0-9]{1,12}:[1-9][0-9]{0,5}",
        doc="a growing search: 'STEP:VISITS' entries, ascending steps; a worker uses the visits "
            "of the last entry whose training step its current model has reached (cheap "
            "searches take at most as many); empty = `visits` throughout")

    def check(self):
        steps = [int(entry.split(":")[0]) for entry in self.visits_schedule]
        if steps != sorted(set(steps)):
            raise ConfigError(f"visits_schedule: steps must be ascending and distinct, got "
                              f"{list(self.visits_schedule)[:8]}")
        for entry in self.visits_schedule:
            if int(entry.split(":")[1]) > 100_000:
                raise ConfigError(f"visits_schedule: {entry!r}: visits must be 1..100000")

    def visits_at(self, step) -> int:
        """Full-search visits for a model trained `step` steps (None: not known yet = step 0)."""
        visits = self.visits
        for entry in self.visits_schedule:
            at, v = entry.split(":")
            if int(at) <= (step or 0):
                visits = int(v)
        return visits


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
    window: Literal["power", "fixed"] = setting("power",
                                                doc="power: grows with the data (KataGo); fixed")
    window_size: int = setting(100_000, min=1, max=1 << 31,
                               doc="fixed: positions kept; power: the scale c")
    value_q_weight: float = setting(0.0, min=0.0, max=1.0,
                                    doc="the value target's share of the search's root value: "
                                        "(1 - w) x the game's outcome + w x the root value the "
                                        "search saw there (self-play games; an imported game "
                                        "keeps its outcome); 0 = the outcome alone")
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


@dataclass(frozen=True)
class Config:
    """A whole run: one field per section. Missing sections take their defaults."""

    model: ModelConfig = field(default_factory=ModelConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    selfplay: SelfplayConfig = field(default_factory=SelfplayConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    recorder: RecorderConfig = field(default_factory=RecorderConfig)

    def check(self):
        """What one section cannot check alone: a network only grows, so the first shape of
        trainer.grow and of trainer.grow_when_flat must be larger than model's (refused when the
        config is read, before any role starts: never a trainer crash-looping under the
        cluster)."""
        base = (self.model.blocks, self.model.channels)
        stages = self.trainer.grow_stages()
        if stages:
            step, blocks, channels = stages[0]
            _check_grows("trainer.grow", f"the stage at step {step}", (blocks, channels), base)
        shapes = self.trainer.flat_shapes()
        if shapes:
            _check_grows("trainer.grow_when_flat", "", shapes[0], base)


def _check_grows(key, what, shape, base):
    """ConfigError unless `shape` (blocks, channels) is larger than the model's `base`."""
    if shape[0] < base[0] or shape[1] < base[1] or shape == base:
        named = f"b{shape[0]}c{shape[1]}"
        raise ConfigError(f"{key}: {what + ' (' + named + ')' if what else named} is not larger "
                          f"than the model's b{base[0]}c{base[1]}: a network only grows")
