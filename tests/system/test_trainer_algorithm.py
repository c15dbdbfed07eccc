"""A checkpoint says which trainer wrote it: a trainer of another algorithm resuming from it keeps
the weights and the step but starts its optimizer afresh (another loss's Adam moments would
scale its first steps wrongly); the same algorithm resumes the optimizer state too."""
import torch

from fastgo.config import load_config
from fastgo.rundir import open_run_dir
from inference_server.checkpoint import load_checkpoint
from loop_helpers import write_tiny_config
from trainer.loop import Trainer


class OtherTrainer(Trainer):
    algorithm = "supervised"


def _config(tmp_path):
    path = write_tiny_config(tmp_path / "c.toml")
    text = open(path).read().replace('optimizer = "sgd"', 'optimizer = "adamw"')
    open(path, "w").write(text)
    return load_config(path)


def _one_step(trainer):
    trainer.model.train()
    size = trainer.config.model.board_size
    planes = trainer.config.model.planes
    x = torch.rand(4, planes, size, size)
    logits, value = trainer.model(x)
    trainer.optimizer.zero_grad()
    (logits.square().mean() + value.square().mean()).backward()
    trainer.optimizer.step()
    trainer.step += 1
    return trainer.save_checkpoint()


def test_another_algorithm_starts_its_optimizer_afresh(tmp_path):
    config = _config(tmp_path)
    run = open_run_dir(tmp_path / "run")
    first = OtherTrainer(config, run)
    path = _one_step(first)
    assert load_checkpoint(path).extra["algorithm"] == "supervised"
    assert first.optimizer.state_dict()["state"]

    same = OtherTrainer(config, open_run_dir(tmp_path / "run"))
    assert same.step == 1 and same.optimizer.state_dict()["state"]

    other = Trainer(config, open_run_dir(tmp_path / "run"))
    assert other.step == 1
    assert not other.optimizer.state_dict()["state"]
    for a, b in zip(other.model.state_dict().values(), first.model.state_dict().values()):
        assert torch.equal(a, b)
