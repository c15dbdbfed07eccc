"""A checkpoint as a player, the one way gtp, play, analysis, arena and the evaluator make one
from its PlayerSettings (play.player_settings): `load_player_network` loads the network for a
use on the settings' device and backend, sized for their capacity (network.loading.load_network:
a checkpoint loaded, checked and running in this process); `make_search_player` makes that
network a SearchPlayer for one game at a time (the GTP engine, `fastgo play`),
`make_search_side` a SearchSide for many games at once (matches). Their search takes the
network's encoding; a player's komi is the one its network was trained at. This module never
imports torch: network.loading imports it only inside load_network, once the checkpoint's file
is read and checked."""
from __future__ import annotations

from network.loading import Network, load_network
from play.heads_cache import HeadsCache
from play.match import SearchSide
from play.player_settings import PlayerSettings
from play.search_player import SearchPlayer


def load_player_network(path, use, settings: PlayerSettings, *, data=None, expect=None,
                        what=None) -> Network:
    """The Network of the checkpoint at `path` (its bytes `data` when already read) for `use`
    (network.loading.USES) on the settings' device and backend, sized for their capacity, with
    their threads; `expect`: the ModelConfig it must match; `what`: how the user named it (a
    flag). NetworkError (a ValueError of one line) when it is unusable."""
    return load_network(path, use, device=settings.device, backend=settings.backend,
                        capacity=settings.capacity, threads=settings.threads or None,
                        expect=expect, data=data, what=what)


def _search(network, settings: PlayerSettings):
    """The settings' SearchSettings with the network's encoding."""
    return settings.search.replace(encoding=network.config.encoding)


def make_search_player(network, settings: PlayerSettings, *, seed=None,
                       name=None) -> SearchPlayer:
    """A SearchPlayer of the settings' visits a move (a clock may cut it shorter) over the
    network, for one game at a time; it plays the network's board size only and its best move
    from the first (the opening moves are a match side's). Where the network was loaded with
    every head (its `heads`), kata-analyze's scores and ownership come from them through one
    HeadsCache: the file is not read again."""
    return SearchPlayer(network.evaluator, settings.visits, _search(network, settings),
                        name=name or f"{network.config.name}:{settings.visits}", seed=seed,
                        board_size=network.config.board_size, pass_rule=settings.pass_rule,
                        model_komi=network.komi if network.config.score_head else None,
                        analysis_heads=_heads_cache(network.heads))


def _heads_cache(heads):
    """() -> one HeadsCache over the HeadsEvaluator `heads` (None for None): the
    SearchPlayer's analysis_heads."""
    if heads is None:
        return None
    cache = HeadsCache(heads)
    return lambda: cache


def make_search_side(network, settings: PlayerSettings, *, seed=0, name=None,
                     fixed_visits=False) -> SearchSide:
    """A SearchSide of the settings' visits a move over the network, for many games at once
    (play.match.play_match); it plays the network's board size only. `fixed_visits`: equal
    time leaves its visits alone (a reference player)."""
    return SearchSide(network.evaluator, settings.visits, _search(network, settings),
                      name=name or network.name, opening_moves=settings.opening_moves,
                      seed=seed, pass_rule=settings.pass_rule,
                      board_size=network.config.board_size, shape=network.shape,
                      fixed_visits=fixed_visits)
