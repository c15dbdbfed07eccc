"""A load-generating client process for `fastgo bench server`: keeps `inflight` batches of
random planes in flight through one InferenceClient and counts the positions answered inside a
wall-clock window [start_at, end_at] shared by all client processes. No torch.

Prints one JSON object on stdout: positions, requests, latencies_ms, ready_at, errors.
"""
from __future__ import annotations

import sys
import time
from collections import deque

import numpy as np

from fastgo import bounded_json
from fastgo_cli.parser import Parser, seed
from wire.client import InferenceClient, ServerError


def main(argv=None) -> int:
    parser = Parser(prog="fastgo_cli.bench.loadgen", description=__doc__)
    parser.add_argument("--server", dest="endpoint", required=True, help="the server's endpoint")
    parser.add_argument("--slot", default="current")
    parser.add_argument("--size", dest="board_size", type=int, required=True, help="board size")
    parser.add_argument("--planes", type=int, required=True)
    parser.add_argument("--request-size", type=int, required=True)
    parser.add_argument("--inflight", type=int, default=2)
    parser.add_argument("--start-at", type=float, required=True, help="unix time the window opens")
    parser.add_argument("--end-at", type=float, required=True, help="unix time the window closes")
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    shape = (args.request_size, args.planes, args.board_size, args.board_size)
    buffers = [(rng.random(shape) < 0.3).astype(np.uint8) for _ in range(args.inflight)]
    client = InferenceClient(args.endpoint, slot=args.slot, timeout_s=60.0, retries=1)
    client.evaluate(buffers[0])                       # connect and warm up
    ready_at = time.time()
    positions = requests = errors = 0
    latencies = []
    flight = deque((client.submit(buf), time.perf_counter(), i) for i, buf in enumerate(buffers))
    while flight:
        ticket, sent, index = flight.popleft()
        try:
            client.receive(ticket)
        except ServerError:
            errors += 1
        now, wall = time.perf_counter(), time.time()
        if args.start_at <= wall <= args.end_at:
            positions += args.request_size
            requests += 1
            latencies.append(1e3 * (now - sent))
        if wall < args.end_at:
            flight.append((client.submit(buffers[index]), time.perf_counter(), index))
    client.close()
    sys.stdout.write(bounded_json.dumps({"positions": positions, "requests": requests,
                                         "latencies_ms": latencies, "ready_at": ready_at,
                                         "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
