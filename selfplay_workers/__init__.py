"""Players (random, pure MCTS, network MCTS), the GTP engine, and later the self-play worker.
Never imports torch."""
