"""The arena as a program others import: a match between two players named by player specs.
plan (ArenaPlan: what to play, checked), sides (the two sides from their specs: names,
board size, engines started, equal-time pacing), loop (the batches of games, the sequential
probability ratio test, every finished game counted and written whatever the moment of an
interrupt; run_arena, the whole program) and report (the summary, its text, the --json file, the
ratings table's row, the SGF files). `fastgo arena` parses its options into an ArenaPlan and
prints what run_arena says; `fastgo compare` calls run_arena directly."""
