"""Replay window over experience shards, the training loop and checkpoint publishing."""
