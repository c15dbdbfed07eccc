# The Python view of fastgo/constants.pxd: the board-size range and the planes per encoding that
# configs, command-line checks, shard readers and protocols compare against.

MIN_BOARD_SIZE = MIN_SIZE        # smallest board side supported
MAX_BOARD_SIZE = MAX_SIZE        # largest board side supported
MAX_BOARD_POINTS = MAX_POINTS    # points on the largest board
SIZE_RANGE = f"{MIN_SIZE}..{MAX_SIZE}"   # the range as help texts and errors print it
# Input planes per encoding name (the names of fastgo.features' encoders).
ENCODING_PLANES = {"alphazero": AZ_PLANES, "liberty": LIB_PLANES, "katago": KATAGO_PLANES}
