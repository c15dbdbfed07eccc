# The kernel's fixed numbers: Cython modules cimport them from here, Python reads them from
# fastgo.constants (constants.py, stdlib only; a test holds the two to each other). Nothing else
# spells them.
cdef enum:
    MIN_SIZE = 2             # smallest board side supported
    MAX_SIZE = 25            # largest board side supported (25 columns: GTP letters A..Z but I)
    MAX_POINTS = 625         # MAX_SIZE * MAX_SIZE: board points on the largest board
    MAX_MOVES = 626          # MAX_POINTS + 1: length of a policy vector on the largest board
    PADDED = 730             # (MAX_SIZE + 2) * (MAX_SIZE + 2) + 1: padded point array length
    # Feature planes per encoding (fastgo.features).
    AZ_PLANES = 17           # 'alphazero': 8 positions x (own, opponent) + side to move
    LIB_PLANES = 11          # 'liberty': own and opponent stones by 1, 2, 3, 4+ liberties, ...
    KATAGO_PLANES = 16       # 'katago': Wu 2019's table 2 subset


cdef inline int check_board_size(int size) except -1:
    # The board-size check of every kernel that takes a size: ValueError naming the range.
    if size < MIN_SIZE or size > MAX_SIZE:
        raise ValueError(f"board size must be {<int>MIN_SIZE}..{<int>MAX_SIZE}, got {size}")
    return 0
