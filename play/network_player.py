"""A checkpoint as a player, the one way gtp, play, arena and the evaluator make one: its
options (CheckpointOptions: visits, root search, leaves, backend, device, pass rule, opening
moves, PUCT's changed constants, resignation), the network loaded from them
(network.loading.load_network: a checkpoint loaded, checked and running in this process), and
that network as a SearchPlayer for one game at a time (the GTP engine, `fastgo play`) or a
SearchSide for many games at once (matches). Its search settings come from the network's
encoding; its komi is the one the network was trained at. This module never imports torch:
network.loading imports it only inside load_network, once the checkpoint's file is read and
checked."""
from __future__ import annotations

from dataclasses import dataclass

from fastgo.search_settings import SearchSettings
from fastgo.variants import Backend, Device, PassRule, Search, Use
from network.loading import DEFAULT_CAPACITY, load_network
from play.heads_cache import HeadsCache
from play.match import SearchSide
from play.search_player import SearchPlayer


@dataclass(frozen=True)
class CheckpointOptions:
    """How a checkpoint plays: `visits` root visits a move (equal time sets them later,
    play.equal_time.pace_sides), `search` 'puct' or 'gumbel', `leaves` per search step, the
    CPU inference `backend` and `device`, the runner's `capacity` (None: the loader's default),
    `pass_rule` (fastgo.move_choice), the first `opening_moves` sampled by visits, `changes`:
    ((SearchSettings field, value), ..) other than a player's defaults (c_puct, fpu_reduction),
    `resign`: the root value below which a one-game player resigns (None: never)."""
    visits: int
    search: str = Search.PUCT
    leaves: int = 1
    backend: str = Backend.AUTO
    device: str = Device.CPU
    capacity: int | None = None
    pass_rule: str = PassRule.FILL
    opening_moves: int = 0
    changes: tuple = ()
    resign: float | None = None


def load_checkpoint(path, use, options: CheckpointOptions, *, data=None, expect=None,
                    what=None):
    """The Network of the checkpoint at `path` (its bytes `data` when already read) for `use`
    (network.loading.USES) on the options' device and backend, sized for their capacity;
    `expect`: the ModelConfig it must match; NetworkError (a ValueError of one line) when it
    is unusable. torch is imported only once the file has been read and checked."""
    return load_network(path, use, device=options.device, backend=options.backend,
                        capacity=options.capacity or DEFAULT_CAPACITY, expect=expect,
                        data=data, what=what)


def checkpoint_player(path, options: CheckpointOptions, *, use=Use.GTP, what=None, seed=None):
    """(network, SearchPlayer) of the checkpoint at `path` played by `options`, for one game at
    a time (`fastgo gtp --model` with every head, `fastgo play` with use 'play'):
    load_checkpoint, then options_player."""
    network = load_checkpoint(path, use, options, what=what)
    return network, options_player(network, options, seed=seed)


def checkpoint_side(path, options: CheckpointOptions, *, seed=0, name=None, data=None,
                    expect=None):
    """(network, SearchSide) of the checkpoint at `path` (its bytes `data` when already read;
    `expect`: the ModelConfig it must match) played by `options`, for matches:
    load_checkpoint, then options_side."""
    network = load_checkpoint(path, Use.MATCH, options, data=data, expect=expect)
    return network, options_side(network, options, seed=seed, name=name)


def _settings(network, search, leaves, resign=None, changes=None):
    return SearchSettings.for_play(network.config.encoding, search=search,
                                   leaves_per_game=int(leaves), resign_threshold=resign,
                                   **(changes or {}))


def options_player(network, options: CheckpointOptions, *, seed=None,
                   name=None) -> SearchPlayer:
    """network_player from CheckpointOptions (its opening moves and changes aside: a one-game
    player plays its best move)."""
    return network_player(network, visits=options.visits, search=options.search,
                          leaves=options.leaves, resign=options.resign, seed=seed,
                          pass_rule=options.pass_rule, name=name)


def options_side(network, options: CheckpointOptions, *, seed=0, name=None,
                 fixed_visits=False) -> SearchSide:
    """network_side from CheckpointOptions."""
    return network_side(network, visits=options.visits, search=options.search,
                        leaves=options.leaves, seed=seed, opening_moves=options.opening_moves,
                        pass_rule=options.pass_rule, name=name, changes=dict(options.changes),
                        fixed_visits=fixed_visits)


def network_player(network, *, visits, search=Search.PUCT, leaves=1, resign=None, seed=None,
                   pass_rule=PassRule.FILL, name=None) -> SearchPlayer:
    """A SearchPlayer of `visits` root visits a move (a clock may cut it shorter) over the
    network, for one game at a time; it plays the network's board size only. Where the
    network was loaded with every head (its `heads`), kata-analyze's scores and ownership
    come from them through one HeadsCache: the file is not read again."""
    return SearchPlayer(network.evaluator, visits, _settings(network, search, leaves, resign),
                        name=name or f"{network.config.name}:{visits}", seed=seed,
                        board_size=network.config.board_size, pass_rule=pass_rule,
                        model_komi=network.komi if network.config.score_head else None,
                        analysis_heads=_heads_cache(network.heads))


def _heads_cache(heads):
    """() -> one HeadsCache over the HeadsEvaluator `heads` (None for None): the
    SearchPlayer's analysis_heads."""
    if heads is None:
        return None
    cache = HeadsCache(heads)
    return lambda: cache


def network_side(network, *, visits, search=Search.PUCT, leaves=1, seed=0, opening_moves=0,
                 pass_rule=PassRule.FILL, name=None, changes=None,
                 fixed_visits=False) -> SearchSide:
    """A SearchSide of `visits` root visits a move over the network, for many games at once
    (play.match.play_match); it plays the network's board size only. `changes`: SearchSettings
    fields other than the defaults of a player (c_puct, fpu_reduction)."""
    return SearchSide(network.evaluator, visits, _settings(network, search, leaves,
                                                           changes=changes),
                      name=name or network.name, opening_moves=opening_moves, seed=seed,
                      pass_rule=pass_rule, board_size=network.config.board_size,
                      shape=network.shape, fixed_visits=fixed_visits)
