"""The variants a run chooses between, each defined once as a str-valued Enum: the trainer's
algorithm (`trainer.algorithm`), the root search (`selfplay.search`, the players' `--search`), and
the self-play worker an algorithm's games are played by (`selfplay_worker`, the one map from one
to the other).

They sit on the kernel's floor because that is the lowest of their users: the search settings
(fastgo.search_settings) need `Search`, and the kernel never imports the run's infrastructure
(fastgo.run), while the config schema (fastgo.run.config) validates against them from above, and
the workers, the trainer, the benches and the roles read them higher up; roles.registry
re-exports them beside the roles. A member is its own string (StrEnum): configs, checkpoints,
status files and command lines keep the words they always had. Stdlib only.
"""
from __future__ import annotations

from enum import StrEnum


class Algorithm(StrEnum):
    """What the trainer learns from (trainer.factory.make_trainer)."""
    ALPHAZERO = "alphazero"         # search targets from a replay window
    REINFORCE = "reinforce"         # policy gradient on games against the opponent pool
    VALUE = "value"                 # the value head on one position per game (AlphaGo's value stage)


class Search(StrEnum):
    """The root search of fastgo.mcts.BatchedSearch."""
    PUCT = "puct"                   # AlphaZero: PUCT with Dirichlet noise, visit-count targets
    GUMBEL = "gumbel"               # Gumbel MuZero: Gumbel-top-k, sequential halving (fastgo.gumbel)


class Worker(StrEnum):
    """The self-play worker that plays an algorithm's games."""
    SEARCH = "search"               # selfplay_workers.worker.SelfplayWorker: a search a move
    POLICY = "policy"               # selfplay_workers.policy_worker.PolicyWorker: moves sampled
                                    # from the policy, no search


_WORKER = {Algorithm.ALPHAZERO: Worker.SEARCH, Algorithm.REINFORCE: Worker.POLICY,
           Algorithm.VALUE: Worker.POLICY}


def selfplay_worker(algorithm) -> Worker:
    """The worker that plays the games `algorithm` (an Algorithm or its name) trains on; the
    role, the self-play bench and the policy-only worker's own check all ask here. ValueError for
    a name that is no Algorithm."""
    return _WORKER[Algorithm(algorithm)]
