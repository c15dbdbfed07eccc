"""Self-play: the search and policy-only workers over one shared core, and where their games go
(local shards or the recorder). Never imports torch."""
