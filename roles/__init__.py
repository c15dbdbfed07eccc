"""The roles of a run: their registry (roles.registry) and one module per role holding its body,
the code a `fastgo serve|train|selfplay|recorder|evaluate` process runs once its command line is
parsed."""
