"""A match played in chunks: every chunk gets new openings, so many chunks are many games."""
import zlib

import numpy as np

from fastgo.game import Game
from fastgo.search_settings import SearchSettings
from play.match import SearchSide, play_match


def fixed_network(planes):
    """Logits and values that depend on the position only (a trained network's determinism)."""
    logits = np.empty((len(planes), 26), np.float32)
    values = np.empty(len(planes), np.float32)
    for i, p in enumerate(planes):
        rng = np.random.default_rng(zlib.crc32(p.tobytes()))
        logits[i] = rng.normal(0, 1, 26)
        values[i] = rng.uniform(-0.5, 0.5)
    return logits, values


def openings_of(sides, chunks, reset):
    a, b = sides
    out = []
    for chunk in range(chunks):
        if reset:                       # what the arena did before: the same stream per chunk
            a.prepared = b.prepared = 0
        result = play_match(a, b, 4, size=5, komi=0.5, keep_records=True, game_offset=4 * chunk)
        out.append([tuple(game.moves[:4]) for game in result.records])
    return out


def sides():
    return (SearchSide(fixed_network, 8, SearchSettings.for_play(random_symmetry=False),
                       opening_moves=4, seed=3),
            SearchSide(fixed_network, 8, SearchSettings.for_play(random_symmetry=False),
                       opening_moves=4, seed=4))


def test_chunks_of_one_match_play_different_games():
    first, second, third = openings_of(sides(), 3, reset=False)
    assert first != second and second != third and first != third
    # The check can fail: with one stream per match the chunks repeat exactly.
    repeated = openings_of(sides(), 2, reset=True)
    assert repeated[0] == repeated[1]


def test_gumbel_side_varies_the_opening_only():
    # Two Gumbel sides with different seeds: the opening moves (Gumbel noise) differ between
    # their games; after the opening a side's search has no noise, so the move it picks in a
    # position is the same whatever its seed.
    def gumbel_side(seed):
        return SearchSide(fixed_network, 8,
                          SearchSettings.for_play(random_symmetry=False, search="gumbel"),
                          opening_moves=2, seed=seed)
    a, b = gumbel_side(1), gumbel_side(2)
    result = play_match(a, b, 8, size=5, komi=0.5, keep_records=True)
    assert len({tuple(game.moves[:2]) for game in result.records}) > 1
    late = [game for game in result.records if len(game.moves) > 6]
    assert late
    for game in late:
        position = Game(5, 0.5)
        for _, move in game.moves[:4]:
            position.play(move)
        picks = set()
        for seed in (10, 11, 12):
            side = gumbel_side(seed)
            side.prepare(1, 5, 0.5)
            picks.update(side.moves([0], [position]))
            assert np.nanmax(np.abs(side.search.root_gumbel(0)["noise"])) == 0.0
        assert len(picks) == 1
    opening = gumbel_side(10)
    opening.prepare(1, 5, 0.5)
    opening.moves([0], [Game(5, 0.5)])
    assert np.nanmax(np.abs(opening.search.root_gumbel(0)["noise"])) > 0.0
