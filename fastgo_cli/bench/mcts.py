"""`fastgo bench mcts`: search simulations per second on one core with a zero-cost evaluator.

G games at once (--games-at-once, default 64) on N x N boards play moves against themselves: each
move is a search of `--visits` root visits with the built-in uniform evaluator (all logits 0,
value 0, evaluated in C: no Python call per batch), feature planes encoded with a random symmetry
as for a network, then a move sampled at temperature 1 and tree reuse. Figure: the median over
`--repeats` runs of `--seconds` each. The same loop with a Python callable evaluator (one call per
batch of G) and a pure-Python PUCT search of the same kind (node objects, the same C board
underneath) are timed for comparison.
"""
import math
import statistics
import sys
import time

import numpy as np

from fastgo.constants import SIZE_RANGE
from fastgo.coords import is_board_size
from fastgo_cli.bench.figures import write_json
from rundata.config import ENCODING_PLANES


def parents():
    from fastgo_cli.parser import json_options
    return (json_options(),)


def add_arguments(parser):
    from fastgo_cli.parser import alias
    parser.add_argument("--games-at-once", type=int, default=64, metavar="G",
                        help="games searched at the same time")
    parser.add_argument("--size", type=int, default=9, help=f"board size, {SIZE_RANGE}")
    alias(parser, "--board", "--board-size", dest="size", type=int)
    parser.add_argument("--visits", type=int, default=200, help="root visits per move")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of each timed repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the median is reported")
    parser.add_argument("--encoding", default="alphazero", choices=sorted(ENCODING_PLANES))
    parser.add_argument("--no-python", action="store_true",
                        help="skip the Python-evaluator and pure-Python reference timings")


def _self_play_rate(args, evaluator, seed):
    """Simulations per second of self-play under `evaluator` for about args.seconds."""
    from fastgo.board import Board
    from fastgo.mcts import BatchedSearch
    from fastgo.search_settings import SearchSettings

    search = BatchedSearch(games=args.games_at_once, size=args.size,
                           settings=SearchSettings(encoding=args.encoding), seed=seed)
    for g in range(args.games_at_once):
        search.set_position(g, Board(args.size))
    start_sims = search.simulations
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        search.run(evaluator, args.visits)
        for g in range(args.games_at_once):
            move = search.choose_move(g, 1.0, resign=False)
            search.advance(g, move)
            if search.root_board(g).is_over():
                search.set_position(g, Board(args.size))
    elapsed = time.perf_counter() - t0
    return (search.simulations - start_sims) / elapsed


class _Node:
    __slots__ = ("prior", "visits", "value_sum", "children")

    def __init__(self, prior):
        self.prior = prior
        self.visits = 0
        self.value_sum = 0.0
        self.children = None        # {move: _Node} once expanded


def _python_reference_rate(size, seconds, visits, encoding):
    """Simulations per second of a plain pure-Python PUCT of the same kind (parent-visit PUCT,
    the same first-play urgency, a random rotation of the planes, uniform evaluator) from the
    empty board, with the same C board underneath: the favourable case for Python."""
    from fastgo.board import Board

    c_puct, fpu_reduction = 1.25, 0.25
    rng = np.random.default_rng(0)
    sims = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        root_board = Board(size)
        root = _Node(1.0)
        for _ in range(visits):
            board = root_board.copy()
            node, path = root, [root]
            while node.children:
                sqrt_n = math.sqrt(node.visits)
                visited = sum(c.prior for c in node.children.values() if c.visits)
                fpu = node.value_sum / node.visits - fpu_reduction * math.sqrt(visited)
                best, best_score = None, -1e9
                for move, child in node.children.items():
                    q = -child.value_sum / child.visits if child.visits else fpu
                    score = q + c_puct * child.prior * sqrt_n / (1 + child.visits)
                    if score > best_score:
                        best, best_score = move, score
                board.play(best)
                node = node.children[best]
                path.append(node)
            np.ascontiguousarray(np.rot90(board.features(encoding), int(rng.integers(4)), (1, 2)))
            legal = np.flatnonzero(board.legal_moves())
            logits = np.zeros(size * size + 1, np.float32)[legal]
            priors = np.exp(logits - logits.max())
            priors /= priors.sum()
            node.children = {int(m): _Node(float(p)) for m, p in zip(legal, priors)}
            value = 0.0
            for n in reversed(path):
                n.visits += 1
                n.value_sum += value
                value = -value
            sims += 1
    return sims / (time.perf_counter() - t0)


def run(args):
    if args.games_at_once < 1 or args.visits < 1 or args.seconds <= 0 or args.repeats < 1:
        print("fastgo bench mcts: --games-at-once, --visits, --seconds and --repeats must be positive",
              file=sys.stderr)
        return 2
    if not is_board_size(args.size) or args.games_at_once > 100_000 or args.visits > 1_000_000 \
            or args.seconds > 3600 or args.repeats > 1000:
        print(f"fastgo bench mcts: --size must be {SIZE_RANGE} (and --games-at-once <= 100000, "
              "--visits <= 1e6, --seconds <= 3600, --repeats <= 1000)", file=sys.stderr)
        return 2
    print(f"fastgo bench mcts: about {args.repeats * args.seconds * (1 if args.no_python else 3):.0f} s",
          file=sys.stderr, flush=True)
    rates = [_self_play_rate(args, "uniform", seed) for seed in range(args.repeats)]
    result = {
        "sims_per_s": round(statistics.median(rates)),
        "board": args.size,
        "games_at_once": args.games_at_once,
        "visits": args.visits,
        "encoding": args.encoding,
        "repeats": [round(r) for r in rates],
        "evaluator": "built-in uniform (C)",
    }
    print(f"mcts {args.size}x{args.size}, {args.games_at_once} games at once, {args.visits} visits/move, "
          f"{args.encoding} planes: {result['sims_per_s']:,} simulations/s "
          f"(median of {args.repeats}: {', '.join(f'{r:,.0f}' for r in rates)})")
    if not args.no_python:
        nn = args.size * args.size + 1
        rows = args.games_at_once
        zeros_logits = np.zeros((rows, nn), dtype=np.float32)
        zeros_values = np.zeros(rows, dtype=np.float32)

        def evaluator(planes):
            count = planes.shape[0]
            return zeros_logits[:count], zeros_values[:count]

        py_eval = statistics.median(_self_play_rate(args, evaluator, seed) for seed in range(3))
        reference = statistics.median(
            _python_reference_rate(args.size, min(args.seconds, 1.0), args.visits, args.encoding)
            for _ in range(3))
        result["sims_per_s_python_evaluator"] = round(py_eval)
        result["pure_python_sims_per_s"] = round(reference)
        result["ratio_vs_pure_python"] = round(result["sims_per_s"] / reference, 1)
        print(f"  same loop, Python callable evaluator (one call per batch): {py_eval:,.0f} simulations/s")
        print(f"  pure-Python PUCT on the same C board: {reference:,.0f} simulations/s "
              f"-> ratio {result['ratio_vs_pure_python']}x")
    write_json(args.json, result)
    return 0
