"""model.block = "nested_bottleneck": KataGo's nested bottleneck block in the tower, its shape and
cost and its name in configs (its inference paths and checkpoints: test_model's runner and
checkpoint tests and test_backends, each for both blocks; a checkpoint from before the key:
test_model_aux_heads)."""
import json

import pytest
import torch

from network.model import NestedBottleneckBlock, ResidualBlock, build_model
from rundata.config import ConfigError, ModelConfig, loads_config

NBT = dict(block="nested_bottleneck")


def tower_convs(model):
    return [m for m in model.blocks.modules() if isinstance(m, torch.nn.Conv2d)]


@pytest.mark.parametrize("blocks, channels", [(1, 16), (3, 48), (2, 7)])
def test_the_tower_is_four_3x3_deep_a_block_at_half_width(blocks, channels):
    model = build_model(ModelConfig(blocks=blocks, channels=channels, **NBT), seed=0)
    convs = tower_convs(model)
    inner = channels // 2
    assert [c.kernel_size for c in convs].count((3, 3)) == 4 * blocks
    assert {(c.in_channels, c.out_channels) for c in convs if c.kernel_size == (3, 3)} == {(inner, inner)}
    # multiply-adds a point: two 1x1 convolutions (C x C/2 each) and four 3x3 at C/2
    assert sum(c.weight.numel() for c in convs) == blocks * (2 * channels * inner + 4 * 9 * inner * inner)


def test_it_costs_10_18ths_of_a_residual_tower_of_the_same_width():
    residual = build_model(ModelConfig(blocks=4, channels=64), seed=0)
    nested = build_model(ModelConfig(blocks=4, channels=64, **NBT), seed=0)
    cost = [sum(c.weight.numel() for c in tower_convs(m)) for m in (residual, nested)]
    assert cost[1] * 18 == cost[0] * 10
    assert all(isinstance(b, NestedBottleneckBlock) for b in nested.blocks)
    assert all(isinstance(b, ResidualBlock) for b in residual.blocks)


def test_a_block_whose_last_batch_norm_is_off_passes_its_input_through():
    # the block is residual: with the expanding batch norm at zero it adds nothing to x >= 0
    block = NestedBottleneckBlock(16, global_pool=True).eval()
    with torch.no_grad():
        block.expand_bn.weight.zero_()
        block.expand_bn.bias.zero_()
        x = torch.relu(torch.randn(3, 16, 9, 9, generator=torch.Generator().manual_seed(0)))
        assert torch.equal(block(x), x)
        block.expand_bn.weight.fill_(1.0)
        assert not torch.allclose(block(x), x)


def test_global_pooling_sits_in_the_first_inner_block_of_every_kth_block():
    model = build_model(ModelConfig(blocks=4, channels=16, global_pool_every=2, **NBT), seed=0)
    pooled = [type(b.inner1.pool).__name__ == "GlobalPoolBias" for b in model.blocks]
    assert pooled == [False, True, False, True]
    assert not any(type(b.inner2.pool).__name__ == "GlobalPoolBias" for b in model.blocks)


def test_the_name_says_the_block_and_reads_back():
    assert ModelConfig(blocks=4, channels=64, **NBT).name == "b4c64nbt"
    assert ModelConfig(blocks=4, channels=64).name == "b4c64"
    assert ModelConfig.from_name("b4c64nbt") == ModelConfig(blocks=4, channels=64, **NBT)
    assert ModelConfig.from_name("b4c64").block == "residual"
    with pytest.raises(ConfigError, match="nbt"):
        ModelConfig.from_name("b4c64xyz")
    with pytest.raises(ConfigError, match="model.block"):
        loads_config('[model]\nblock = "bottleneck"\n')


def test_a_nested_tower_does_not_grow():
    with pytest.raises(ConfigError, match="trainer.grow"):
        loads_config('[model]\nblock = "nested_bottleneck"\nblocks = 2\nchannels = 16\n'
                     '[trainer]\ngrow = ["1000:b4c16"]\n')
    from trainer.growth import grow_model
    with pytest.raises(ValueError, match="residual blocks only"):
        grow_model(build_model(ModelConfig(blocks=1, channels=8, **NBT), seed=0), 2, 8)


@pytest.mark.parametrize("net, said", [("b1c8nbt", "b1c8nbt"), ("b1c8", "b1c8")])
def test_bench_backends_times_the_network_its_name_gives(net, said, tmp_path):
    from fastgo_cli.bench import backends as bench
    from fastgo_cli.main import command_parser

    parser, _ = command_parser("bench", "backends")
    out = tmp_path / "bench.json"
    args = parser.parse_args(["--net", net, "--size", "5", "--batch", "4", "--threads", "1",
                              "--seconds", "0.02", "--backends", "torch-fp32", "--json", str(out)])
    assert bench.run(args) == 0
    assert json.loads(out.read_text())["model"] == said


def test_bench_backends_refuses_a_name_it_cannot_read(capsys):
    from fastgo_cli.bench import backends as bench
    from fastgo_cli.main import command_parser

    parser, _ = command_parser("bench", "backends")
    assert bench.run(parser.parse_args(["--net", "b1c8x", "--backends", "torch-fp32"])) == 2
    assert "b6c64nbt" in capsys.readouterr().err
