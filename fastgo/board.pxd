# The Python face of the Go position: Board wraps a fastgo.rules BoardState, Random a
# fastgo.rng generator. Declared here so other kernels (features, mcts, ...) reach the struct.
from fastgo.rng cimport Rng
from fastgo.rules cimport BoardState


cdef class Random:
    cdef Rng rng              # the generator; seeded by Random(seed)


cdef class Board:
    cdef BoardState state     # the position itself; Board methods are thin wrappers around it
