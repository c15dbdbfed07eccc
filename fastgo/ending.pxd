# When a game of Go is over in the Go sense: the position's area is decided, so both sides may
# pass and the Tromp-Taylor count of the board as it stands is the score a Go player would give.
#
# A position is decided when
#   * every empty region borders one colour only (no dame, no stone standing in the other side's
#     area), except seki dame: a region of at most SEKI_MAX_POINTS points bordering both colours
#     where a stone of either colour on any of its points would leave its group in atari (or be
#     suicide) and capture nothing, so neither side can fill it;
#   * every group touches at least two empty regions that border its colour only (two eyes), or
#     touches a seki region.
# The empty board, and any board with a group of one eye (an untrained network's first stones),
# is not decided: that is what keeps an early pass out of self-play.
from fastgo.rules cimport BoardState

cdef enum:
    SEKI_MAX_POINTS = 3      # larger two-colour regions are dame to fill, never seki

# 1 where the position is decided (above); pure, reads b only.
cdef bint board_decided(const BoardState* b) noexcept nogil
