"""A checkpoint says which trainer wrote it: a trainer of another algorithm resuming from it keeps
the weights and the step but starts its optimizer afresh (another loss's Adam moments would
scale its first steps wrongly); the same algorithm resumes the optimizer state too."""
import torch

from network.checkpoint import load_checkpoint
from rundata.config import load_config
from rundata.rundir import open_run_dir
from trainer.factory import make_trainer
from trainer.training_core import TrainingCore


def _supervised_core(config, run):
    """A training core that writes checkpoints as the supervised trainer does."""
    core = TrainingCore(config, run, algorithm="supervised")
    core.resume()
    return core


def _config(path):
    """The config at `path`, rewritten with AdamW for SGD."""
    text = open(path).read().replace('optimizer = "sgd"', 'optimizer = "adamw"')
    open(path, "w").write(text)
    return load_config(path)


def _one_step(core):
    core.model.train()
    size = core.config.model.board_size
    planes = core.config.model.planes
    x = torch.rand(4, planes, size, size)
    logits, value = core.model(x)
    core.optimizer.zero_grad()
    (logits.square().mean() + value.square().mean()).backward()
    core.optimizer.step()
    core.step += 1
    return core.save_checkpoint({})


def test_another_algorithm_starts_its_optimizer_afresh(tmp_path, write_tiny_config):
    config = _config(write_tiny_config(tmp_path / "c.toml"))
    run = open_run_dir(tmp_path / "run")
    first = _supervised_core(config, run)
    path = _one_step(first)
    assert load_checkpoint(path).extra["algorithm"] == "supervised"
    assert first.optimizer.state_dict()["state"]

    same = _supervised_core(config, open_run_dir(tmp_path / "run"))
    assert same.step == 1 and same.optimizer.state_dict()["state"]

    other = make_trainer(config, open_run_dir(tmp_path / "run"))
    assert other.algorithm == "alphazero" and other.step == 1
    assert not other.optimizer.state_dict()["state"]
    for a, b in zip(other.model.state_dict().values(), first.model.state_dict().values()):
        assert torch.equal(a, b)
