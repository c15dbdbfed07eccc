"""The sections of a run's config, one frozen dataclass each (the trainer's, the evaluator's, the
loop's in their own modules), and `Config`, one field per section.

To add a section, write its dataclass (fields with defaults, constraints in `setting(...)`,
cross-field rules in `check()`) and add a field to `Config`: the loader is generic. Stdlib only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from fastgo.bounds import KOMI, SEED
from fastgo.constants import ENCODING_PLANES, MAX_BOARD_SIZE, MIN_BOARD_SIZE
from fastgo.variants import CUDA_BACKENDS, Backend, Device, PassRule, Search
from rundata.config.endpoints import check_bind
from rundata.config.evaluator import EvaluatorConfig
from rundata.config.fields import ConfigError, mapping_setting, parse_section, setting
from rundata.config.loop import ClusterConfig, RecorderConfig
from rundata.config.trainer import TrainerConfig

MODEL_NAME = re.compile(r"b(\d+)c(\d+)(nbt)?")
NBT = "nbt"                             # a model name's suffix for nested bottleneck blocks
MAX_GRAPH_BATCHES = 16                  # server.graph_batches: each size is compiled ahead


@dataclass(frozen=True)
class ModelConfig:
    """The policy/value network: a residual tower of `blocks` x `channels` (named like b6c64, or
    b6c64nbt with nested bottleneck blocks)."""

    board_size: int = setting(9, min=MIN_BOARD_SIZE, max=MAX_BOARD_SIZE, doc="points per side")
    encoding: Literal["alphazero", "liberty", "katago"] = setting(
        "alphazero", doc="input feature planes: alphazero (17, 8 positions of history), liberty "
                         "(11, liberties and ko), katago (16, liberties, ko and the last 5 moves)")
    blocks: int = setting(6, min=1, max=80, doc="residual blocks")
    channels: int = setting(64, min=1, max=1024, doc="channels in the tower")
    block: Literal["residual", "nested_bottleneck"] = setting(
        "residual", doc="the tower's block: residual (two 3x3 convolutions) or nested_bottleneck "
                        "(KataGo's: 1x1 down to half the channels, two residual blocks there, "
                        "1x1 back up; twice as deep for 10/18 of the multiply-adds)")
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
    soft_policy_head: bool = setting(False, doc="a second output of the policy head for the "
                                                "policy target raised to the power 1/4 "
                                                "(KataGo's soft policy; training only)")

    def check(self):
        if self.lead_head and not self.score_head:
            raise ConfigError("lead_head: needs score_head = true (the lead is a second output "
                              "of the score head)")

    @property
    def name(self) -> str:
        return f"b{self.blocks}c{self.channels}" + (NBT if self.block == "nested_bottleneck" else "")

    @property
    def planes(self) -> int:
        return ENCODING_PLANES[self.encoding]

    @property
    def moves(self) -> int:
        """Length of a policy vector: every point, then pass."""
        return self.board_size * self.board_size + 1

    @staticmethod
    def shape_of(name: str) -> dict:
        """{"blocks", "channels", "block"} of a model name (b6c64, b6c64nbt); ConfigError
        naming the form otherwise."""
        match = MODEL_NAME.fullmatch(name)
        if not match:
            raise ConfigError(f"model name {name!r}: expected bBLOCKScCHANNELS, e.g. b6c64 "
                              f"(b6c64nbt: nested bottleneck blocks)")
        return {"blocks": int(match.group(1)), "channels": int(match.group(2)),
                "block": "nested_bottleneck" if match.group(3) else "residual"}

    @classmethod
    def from_name(cls, name: str, **overrides) -> ModelConfig:
        return parse_section(cls, {**cls.shape_of(name), **overrides},
                             source=f"model name {name!r}", prefix="model")


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
    nn_cache: int = setting(0, min=0, max=1 << 24,
                            doc="entries of each worker's cache of network evaluations (positions "
                                "seen again, up to symmetry, for the same network): a power of "
                                "two, 340 bytes a 9x9 entry; 0 = off")
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
    value_bias: float = setting(0.0, min=0.0, max=1.0,
                                doc="subtree value-bias correction (KataGo): a node's value is the "
                                    "network's less this times the mean error its context (the last "
                                    "move's 5x5 shape) has shown against deeper search; 0 = off, "
                                    "KataGo's 0.35")
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
        if self.nn_cache & (self.nn_cache - 1):
            raise ConfigError(f"nn_cache: must be 0 or a power of two, got {self.nn_cache}")
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
        if (stages or self.trainer.flat_shapes()) and self.model.block != "residual":
            raise ConfigError(f"trainer.grow: model.block = {self.model.block!r} does not grow "
                              f"(a network grows by residual blocks only); leave trainer.grow "
                              f"and trainer.grow_when_flat empty")
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
