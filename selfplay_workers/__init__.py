"""Self-play and play: the search and policy-only workers over one shared core, where their games
go (local shards or the recorder), players, matches, the GTP engine and client. Never imports
torch."""
