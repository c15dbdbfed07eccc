#!/bin/sh
# Regenerates tests/data/sgf/games/: GNU Go playing itself on 9x9 through `fastgo arena`, with
# the level, the random seed and the komi varied per match so the games differ (GNU Go is
# deterministic for a given seed). Run from the repository root: sh tests/data/sgf/make_games.sh
set -e
OUT=tests/data/sgf/games
GNUGO=${GNUGO:-gnugo}
TMP=$(mktemp -d)
mkdir -p "$OUT"
i=0
while [ $i -lt 30 ]; do
    la=$(( i % 6 + 1 ))
    lb=$(( (i * 7 + 3) % 6 + 1 ))
    komi=$(echo "5.5 6.5 7.5" | cut -d' ' -f$(( i % 3 + 1 )))
    fastgo arena \
        gtp:"$GNUGO --mode gtp --level $la --positional-superko --seed $(( 1000 + i ))" \
        gtp:"$GNUGO --mode gtp --level $lb --positional-superko --seed $(( 2000 + i ))" \
        --games 8 --games-at-once 8 --size 9 --komi "$komi" --no-table --sgf-dir "$TMP/$i" >/dev/null
    n=0
    for f in "$TMP/$i"/*.sgf; do
        cp "$f" "$OUT/m$(printf %02d $i)-g$n.sgf"
        n=$(( n + 1 ))
    done
    i=$(( i + 1 ))
done
rm -rf "$TMP"
