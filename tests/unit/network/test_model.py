"""The network, its inference runner, checkpoints and the in-process evaluators."""
import numpy as np
import pytest
import torch

from network.batch_evaluator import InProcessEvaluator, RandomEvaluator, UniformEvaluator
from network.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from network.model import build_model, fuse_for_inference
from network.runner import ModelRunner, canary_planes, check_canaries
from rundata.config import ModelConfig

torch.set_num_threads(1)
TOL = dict(rtol=1e-4, atol=1e-4)    # fused batch norm and channels_last vs the plain fp32 forward


def planes(count, config, seed=0):
    rng = np.random.default_rng(seed)
    shape = (count, config.planes, config.board_size, config.board_size)
    return (rng.random(shape) < 0.3).astype(np.uint8)


def reference(model, x):
    with torch.no_grad():
        logits, values = model.eval()(torch.from_numpy(x).float())
    return logits.numpy(), values.numpy()


def randomize_batchnorm(model, seed=1):
    """Non-trivial running statistics, so folding batch norm is really tested."""
    gen = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=gen) * 0.1)
            module.running_var.copy_(torch.rand(module.running_var.shape, generator=gen) + 0.5)
            module.weight.data.copy_(torch.rand(module.weight.shape, generator=gen) + 0.5)
            module.bias.data.copy_(torch.randn(module.bias.shape, generator=gen) * 0.1)
    return model


@pytest.mark.parametrize("size, encoding, pool",
                         [(9, "alphazero", 0), (5, "liberty", 1), (19, "alphazero", 2)])
def test_shapes_and_value_range(size, encoding, pool):
    config = ModelConfig(board_size=size, encoding=encoding, blocks=2, channels=8, global_pool_every=pool)
    model = build_model(config, seed=0)
    logits, values = reference(model, planes(3, config))
    assert logits.shape == (3, size * size + 1) and values.shape == (3,)
    assert np.all(np.abs(values) <= 1)
    assert (model.blocks[1].pool.__class__.__name__ == "GlobalPoolBias") == bool(pool)


def test_seeded_build_is_reproducible():
    config = ModelConfig(blocks=1, channels=8)
    a, b = build_model(config, seed=3), build_model(config, seed=3)
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb)


@pytest.mark.parametrize("block", ["residual", "nested_bottleneck"])
@pytest.mark.parametrize("channels_last, fuse", [(False, False), (True, False), (False, True), (True, True)])
def test_runner_matches_plain_forward(channels_last, fuse, block):
    config = ModelConfig(blocks=2, channels=16, global_pool_every=2, block=block)
    model = randomize_batchnorm(build_model(config, seed=0)).eval()
    x = planes(13, config)
    want_logits, want_values = reference(model, x)
    runner = ModelRunner(model, channels_last=channels_last, fuse_batchnorm=fuse, capacity=5)
    logits, values = runner.forward(x)          # 13 rows through a capacity of 5: chunked
    np.testing.assert_allclose(logits, want_logits, **TOL)
    np.testing.assert_allclose(values, want_values, **TOL)
    assert runner.describe()["layout"] == ("channels_last" if channels_last else "contiguous")


def test_onnx_backend_matches_plain_forward():
    config = ModelConfig(board_size=7, blocks=2, channels=16, global_pool_every=1)
    model = randomize_batchnorm(build_model(config, seed=0)).eval()
    x = planes(11, config)
    runner = ModelRunner(model, backend="onnx", capacity=4)
    logits, values = runner.forward(x)
    want_logits, want_values = reference(model, x)
    np.testing.assert_allclose(logits, want_logits, **TOL)
    np.testing.assert_allclose(values, want_values, **TOL)
    assert runner.describe()["backend"] == "onnx-fp32"


def test_fuse_leaves_the_original_alone():
    model = randomize_batchnorm(build_model(ModelConfig(blocks=1, channels=8), seed=0))
    fused = fuse_for_inference(model)
    assert isinstance(model.stem_bn, torch.nn.BatchNorm2d)
    assert isinstance(fused.stem_bn, torch.nn.Identity)


@pytest.mark.parametrize("block", ["residual", "nested_bottleneck"])
def test_checkpoint_round_trip(tmp_path, block):
    config = ModelConfig(board_size=7, blocks=2, channels=8, block=block)
    model = randomize_batchnorm(build_model(config, seed=0))
    path = tmp_path / "a.ckpt"
    content_hash = save_checkpoint(path, model, step=42, extra={"lr": 0.1})
    ckpt = load_checkpoint(path, expect=config)
    assert (ckpt.step, ckpt.config, ckpt.content_hash, ckpt.extra) == (42, config, content_hash, {"lr": 0.1})
    x = planes(4, config)
    for got, want in zip(reference(ckpt.model, x), reference(model, x)):
        np.testing.assert_array_equal(got, want)
    assert not list(tmp_path.glob(".tmp-*"))      # the temporary file was renamed away


def test_checkpoint_refusals(tmp_path):
    config = ModelConfig(blocks=1, channels=8)
    model = build_model(config, seed=0)
    path = tmp_path / "a.ckpt"
    save_checkpoint(path, model, step=1)
    good = path.read_bytes()

    # wrong board size or encoding for the slot
    with pytest.raises(CheckpointError, match="expected 19x19"):
        load_checkpoint(path, expect=ModelConfig(board_size=19))
    # truncated, garbage
    (tmp_path / "t.ckpt").write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="not a fastgo checkpoint"):
        load_checkpoint(tmp_path / "t.ckpt")
    (tmp_path / "g.ckpt").write_bytes(b"\x00garbage" * 100)
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "g.ckpt")

    payload = torch.load(path, weights_only=True)
    # a tensor changed after hashing
    tampered = dict(payload, state_dict=dict(payload["state_dict"]))
    key = "stem.weight"
    tampered["state_dict"][key] = tampered["state_dict"][key] + 1
    torch.save(tampered, tmp_path / "h.ckpt")
    with pytest.raises(CheckpointError, match="hash mismatch"):
        load_checkpoint(tmp_path / "h.ckpt")
    # the config says b2 but the weights are b1 (hash consistent)
    other = dict(payload, model_config=dict(payload["model_config"], blocks=2))
    torch.save(other, tmp_path / "s.ckpt")
    with pytest.raises(CheckpointError, match="do not fit"):
        load_checkpoint(tmp_path / "s.ckpt")
    # an impossible config value names the key
    bad = dict(payload, model_config=dict(payload["model_config"], channels=0))
    torch.save(bad, tmp_path / "c.ckpt")
    with pytest.raises(CheckpointError, match="model_config.channels"):
        load_checkpoint(tmp_path / "c.ckpt")
    # not a fastgo checkpoint, and no arbitrary pickled objects
    torch.save({"state_dict": {}}, tmp_path / "n.ckpt")
    with pytest.raises(CheckpointError, match="not a fastgo checkpoint"):
        load_checkpoint(tmp_path / "n.ckpt")
    torch.save(dict(payload, extra={"obj": Evil()}), tmp_path / "p.ckpt")
    with pytest.raises(CheckpointError, match="unreadable") as info:
        load_checkpoint(tmp_path / "p.ckpt")
    assert "weights_only=False" not in str(info.value)      # never advise loading unsafely


class Evil:
    def __reduce__(self):
        return (print, ("this must never run",))


def test_canaries():
    config = ModelConfig(blocks=1, channels=8, encoding="liberty")
    x = canary_planes(config)
    assert x.shape == (4, 11, 9, 9) and x.dtype == np.uint8
    assert x[0, 8].all() and x[1, 9].all()
    # Every encoding: the empty board as the board encodes it (katago: plane 2 all ones, plane
    # 15 Black to move).
    katago = canary_planes(ModelConfig(blocks=1, channels=8, encoding="katago"))
    assert katago[0, 2].all() and katago[0, 15].all() and not katago[1, 15].any()
    assert not katago[0, :2].any() and not katago[0, 3:15].any()
    model = build_model(config, seed=0)
    check_canaries(ModelRunner(model))
    with torch.no_grad():
        model.policy_fc.bias[3] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        check_canaries(ModelRunner(model))
    with torch.no_grad():
        model.policy_fc.bias[3] = 1e9
    with pytest.raises(ValueError, match="out of range"):
        check_canaries(ModelRunner(model))


def test_evaluators(tmp_path):
    config = ModelConfig(blocks=1, channels=8)
    model = build_model(config, seed=0)
    x = planes(6, config)
    want = reference(model, x)

    ev = InProcessEvaluator(model)
    t1, t2 = ev.submit(x[:2]), ev.submit(x[2:])
    l2, v2 = ev.receive(t2)
    l1, v1 = ev.receive(t1)
    np.testing.assert_allclose(np.concatenate([l1, l2]), want[0], **TOL)
    np.testing.assert_allclose(np.concatenate([v1, v2]), want[1], **TOL)
    with pytest.raises(KeyError):
        ev.receive(t1)
    with pytest.raises(ValueError):
        ev.evaluate(np.zeros((1, 11, 9, 9), np.uint8))

    save_checkpoint(tmp_path / "m.ckpt", model, step=9)
    from_file = InProcessEvaluator(str(tmp_path / "m.ckpt"))
    assert from_file.model_version == 9
    np.testing.assert_allclose(from_file.evaluate(x)[0], want[0], **TOL)

    np.testing.assert_allclose(ev(x)[0], want[0], **TOL)          # callable, as the search takes it
    logits, values = UniformEvaluator(9).evaluate(x)
    assert logits.shape == (6, 82) and not logits.any() and not values.any()
    r1, r2 = RandomEvaluator(9, seed=1), RandomEvaluator(9, seed=1)
    np.testing.assert_array_equal(r1.evaluate(x)[0], r2.receive(r2.submit(x))[0])
