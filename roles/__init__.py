"""The roles of a run: their registry (roles.registry), their one start (roles.start: the
context every body receives and its exit statuses) and one module per role holding its body, the
code a `fastgo serve|train|selfplay|recorder|evaluate` process runs once its command line is
parsed."""
