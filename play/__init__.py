"""Play outside self-play: players and their specs, the search player, matches between two sides
and the arena that plays one as a program (play.arena), the GTP engine (time, setup and
analysis) and the GTP client and side that drive outside engines. Never imports torch: a network
side is loaded by the caller and handed in."""
