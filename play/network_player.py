"""A Network (network.loading.load_network: a checkpoint loaded, checked and running
in this process) as a player, the one way gtp, arena and the evaluator make one: a SearchPlayer
for one game at a time (the GTP engine) or a SearchSide for many games at once (matches). Its
search settings come from the network's encoding; its komi is the one the network was trained
at. This module never imports torch: the network comes from the caller."""
from __future__ import annotations

from fastgo.search_settings import SearchSettings
from play.match import SearchSide
from play.search_player import SearchPlayer


def _settings(network, search, leaves, resign=None, changes=None):
    return SearchSettings.for_play(network.config.encoding, search=search,
                                   leaves_per_game=int(leaves), resign_threshold=resign,
                                   **(changes or {}))


def network_player(network, *, visits, search="puct", leaves=1, resign=None, seed=None,
                   pass_rule="fill", name=None, analysis_heads=None) -> SearchPlayer:
    """A SearchPlayer of `visits` root visits a move (a clock may cut it shorter) over the
    network, for one game at a time; it plays the network's board size only.
    analysis_heads: () -> a HeadsCache of the network's every head (kata-analyze), or None."""
    return SearchPlayer(network.evaluator, visits, _settings(network, search, leaves, resign),
                        name=name or f"{network.config.name}:{visits}", seed=seed,
                        board_size=network.config.board_size, pass_rule=pass_rule,
                        model_komi=network.komi if network.config.score_head else None,
                        analysis_heads=analysis_heads)


def network_side(network, *, visits, search="puct", leaves=1, seed=0, opening_moves=0,
                 pass_rule="fill", name=None, changes=None, fixed_visits=False) -> SearchSide:
    """A SearchSide of `visits` root visits a move over the network, for many games at once
    (play.match.play_match); it plays the network's board size only. `changes`: SearchSettings
    fields other than the defaults of a player (c_puct, fpu_reduction)."""
    return SearchSide(network.evaluator, visits, _settings(network, search, leaves,
                                                           changes=changes),
                      name=name or network.name, opening_moves=opening_moves, seed=seed,
                      pass_rule=pass_rule, board_size=network.config.board_size,
                      shape=network.shape, fixed_visits=fixed_visits)
