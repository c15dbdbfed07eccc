"""A plain pure-Python Go board, the yardstick `fastgo bench board` times beside the Cython one.

It plays the same random playouts by the same rules (captures, suicide illegal, simple ko, no
own-eye filling, two passes or the 2 x N x N cap end a playout) the way a careful Python program
would: a flat list with a border, neighbour tables computed once, groups found by flood fill
only around the move just played. No numpy (per-point numpy calls are slower still). Used only
for that comparison; the engine never imports it.
"""
from __future__ import annotations

import random
import time

EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3


class PythonBoard:
    def __init__(self, size: int):
        self.size = size
        stride = size + 1
        self.stride = stride
        self.cells = [BORDER] * (stride * (size + 2) + 1)
        self.points = [(r + 1) * stride + c + 1 for r in range(size) for c in range(size)]
        for p in self.points:
            self.cells[p] = EMPTY
        self.neighbours = {p: (p - stride, p - 1, p + 1, p + stride) for p in self.points}
        self.diagonals = {p: (p - stride - 1, p - stride + 1, p + stride - 1, p + stride + 1)
                          for p in self.points}
        self.to_move = BLACK
        self.ko = 0
        self.passes = 0

    def group(self, p):
        """(stones, liberties) of the group at p, by flood fill."""
        color, cells, neighbours = self.cells[p], self.cells, self.neighbours
        stones, liberties, stack = {p}, set(), [p]
        while stack:
            for q in neighbours[stack.pop()]:
                c = cells[q]
                if c == EMPTY:
                    liberties.add(q)
                elif c == color and q not in stones:
                    stones.add(q)
                    stack.append(q)
        return stones, liberties

    def is_eye(self, p, color):
        cells = self.cells
        if any(cells[q] != color and cells[q] != BORDER for q in self.neighbours[p]):
            return False
        bad = sum(1 for q in self.diagonals[p] if cells[q] == 3 - color)
        edge = any(cells[q] == BORDER for q in self.diagonals[p])
        return bad == 0 if edge else bad <= 1

    def try_play(self, p) -> bool:
        """Play p for the side to move if legal (not ko, not suicide); False leaves it unchanged."""
        if p == self.ko:
            return False
        cells, color = self.cells, self.to_move
        other = 3 - color
        cells[p] = color
        captured = []
        for q in self.neighbours[p]:
            if cells[q] == other:
                stones, liberties = self.group(q)
                if not liberties:
                    captured.extend(stones)
                    for s in stones:
                        cells[s] = EMPTY
        stones, liberties = self.group(p)
        if not liberties:
            cells[p] = EMPTY
            return False
        single = len(captured) == 1 and len(stones) == 1 and len(liberties) == 1
        self.ko = captured[0] if single else 0
        self.to_move = other
        self.passes = 0
        return True

    def play_pass(self):
        self.to_move = 3 - self.to_move
        self.ko = 0
        self.passes += 1

    def random_playout(self, rng: random.Random) -> int:
        """Random non-eye-filling moves until two passes or the cap; returns the moves played."""
        cap, moves = 2 * self.size * self.size, 0
        while self.passes < 2 and moves < cap:
            empties = [p for p in self.points if self.cells[p] == EMPTY]
            rng.shuffle(empties)
            for p in empties:
                if not self.is_eye(p, self.to_move) and self.try_play(p):
                    break
            else:
                self.play_pass()
            moves += 1
        return moves


def playouts_per_second(size: int, seconds: float, seed: int = 1):
    """(playouts/s, moves/s) of PythonBoard random playouts from the empty board."""
    rng = random.Random(seed)
    playouts = moves = 0
    start = time.perf_counter()
    while True:
        moves += PythonBoard(size).random_playout(rng)
        playouts += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return playouts / elapsed, moves / elapsed
