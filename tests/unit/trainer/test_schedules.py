"""The trainer's schedules over a run: the learning rate decays by its half-life, checkpoints
serve the weight average (the trained weights ride along for resuming), and the network grows at
the configured step, recorded in its checkpoints and resumed in its grown shape."""
from __future__ import annotations

import pytest
import torch

from network.checkpoint import load_checkpoint
from rundata.config import loads_config
from trainer.factory import make_trainer
from trainer.training_core import scheduled_lr


@pytest.fixture
def config_text(small_trainer_config):
    """The conftest's small window trainer, every checkpoint kept: append trainer keys."""
    return small_trainer_config(keep_checkpoints=50)


def test_the_lr_halves_every_half_life_down_to_its_floor():
    tc = loads_config("[trainer]\nlr = 0.08\nlr_half_life_steps = 100\nlr_floor = 0.2\n").trainer
    assert [scheduled_lr(tc, s) for s in (0, 100, 200, 50)] \
        == pytest.approx([0.08, 0.04, 0.02, 0.08 / 2 ** 0.5])
    assert scheduled_lr(tc, 10_000) == pytest.approx(0.016)
    assert scheduled_lr(loads_config("[trainer]\nlr = 0.08\n").trainer, 10**6) == 0.08


def test_the_optimizer_trains_at_the_scheduled_lr(run_with_games, config_text):
    trainer = make_trainer(loads_config(config_text + "lr_half_life_steps = 2\n"), run_with_games)
    trainer.run(max_steps=4)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * 0.25)


def test_checkpoints_serve_the_average_and_resume_the_trained_weights(run_with_games, config_text):
    config = loads_config(config_text + "weight_average = 0.5\n")
    trainer = make_trainer(config, run_with_games)
    start = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run(max_steps=2)
    ckpt = load_checkpoint(run_with_games.latest)
    trained = trainer.model.state_dict()
    # two updates with the warm-up ramp: decays 1/10 then 2/11
    name = "stem.weight"
    w1 = ckpt.extra["raw_weights"][name]             # the trained weights after step 2
    served = ckpt.model.state_dict()[name]
    assert torch.equal(w1, trained[name].cpu()) and not torch.allclose(served, w1)
    assert ckpt.extra["average_updates"] == 2
    again = make_trainer(config, run_with_games)     # resumes
    assert again.step == 2 and torch.equal(again.model.state_dict()[name].cpu(), w1)
    assert torch.equal(again.core.served_model().state_dict()[name].cpu(), served)
    assert not torch.equal(served, start[name])


def test_the_network_grows_at_its_step_and_resumes_grown(run_with_games, config_text):
    config = loads_config(config_text + 'grow = ["4:b2c12"]\n')
    trainer = make_trainer(config, run_with_games)
    trainer.run(max_steps=3)
    assert trainer.model.config.name == "b1c8"
    before = load_checkpoint(run_with_games.checkpoint(2))
    trainer.run(max_steps=6)
    assert trainer.model.config.name == "b2c12"
    assert load_checkpoint(run_with_games.checkpoint(4)).config.name == "b2c12"
    assert before.config.name == "b1c8"
    again = make_trainer(config, run_with_games)
    assert again.step == 6 and again.model.config.name == "b2c12"
    again.run(max_steps=8)
    assert load_checkpoint(run_with_games.latest).step == 8


def _write_ratings(run, elos):
    """The evaluator's ratings.json with checkpoints rated `elos` ({step: elo}) and two anchors."""
    import json
    ratings = {"random": [0.0, 0.0, 0.0], "gnugo:1": [900.0, 700.0, 1100.0]}
    ratings.update({f"ckpt-{step}": [elo, elo - 150, elo + 150] for step, elo in elos.items()})
    with open(run.root + "/ratings.json", "w") as handle:
        json.dump({"latest": {}, "ratings": ratings}, handle)


def test_the_network_grows_when_the_curve_flattens_and_resumes_grown(run_with_games, config_text):
    config = loads_config(config_text + 'grow_when_flat = ["b2c12", "b3c16"]\nflat_steps = 4\n'
                                        'flat_elo = 50\n')
    trainer = make_trainer(config, run_with_games)
    _write_ratings(run_with_games, {0: 0.0, 2: 300.0})        # gaining (and too few recent)
    trainer.run(max_steps=2)
    assert trainer.model.config.name == "b1c8"
    # the last 4 steps' best (ckpt-4 at 330) is 30 above the best before them (ckpt-2 at 300):
    # the next checkpoint (step 4) is the grown network's
    _write_ratings(run_with_games, {0: 0.0, 2: 300.0, 4: 330.0, 6: 310.0})
    trainer.run(max_steps=8)
    grown = load_checkpoint(run_with_games.checkpoint(4))
    assert grown.config.name == "b2c12" and grown.extra["shape_since"] == 4
    assert load_checkpoint(run_with_games.checkpoint(2)).config.name == "b1c8"
    # the same ratings say nothing about the new shape: it keeps growing its own curve
    trainer.run(max_steps=12)
    assert trainer.model.config.name == "b2c12"
    again = make_trainer(config, run_with_games)
    assert again.step == 12 and again.model.config.name == "b2c12"
    assert again.core.shape_since == 4
    # the new shape gains 200 Elo: no growth; then it flattens: the last shape
    _write_ratings(run_with_games, {0: 0.0, 6: 310.0, 8: 310.0, 10: 420.0, 12: 510.0, 14: 500.0})
    again.run(max_steps=14)
    assert again.model.config.name == "b2c12"
    _write_ratings(run_with_games, {8: 310.0, 10: 420.0, 12: 510.0, 14: 500.0, 16: 530.0,
                                    18: 520.0})
    again.run(max_steps=20)
    assert load_checkpoint(run_with_games.checkpoint(16)).config.name == "b3c16"
    assert load_checkpoint(run_with_games.checkpoint(14)).config.name == "b2c12"
    assert again.model.config.name == "b3c16"


@pytest.mark.parametrize("keys, match", [
    ('grow = ["4:b2c12"]\ngrow_when_flat = ["b3c16"]\n', "not both"),
    ('grow_when_flat = ["b3c16", "b2c16"]\n', "larger than the one before"),
    ('grow_when_flat = ["b3c16", "b3c16"]\n', "larger than the one before"),
    ('grow_when_flat = ["b0c16"]\n', "1..80"),
    ('grow_when_flat = ["3:b3c16"]\n', "grow_when_flat"),
    ('flat_steps = 0\n', "flat_steps"),
])
def test_bad_flat_growth_settings_are_refused(keys, match):
    from rundata.config import ConfigError
    with pytest.raises(ConfigError, match=match):
        loads_config("[trainer]\n" + keys)


def test_flat_growth_must_start_larger_than_the_model(run_with_games, config_text):
    from rundata.config import ConfigError
    with pytest.raises(ConfigError, match="not larger than the model's b1c8"):
        make_trainer(loads_config(config_text + 'grow_when_flat = ["b1c8"]\n'), run_with_games)


@pytest.mark.parametrize("grow", ['["1:b1c4"]', '["1:b3c8"]', '["5:b2c16"]'])
def test_a_stage_that_is_not_larger_than_the_model_is_refused_when_the_config_is_read(grow):
    """Refused in one line when any role reads the config (the cluster before it starts one),
    not a traceback from the trainer at the stage's step, over and over under the cluster."""
    from rundata.config import ConfigError
    with pytest.raises(ConfigError, match="not larger than the model's b2c16: a network only "
                                          "grows"):
        loads_config(f"[model]\nblocks = 2\nchannels = 16\n[trainer]\ngrow = {grow}\n")


def test_a_stage_at_step_0_is_the_shape_the_run_starts_at(run_with_games, config_text):
    """grow = ["0:b2c12"]: the first checkpoints are b2c12, and the same command again resumes
    them (it used to train the model's shape, then refuse to resume at step 2)."""
    config = loads_config(config_text + 'grow = ["0:b2c12"]\n')
    trainer = make_trainer(config, run_with_games)
    assert trainer.model.config.name == "b2c12"
    trainer.run(max_steps=2)
    assert load_checkpoint(run_with_games.latest).config.name == "b2c12"
    again = make_trainer(config, run_with_games)
    assert again.step == 2 and again.model.config.name == "b2c12"
    again.run(max_steps=4)
    assert load_checkpoint(run_with_games.latest).step == 4
