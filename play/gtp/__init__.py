"""The GTP side of play: the engine (`fastgo gtp`) with its clock, position set-up, KataGo
extensions and analysis commands, and the client and match side that drive outside engines."""
