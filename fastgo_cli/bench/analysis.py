"""`fastgo bench analysis`: positions analysed per second by `fastgo analysis` for a whole game.

One query asks for every turn of one game (a seeded random legal game of the config's board
size, two passes at the end) at `--visits` visits, as KaTrain's "analyse the whole game" does;
the engine (play.analysis.engine, in this process, responses to a null stream) searches up to
`--positions` turns at once with `--leaves` leaves each per network call, through the NN
cache. Figure: turns answered per second, and the network rows the search asked for per
second. Ceiling in the same run: the raw batched forward of the same network with every head
(the function the engine calls) at the engine's full batch, in evals/s and in positions/s at
the same visits.
"""
import io
import time

from fastgo_cli.bench.figures import write_json


def parents():
    from fastgo_cli.parser import config_options
    return (config_options(required=False, default="quickstart", sections="[model]"),)


def add_arguments(parser):
    from fastgo_cli.parser import leaves, seed

    parser.add_argument("--model", default=None, metavar="CKPT",
                        help="a checkpoint (default: a fresh network of the config's [model])")
    parser.add_argument("--visits", type=int, default=64, help="maxVisits of every turn")
    parser.add_argument("--game-moves", type=int, default=60,
                        help="moves of the game before its two passes")
    parser.add_argument("--positions", type=int, default=16,
                        help="positions searched at once (their leaves share each network call)")
    parser.add_argument("--leaves", type=leaves, default=4, help="leaves per turn per network call")
    parser.add_argument("--raw-seconds", type=float, default=3.0, help="raw forward seconds in all")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the game and the network")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")


def random_game(size, moves, seed):
    """[[color, vertex]] of a seeded random legal game (no pass before the end), then two passes."""
    import numpy as np

    from fastgo import coords
    from fastgo.game import Game

    rng = np.random.default_rng(seed)
    game = Game(size, 7.5)
    out = []
    for _ in range(moves):
        legal = np.flatnonzero(game.legal_moves()[:-1])
        if not len(legal):
            break
        move = int(rng.choice(legal))
        out.append(["B" if game.to_move == 1 else "W", coords.to_gtp(move, size)])
        game.play(move)
    for _ in range(2):
        out.append(["B" if game.to_move == 1 else "W", "pass"])
        game.play(size * size)
    return out


def run(args):
    import numpy as np
    import torch

    from fastgo import bounded_json
    from fastgo_cli.bench.harness import measure_raw, random_planes
    from network.heads_evaluator import HeadsEvaluator
    from network.model import build_model
    from play.analysis.engine import AnalysisEngine, EngineSettings
    from play.analysis.query import Limits
    from play.heads_cache import HeadsCache
    from rundata.config import load_config

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.model:
        heads = HeadsEvaluator(args.model)
    else:
        config = load_config(args.config, overrides=tuple(args.overrides))
        heads = HeadsEvaluator(build_model(config.model, seed=args.seed))
    model = heads.config
    size = model.board_size
    moves = random_game(size, args.game_moves, args.seed)
    cache = HeadsCache(heads)
    settings = EngineSettings(positions=args.positions, leaves=args.leaves, seed=args.seed,
                              limits=Limits(sizes=(size,), max_visits=max(args.visits, 1)))
    engine = AnalysisEngine(cache, board_size=size, encoding=model.encoding, settings=settings)
    engine.out = io.StringIO()
    query = {"id": "bench", "moves": moves, "rules": "tromp-taylor", "komi": 7.5,
             "boardXSize": size, "boardYSize": size, "maxVisits": args.visits,
             "analyzeTurns": list(range(len(moves) + 1)), "includeOwnership": True}
    start = time.perf_counter()
    engine.handle_line(bounded_json.dumps(query).encode())
    while engine.step():
        pass
    elapsed = time.perf_counter() - start
    answers = [bounded_json.loads(x) for x in engine.out.getvalue().splitlines()]
    turns = sum(1 for a in answers if "turnNumber" in a)
    batch = args.positions * args.leaves
    raw_rows, raw_s = measure_raw(type("Raw", (), {"forward": staticmethod(heads)})(),
                                  random_planes(np.random.default_rng(args.seed), batch, model),
                                  args.raw_seconds)
    raw_rate = raw_rows / raw_s
    result = {"board": size, "network": model.name, "turns": turns, "visits": args.visits,
              "positions": args.positions, "leaves": args.leaves, "seconds": round(elapsed, 3),
              "positions_per_s": round(turns / elapsed, 2),
              "search_rows_per_s": round(engine.evaluations / elapsed, 1),
              "network_rows_per_s": round(cache.misses / elapsed, 1),
              "cache_hit_share": round(cache.hits / max(1, cache.hits + cache.misses), 3),
              "raw_batch": batch, "raw_evals_per_s": round(raw_rate, 1),
              "raw_positions_per_s": round(raw_rate / args.visits, 2),
              "share_of_raw": round((turns / elapsed) / (raw_rate / args.visits), 3)}
    print(f"fastgo bench analysis: {model.name} {size}x{size}, a game of {turns} turns at "
          f"{args.visits} visits: {result['positions_per_s']} positions/s "
          f"({result['search_rows_per_s']} search evals/s, {result['network_rows_per_s']} "
          f"network rows/s, cache hits {100 * result['cache_hit_share']:.0f}%); raw batched "
          f"forward with every head at batch {batch}: {result['raw_evals_per_s']} evals/s = "
          f"{result['raw_positions_per_s']} positions/s at {args.visits} visits "
          f"(share {result['share_of_raw']})")
    write_json(args.json, result)
    return 0
