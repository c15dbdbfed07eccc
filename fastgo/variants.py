"""The variants a run and its commands choose between, each defined once as a str-valued Enum:
the trainer's algorithm (`trainer.algorithm`), the root search (`selfplay.search`, the players'
`--search`), the self-play worker an algorithm's games are played by (`selfplay_worker`, the one
map from one to the other), the pass rule (`selfplay.pass_rule`, `selfplay.policy_pass_rule`,
`--pass-rule`), the CPU inference backend (`server.backend`, `--backend`), the device
(`server.device`, `trainer.device`, `--device`) and what a network is loaded for (network.loading).

They sit on the kernel's floor because that is the lowest of their users: the search settings
(fastgo.search_settings) need `Search` and the move choice (fastgo.move_choice) `PassRule`, and
the kernel never imports the run's infrastructure (rundata), while the config schema
(rundata.config) validates against them from above, and the workers, the trainer, the
network, the benches and the roles read them higher up; roles.registry re-exports the run's
variants beside the roles. A member is its own string (StrEnum): configs, checkpoints, status
files and command lines keep the words they always had; `choices()` lists them in the order
help texts and messages print. Stdlib only.
"""
from __future__ import annotations

from enum import StrEnum


class Variant(StrEnum):
    """A str-valued Enum of the words a config or a command line takes."""

    @classmethod
    def choices(cls) -> tuple[str, ...]:
        """The members' words, in definition order (a Literal's, argparse's choices)."""
        return tuple(member.value for member in cls)


class Algorithm(Variant):
    """What the trainer learns from (trainer.factory.make_trainer)."""
    ALPHAZERO = "alphazero"         # search targets from a replay window
    REINFORCE = "reinforce"         # policy gradient on games against the opponent pool
    VALUE = "value"                 # the value head on one position per game (AlphaGo's value stage)


class Search(Variant):
    """The root search of fastgo.mcts.BatchedSearch."""
    PUCT = "puct"                   # AlphaZero: PUCT with Dirichlet noise, visit-count targets
    GUMBEL = "gumbel"               # Gumbel MuZero: Gumbel-top-k, sequential halving (fastgo.gumbel)


class Worker(Variant):
    """The self-play worker that plays an algorithm's games."""
    SEARCH = "search"               # selfplay_workers.worker.SelfplayWorker: a search a move
    POLICY = "policy"               # selfplay_workers.policy_worker.PolicyWorker: moves sampled
                                    # from the policy, no search


class PassRule(Variant):
    """When a player may pass (fastgo.move_choice describes each rule in full; policy-only play
    takes "settled" and "decided" as "fill")."""
    FREE = "free"                   # the pass is a move like any other
    FILL = "fill"                   # no pass while a legal point outside the own eyes is left
    SETTLED = "settled"             # as fill, or once every empty region borders one colour
    DECIDED = "decided"             # as fill, or once the position is decided (fastgo.ending)


# spellings the project no longer takes -> the one that replaced each
OLD_PASS_RULES = {"filled": PassRule.FILL, "search": PassRule.FREE}


def check_pass_rule(value, what="pass_rule") -> PassRule:
    """The PassRule `value` names; else ValueError naming `what`, the rules, and the new
    spelling where `value` is an old one ("filled" -> "fill", "search" -> "free")."""
    try:
        return PassRule(value)           # a member, or its word (called for every move played)
    except ValueError:
        pass
    if isinstance(value, str) and value in OLD_PASS_RULES:
        raise ValueError(f"{what}: {value!r} is now spelt {OLD_PASS_RULES[value].value!r}")
    raise ValueError(f"{what} must be one of {list(PassRule.choices())}, got {value!r}")


class Backend(Variant):
    """A CPU inference backend (network.backends), or a name that stands for one."""
    AUTO = "auto"                   # the fastest available one that agrees with fp32
                                    # (network.backend_choice)
    TORCH = "torch"                 # torch-fp32
    ONNX = "onnx"                   # onnx-fp32
    TORCH_FP32 = "torch-fp32"
    TORCH_BF16 = "torch-bf16"       # bf16 autocast
    ONNX_FP32 = "onnx-fp32"         # ONNX Runtime
    ONNX_INT8 = "onnx-int8"         # ONNX Runtime, QDQ int8
    OPENVINO_F32 = "openvino-f32"
    OPENVINO_BF16 = "openvino-bf16"
    OPENVINO_INT8 = "openvino-int8"  # from the same QDQ model as onnx-int8


# the short names -> the backend each stands for
BACKEND_ALIASES = {Backend.TORCH: Backend.TORCH_FP32, Backend.ONNX: Backend.ONNX_FP32}
# the backends that run (network.backends builds each): neither auto nor an alias
INFERENCE_BACKENDS = tuple(backend.value for backend in Backend
                           if backend is not Backend.AUTO and backend not in BACKEND_ALIASES)
# the names a CUDA device takes (it runs torch); every other backend runs on the CPU only
CUDA_BACKENDS = (Backend.AUTO, Backend.TORCH, Backend.TORCH_FP32)


class Device(Variant):
    """Where a network runs."""
    AUTO = "auto"                   # CUDA where torch sees a device, else the CPU
    CPU = "cpu"
    CUDA = "cuda"


class Use(Variant):
    """What a network is loaded for (network.loading.USES says what each needs)."""
    MATCH = "match"                 # arena, compare, the evaluator
    PLAY = "play"                   # `fastgo play`: the search alone
    GTP = "gtp"                     # the GTP engine: the search, and kata-analyze's heads
    ANALYSIS = "analysis"           # KataGo's analysis protocol: the heads alone


_WORKER = {Algorithm.ALPHAZERO: Worker.SEARCH, Algorithm.REINFORCE: Worker.POLICY,
           Algorithm.VALUE: Worker.POLICY}


def selfplay_worker(algorithm) -> Worker:
    """The worker that plays the games `algorithm` (an Algorithm or its name) trains on; the
    role, the self-play bench and the policy-only worker's own check all ask here. ValueError for
    a name that is no Algorithm."""
    return _WORKER[Algorithm(algorithm)]
