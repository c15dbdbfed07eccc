"""The kernel's fixed numbers as Python reads them: the board-size range and the planes per
encoding that configs, command-line checks, shard readers and protocols compare against.
Stdlib only, so that the config and the command line need no compiled kernel.

The kernels take the same numbers from fastgo/constants.pxd (cimported; C constants); a test
holds the two to each other and to the kernels' own checks. Nothing else spells them.
"""

MIN_BOARD_SIZE = 2               # smallest board side supported (constants.pxd: MIN_SIZE)
MAX_BOARD_SIZE = 25              # largest board side supported (MAX_SIZE)
MAX_BOARD_POINTS = MAX_BOARD_SIZE * MAX_BOARD_SIZE   # points on the largest board (MAX_POINTS)
SIZE_RANGE = f"{MIN_BOARD_SIZE}..{MAX_BOARD_SIZE}"   # the range as help texts and errors print it
# Input planes per encoding name (the names of fastgo.features' encoders; AZ_PLANES, LIB_PLANES,
# KATAGO_PLANES).
ENCODING_PLANES = {"alphazero": 17, "liberty": 11, "katago": 16}
