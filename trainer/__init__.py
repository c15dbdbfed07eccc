"""Training: one core (trainer.training_core) driven by the AlphaZero, value-stage, REINFORCE and
supervised data and loss steps; trainer.factory.make_trainer picks one by trainer.algorithm."""
