"""A grown network computes what the small one computed (evaluation and training mode, every
head), its new parts can learn, and trainer.grow stages parse and apply by step."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from network.model import build_model
from rundata.config import ConfigError, ModelConfig, loads_config
from trainer.growth import grow_model, shape_at


def _small_trained_like(seed=3):
    config = dataclasses.replace(ModelConfig(), board_size=5, encoding="katago", blocks=2,
                                 channels=8, global_pool_every=2, value_hidden=8,
                                 score_head=True, lead_head=True, opponent_policy_head=True,
                                 soft_policy_head=True)
    model = build_model(config, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():          # weights and statistics away from their initial values
        for name, tensor in model.state_dict().items():
            if tensor.is_floating_point():
                tensor.add_(0.3 * torch.randn(tensor.shape, generator=gen))
                if name.endswith("running_var"):
                    tensor.abs_().add_(0.5)
    return model


def _planes(config, n=6, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(n, config.planes, config.board_size, config.board_size, generator=gen) < 0.4).float()


@pytest.mark.parametrize("blocks,channels", [(2, 8), (4, 8), (2, 13), (5, 16)])
@pytest.mark.parametrize("train_mode", [False, True])
def test_a_grown_network_computes_what_the_small_one_did(blocks, channels, train_mode):
    small = _small_trained_like()
    big = grow_model(small, blocks, channels, seed=11)
    assert (big.config.blocks, big.config.channels) == (blocks, channels)
    x = _planes(small.config)
    small.train(train_mode), big.train(train_mode)
    with torch.no_grad():
        a, b = small.forward_train(x), big.forward_train(x)
    for name, left, right in zip(a._fields, a, b):
        assert left is not None and right is not None, name
        assert torch.allclose(left, right, rtol=1e-5, atol=1e-5), name


def test_the_new_parts_get_gradients():
    small = _small_trained_like()
    big = grow_model(small, 3, 12, seed=5)
    x = _planes(small.config, n=8)
    out = big.forward_train(x)
    loss = out.logits.logsumexp(1).mean() + out.value.pow(2).mean() + out.ownership.pow(2).mean()
    loss.backward()
    new_block = big.blocks[2]
    assert new_block.bn2.weight.grad.abs().sum() > 0            # the new block switches on
    # the zero weights through which new channels reach old ones learn at once
    assert big.blocks[0].conv1.weight.grad[:8, 8:].abs().sum() > 0
    assert big.blocks[1].conv2.weight.grad[:8, 8:].abs().sum() > 0
    assert big.policy_conv.weight.grad[:, 8:].abs().sum() > 0


def test_a_network_never_shrinks():
    small = _small_trained_like()
    with pytest.raises(ValueError, match="only grows"):
        grow_model(small, 1, 8)
    with pytest.raises(ValueError, match="only grows"):
        grow_model(small, 2, 4)


def _stages(entries):
    grow = ", ".join(f'"{e}"' for e in entries)
    # a model smaller than every stage: the stages are checked against it too (Config.check)
    return loads_config(f"[model]\nblocks = 1\nchannels = 8\n[trainer]\ngrow = [{grow}]\n"
                        ).trainer.grow_stages()


def test_stages_parse_sort_and_apply_by_step():
    stages = _stages(["30000:b8c64", "10000:b6c48"])
    assert stages == [(10000, 6, 48), (30000, 8, 64)]
    base = ModelConfig(blocks=4, channels=32)
    assert [shape_at(base, stages, s).name for s in (0, 9999, 10000, 29999, 30000, 10**9)] == \
        ["b4c32", "b4c32", "b6c48", "b6c48", "b8c64", "b8c64"]
    for bad in (["10:b6c48", "10:b8c64"], ["10:b8c64", "20:b6c64"], ["b6c48"], ["1:b6c48x"],
                [""], ["5:b0c8"], ["5:b2c2000"]):
        with pytest.raises(ConfigError, match="grow"):
            _stages(bad)


def test_a_shape_stopped_gaining_when_its_recent_best_is_within_flat_elo_of_its_older_best():
    from trainer.growth import stopped_gaining
    ratings = {"random": [0, 0, 0], "ckpt-1000": [400, 0, 800], "ckpt-3000": [700, 500, 900],
               "ckpt-6000": [650, 0, 9], "ckpt-7000": [720, 0, 9], "gnugo:5": [2000, 0, 0]}
    # the last 4000 steps (after 3000): best 720 at 7000, 20 above 700 at 3000
    why = stopped_gaining(ratings, 0, 4000, 50.0)
    assert "ckpt-7000" in why and "ckpt-3000" in why and "+20" in why
    assert stopped_gaining(ratings, 0, 4000, 20.0) is None          # 20 is not less than 20
    assert stopped_gaining(ratings, 2000, 4000, 50.0) is not None   # ckpt-1000 is not needed
    assert stopped_gaining(ratings, 4000, 4000, 50.0) is None       # nothing older of the shape
    assert stopped_gaining(ratings, 0, 8000, 50.0) is None          # nothing older than 8000
    one_recent = {"ckpt-0": 500, "ckpt-5000": 505}
    assert stopped_gaining(one_recent, 0, 4000, 50.0) is None       # one evaluation is not a trend
    assert stopped_gaining(one_recent, 0, 4000, 50.0, min_recent=1) is not None
    # a low unlucky recent evaluation neither triggers nor hides: best against best
    assert stopped_gaining({"ckpt-0": 0, "ckpt-5000": 300, "ckpt-6000": -200}, 0, 4000, 50) is None
    # what is not a checkpoint's rating is ignored, whatever it holds
    odd = {"ckpt-x": 1, "ckpt-10": "high", "ckpt-20": [], "ckpt-30": True, 7: 5,
           "ckpt-40": float("nan"), "ckpt-50": [10.0], "ckpt-60": 12.0, "ckpt-70": 11}
    assert "ckpt-60" in stopped_gaining(odd, 0, 15, 50.0)


def test_unreadable_ratings_read_as_none(tmp_path):
    from rundata.statefiles import RATINGS_MAX_BYTES, read_ratings
    path = tmp_path / "ratings.json"
    assert read_ratings(path)["ratings"] == {}
    for text in ("", "[1, 2]", '{"ratings": [1]}', "{" * 100_000, '{"ratings": {"ckpt-2": [1'):
        path.write_text(text)
        assert read_ratings(path) == {"latest": {}, "ratings": {}}
    path.write_text('{"ratings": {"ckpt-2": [1.0, 0.0, 2.0]}}')
    assert read_ratings(path)["ratings"] == {"ckpt-2": [1.0, 0.0, 2.0]}
    path.write_text('{"ratings": {}, "pad": "' + "x" * RATINGS_MAX_BYTES + '"}')
    assert read_ratings(path)["ratings"] == {}


def test_fuzz_ratings_files_never_raise(tmp_path):
    import json as _json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from rundata.statefiles import read_ratings
    from trainer.growth import stopped_gaining
    leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    values = st.recursive(leaves, lambda kids: st.lists(kids, max_size=4) |
                          st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=12)
    names = st.from_regex(r"ckpt-[0-9]{1,5}", fullmatch=True) | st.text(max_size=10)
    path = tmp_path / "ratings.json"

    @settings(max_examples=150, deadline=None)
    @given(st.dictionaries(names, values, max_size=8), st.integers(0, 10**6),
           st.integers(1, 10**6), st.floats(0, 1e4))
    def check(ratings, since, steps, elo):
        path.write_text(_json.dumps({"ratings": ratings}))
        read = read_ratings(path)["ratings"]
        # kept: the [elo, low, high] entries of numbers or nulls (each read as a float)
        kept = {n for n, v in ratings.items() if n and isinstance(v, list) and len(v) == 3
                and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))
                        for x in v)}
        assert set(read) == kept
        for name in kept:
            assert [x if x == x else None for x in read[name]] == [
                float(x) if x is not None and abs(x) <= 1e6 else None for x in ratings[name]]
        why = stopped_gaining(read, since, steps, elo)
        assert why is None or why.startswith("the best checkpoint")

    check()
