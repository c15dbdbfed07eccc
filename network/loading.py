"""A checkpoint becomes a network to play with, one way for every command and role that plays
one: `fastgo gtp`, `fastgo arena` (and so `fastgo compare`'s matches), `fastgo analysis` and the
evaluator. play.network_player turns the Network into a player.

load_network(source, use, ...) loads and verifies the checkpoint, runs it in this process on the
device and backend asked for (defaults: DEFAULT_BACKEND, capacity DEFAULT_CAPACITY) with the
evaluators and torch's CPU threads its use (USES) asks for, refuses a network whose canary
outputs are not finite or out of range on any head that use serves (so a command refuses a
bad file once, at its start, and never reads it again), and reads the komi and rules the
network was trained at from the checkpoint (the trainer records them; an older checkpoint
without them is taken as trained at the quickstart's ASSUMED_KOMI under ASSUMED_RULES, said
once per process). Every failure is a NetworkError of one line.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fastgo.bounds import KOMI
from fastgo.variants import Backend, Device, Use
from network.batch_evaluator import InProcessEvaluator
from network.checkpoint_file import CheckpointError, read_checkpoint_bytes

if TYPE_CHECKING:      # Network's annotation only
    from rundata.config import ModelConfig

log = logging.getLogger("fastgo.network")

DEFAULT_BACKEND = Backend.AUTO  # the fastest backend that agrees with fp32 (backend_choice)
DEFAULT_CAPACITY = 64           # positions of one forward pass the runner is sized for
ASSUMED_KOMI = 7.5              # the quickstart's, for checkpoints that do not record theirs
ASSUMED_RULES = "tromp-taylor"  # area scoring, positional superko: the rules fastgo plays
RULES = ("tromp-taylor",)
_assumed_said: set = set()      # checkpoint paths whose assumed komi and rules were said


@dataclass(frozen=True)
class Serves:
    """What a network loaded for one Use needs (KataGo's Setup::initializeNNEvaluators
    `setupFor`): `search`: the search's policy and value through the server's runner
    (Network.evaluator); `heads`: every head (ownership, score, lead) through HeadsEvaluator
    (Network.heads, and Network.evaluator too where there is no runner), each head checked on
    the canaries at load; `threads`: the CPU threads its runner runs with, and torch's for the
    process that plays it (set_torch_threads, the program's to call; None: torch's own)."""
    search: bool
    heads: bool
    threads: int | None


USES = {
    Use.MATCH: Serves(search=True, heads=False, threads=1),     # arena, compare, the evaluator:
                                                                # one thread a side, as equal
                                                                # time measures a player
    Use.PLAY: Serves(search=True, heads=False, threads=None),   # `fastgo play`: the search alone
    Use.GTP: Serves(search=True, heads=True, threads=None),     # the GTP engine: its search, and
                                                                # kata-analyze's scores and
                                                                # ownership
    Use.ANALYSIS: Serves(search=False, heads=True, threads=None),  # KataGo's analysis protocol
}


class NetworkError(ValueError):
    """A checkpoint that cannot be played: one line naming the file and what is wrong."""


@dataclass
class Network:
    """A checkpoint's network ready to play: `evaluator` (the search's InProcessEvaluator, or
    the HeadsEvaluator where the use has no search), `heads` (the HeadsEvaluator with every
    head, checked at load, where the use asked for them; else None), its ModelConfig, training
    step, the komi and rules it was trained at (`assumed`: they are the quickstart's, the
    checkpoint did not record them), the file it came from and its other records."""
    evaluator: object
    config: ModelConfig
    step: int
    komi: float
    rules: str
    assumed: bool
    path: str
    extra: dict          # the rest the checkpoint carries (the trainer's state, ...)
    backend: str | None = None   # the runner's backend (None: the heads evaluator)
    heads: object = None         # HeadsEvaluator, or None

    @property
    def name(self) -> str:
        return f"{self.config.name}@{self.step}"

    @property
    def shape(self) -> tuple:
        """What its speed on one thread depends on besides the search: (network name, board
        size, encoding, backend)."""
        return (self.config.name, self.config.board_size, self.config.encoding, self.backend)


def trained_at(extra: dict, path: str = "") -> tuple:
    """(komi, rules, assumed) a checkpoint's `extra` records; the quickstart's where it records
    none (said once per file and process); NetworkError for recorded values out of range."""
    komi, rules = extra.get("komi"), extra.get("rules")
    if komi is None and rules is None:
        if path not in _assumed_said:
            _assumed_said.add(path)
            log.warning("%s records no komi or rules: taken as trained at komi %g under %s "
                        "(the quickstart's)", path or "the checkpoint", ASSUMED_KOMI,
                        ASSUMED_RULES)
        return ASSUMED_KOMI, ASSUMED_RULES, True
    if not isinstance(komi, (int, float)) or komi not in KOMI:      # nan and bool too
        raise NetworkError(f"{path}: recorded komi {str(komi)[:40]!r} is not a number in {KOMI}")
    if rules not in RULES:
        raise NetworkError(f"{path}: recorded rules {str(rules)[:40]!r} are not one of "
                           f"{', '.join(RULES)}")
    return float(komi), rules, False


def training_record(komi: float) -> dict:
    """What the trainer records in every checkpoint's extra: the komi and rules it trains at."""
    return {"komi": float(komi), "rules": ASSUMED_RULES}


MAX_ABS_SCORE_OUTPUT = 10_000.0     # points: a score or lead head beyond this is broken


def check_canary_heads(ownership, score, lead) -> None:
    """ValueError naming the head unless the ownership, score and lead outputs on the canary
    positions (each None where the network has no such head) are finite and in range:
    ownership in [-1, 1], a margin within MAX_ABS_SCORE_OUTPUT points. A NaN or inf weight
    there would reach analysis as "scoreLead": NaN, which JSON readers refuse."""
    for name, out, bound in (("ownership", ownership, 1.0 + 1e-4),
                             ("score", score, MAX_ABS_SCORE_OUTPUT),
                             ("lead", lead, MAX_ABS_SCORE_OUTPUT)):
        if out is None:
            continue
        out = np.asarray(out, dtype=np.float64)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"the {name} head gives non-finite outputs on the canary positions")
        if out.size and np.abs(out).max() > bound:
            raise ValueError(f"the {name} head's canary outputs are out of range (max |{name}| "
                             f"{np.abs(out).max():.3g}, the bound {bound:g})")


def _device(device):
    import torch

    if device == Device.AUTO:
        return Device.CUDA if torch.cuda.is_available() else Device.CPU
    if device == Device.CUDA and not torch.cuda.is_available():
        raise NetworkError("--device cuda: this machine has no usable CUDA device")
    return device


def set_torch_threads(threads: int | None) -> None:
    """torch's intra-op CPU threads for this whole process (None: left as they are). torch keeps
    one count a process, so a program that plays a network sets it, once the network is
    loaded (a bad file is refused before torch is imported): the arena's and the evaluator's
    checkpoint sides and the reference players with USES[Use.MATCH].threads (one thread a
    side, as equal time measures a player), `fastgo gtp`, `play` and `analysis` with their
    --threads. The runner's other backends (OpenVINO, ONNX Runtime) take their threads as an
    argument (load_network's `threads`)."""
    if threads is None:
        return
    import torch

    torch.set_num_threads(max(1, int(threads)))


def match_threads(settings_threads: int) -> int:
    """The threads of a match side: its settings' (0: the match use's, one)."""
    threads = settings_threads or USES[Use.MATCH].threads
    assert threads is not None
    return threads


def load_network(source, use=Use.MATCH, *, device=Device.CPU, backend=DEFAULT_BACKEND,
                 capacity=DEFAULT_CAPACITY, threads=None, expect=None, data=None,
                 what=None) -> Network:
    """The Network of checkpoint `source` (a path; `data`: its bytes already read) for `use`
    (a Use or its name), see the module: the one way every command and role loads a network to
    play. `expect`: a ModelConfig whose board size and encoding the checkpoint must have.
    `threads`: the runner's CPU threads (None: the use's); torch's threads for the whole
    process are the program's to set (set_torch_threads), never set here. `what`: how the
    caller's user named the checkpoint (a flag such as '--model'), the start of every message
    (default: its path)."""
    if use not in Use.choices():
        raise ValueError(f"load_network: use must be one of {', '.join(Use.choices())}, got "
                         f"{use!r}")
    serves = USES[use]
    threads = serves.threads if threads is None else int(threads)

    path = str(source)
    label = what or path
    try:
        # the file and its archive first: a wrong path is refused before torch is imported
        data = read_checkpoint_bytes(source) if data is None else data
        from network.checkpoint import load_checkpoint
        from network.runner import canary_planes, check_canary_outputs

        checkpoint = load_checkpoint(source, expect=expect, data=data)
    except CheckpointError as err:       # its text names the file and what is wrong
        raise NetworkError(f"cannot load {label}: {' '.join(str(err).split())[:300]}") from None
    except OSError as err:
        raise NetworkError(f"cannot load {label}: {path}: {err.strerror or err}") from None
    komi, rules, assumed = trained_at(checkpoint.extra or {}, path)
    where = _device(device)
    planes = canary_planes(checkpoint.config)
    evaluator: object = None             # the search's InProcessEvaluator, else the heads
    heads: object = None                 # a HeadsEvaluator where the use serves every head
    runs_on: str | None = None           # the runner's backend
    try:
        if serves.search:    # the runner copies the model (fused) before the heads take it
            options = {} if threads is None else {"threads": threads}
            in_process = InProcessEvaluator(checkpoint.model, device=where, backend=backend,
                                            capacity=max(8, int(capacity)),
                                            version=checkpoint.step, **options)
            outputs = in_process.runner.forward(planes, graphs=False)
            evaluator, runs_on = in_process, in_process.runner.backend
        if serves.heads:
            from network.heads_evaluator import HeadsEvaluator
            heads_evaluator = HeadsEvaluator(checkpoint.model, device=where)
            heads_evaluator.model_version = checkpoint.step
            head_outputs = heads_evaluator(planes)
            heads = heads_evaluator
            if not serves.search:
                evaluator, outputs = heads_evaluator, head_outputs
    except RuntimeError as err:          # a device or backend that cannot run it
        raise NetworkError(f"cannot run {label} on {where}: "
                           f"{' '.join(str(err).split())[:300]}") from None
    try:       # NaN or inf weights, or outputs out of range, are refused before the first game
        check_canary_outputs(*outputs[:2])
        if heads is not None:
            check_canary_heads(*head_outputs[2:])
    except ValueError as err:
        raise NetworkError(f"refusing {label} {path}: {err}" if what else
                           f"refusing {path}: {err}") from None
    return Network(evaluator=evaluator, config=checkpoint.config, step=checkpoint.step,
                   komi=komi, rules=rules, assumed=assumed, path=path,
                   extra=dict(checkpoint.extra or {}), backend=runs_on, heads=heads)
