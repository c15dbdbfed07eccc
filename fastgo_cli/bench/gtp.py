"""`fastgo bench gtp`: visits/s of our GTP engine (`fastgo gtp --model CKPT --visits V`) against
Leela Zero 0.17 (`leelaz`) on a random network of the same shape, same machine, same run, beside
the raw forward of our network at the search's batch (the engine's `--leaves`), same backend.

Both engines get the same positions (seeded random openings, distinct per position so Leela
Zero's NN cache, which survives clear_board, holds nothing of the next search), each set up after
`clear_board` (a fresh search tree in both engines) and answered with one timed `genmove b` of V
visits; one untimed warm-up position first. Figure: V / median genmove seconds per engine. The
raw forward (batch --leaves, random planes) runs in a window after each position's genmoves, so
it sees the same machine load, and is pooled over the windows (positions / seconds).
Leela Zero runs `--gtp --noponder --cpu-only -t T -v V --timemanage off -r 0` with
`time_settings 0 1 0` (no time limit), so each search stops at V root visits and nowhere else;
its root visits per move are read from its own report on stderr.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LEELAZ_SIZE = 19                  # Leela Zero is compiled for one board size
LEELAZ_INPUT_PLANES = 18          # 8 positions x 2 colours + 2 side-to-move planes
LEELAZ_POLICY_FILTERS = 2
LEELAZ_VALUE_FILTERS = 1
LEELAZ_VALUE_HIDDEN = 256
OPENING_LENGTHS = (10, 30, 50, 70)   # moves before position i's genmove: cycled, even (Black to move)
START_TIMEOUT_S = 300.0              # an engine's first answer (torch import, backend build)
LEELAZ_VISITS = re.compile(rb"(\d+) visits, (\d+) nodes, (\d+) playouts")
LEELAZ_THREADS = re.compile(rb"Using (\d+) thread")


def parents():
    from fastgo_cli.parser import json_options, move_seconds_options
    return (json_options(), move_seconds_options(
        default=600.0, help="seconds one genmove may take before the engine counts as failed"))


def add_arguments(parser):
    from fastgo.variants import Backend, Device
    from fastgo_cli.parser import leaves, seed

    parser.add_argument("--size", type=int, default=19,
                        help="board size (Leela Zero: 19 only; other sizes measure fastgo alone)")
    parser.add_argument("--net", default="b6c64", help="network bBLOCKScCHANNELS for both engines")
    parser.add_argument("--visits", type=int, default=800, help="visits per genmove V")
    parser.add_argument("--moves", type=int, default=6,
                        help="timed positions (each one genmove per engine)")
    parser.add_argument("--threads", type=int, default=2,
                        help="Leela Zero search threads (-t); fastgo's torch/backend threads "
                             "(OMP_NUM_THREADS: its search itself is one thread)")
    parser.add_argument("--leaves", type=leaves, default=8,
                        help="fastgo gtp --leaves: leaves per forward pass (the ceiling's batch)")
    parser.add_argument("--leelaz", metavar="PATH",
                        help="Leela Zero's program (default: leelaz on PATH, else /usr/games/leelaz)")
    parser.add_argument("--backend", default=Backend.AUTO, choices=Backend.choices(),
                        help="fastgo's CPU backend (auto: resolved here once, then passed by name)")
    parser.add_argument("--device", default=Device.CPU, choices=Device.choices(),
                        help="where fastgo's network runs (Leela Zero always runs --cpu-only)")
    parser.add_argument("--raw-seconds", type=float, default=4.0,
                        help="raw forward seconds in all, split into a window after each "
                             "position's genmoves")
    parser.add_argument("--seed", type=seed, default=0, help="network weights and openings")


# --- Leela Zero's weights ----------------------------------------------------------------------

def leelaz_weight_lines(blocks: int, channels: int, seed: int = 0):
    """The lines (no newline) of a plain-text v1 weights file with random weights, in Leela
    Zero's order (src/Network.cpp load_v1_network): "1", then 4 lines per convolution (weights
    [out, in, 3, 3], biases, batch-norm means, batch-norm variances) for the input convolution
    (18 planes in) and 2 per residual block; the policy head (1x1 conv of 2 filters: 4 lines, fc
    [362, 2 x 361], fc bias); the value head (1x1 conv of 1 filter: 4 lines, fc [256, 361],
    bias, fc [1, 256], bias): 1 + 4 + 8 x blocks + 14 lines. Weights are normal with variance
    gain / fan_in (gain 2 where a ReLU follows), biases zero, batch-norm means N(0, 0.1^2) and
    variances in [0.5, 1.5], so activations stay of order 1 and the search runs normally."""
    import numpy as np

    rng = np.random.default_rng(seed)
    points = LEELAZ_SIZE * LEELAZ_SIZE

    def fmt(values):
        return " ".join(f"{x:.5g}" for x in values.astype(np.float32).tolist())

    def conv(cin, cout, kernel, gain):
        fan_in = cin * kernel * kernel
        yield fmt(rng.normal(0.0, (gain / fan_in) ** 0.5, cout * fan_in))
        yield fmt(np.zeros(cout))
        yield fmt(rng.normal(0.0, 0.1, cout))
        yield fmt(rng.uniform(0.5, 1.5, cout))

    def dense(fan_in, outputs, gain):
        yield fmt(rng.normal(0.0, (gain / fan_in) ** 0.5, outputs * fan_in))
        yield fmt(np.zeros(outputs))

    yield "1"
    yield from conv(LEELAZ_INPUT_PLANES, channels, 3, 2.0)
    for _ in range(2 * blocks):
        yield from conv(channels, channels, 3, 2.0)
    yield from conv(channels, LEELAZ_POLICY_FILTERS, 1, 1.0)
    yield from dense(LEELAZ_POLICY_FILTERS * points, points + 1, 1.0)
    yield from conv(channels, LEELAZ_VALUE_FILTERS, 1, 1.0)
    yield from dense(LEELAZ_VALUE_FILTERS * points, LEELAZ_VALUE_HIDDEN, 2.0)
    yield from dense(LEELAZ_VALUE_HIDDEN, 1, 0.25)


def write_leelaz_weights(path, blocks: int, channels: int, seed: int = 0) -> str:
    """A random Leela Zero v1 weights file of `blocks` x `channels` at `path`; returns path."""
    with open(path, "w", encoding="ascii") as f:
        for line in leelaz_weight_lines(blocks, channels, seed):
            f.write(line)
            f.write("\n")
    return str(path)


def find_leelaz(explicit=None):
    """Leela Zero's program: `explicit`, else leelaz on PATH, else Debian's /usr/games/leelaz;
    None when none is executable."""
    for candidate in ([explicit] if explicit else ["leelaz", "/usr/games/leelaz"]):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def leelaz_argv(program, weights, *, visits, threads):
    """`leelaz` in GTP mode, one search of `visits` root visits per genmove: no pondering, no
    time-management cut-off, no resignation; --cpu-only where the build has OpenCL (it lists
    the flag in --help)."""
    argv = [program, "--gtp", "--noponder", "-t", str(threads), "-v", str(visits),
            "--timemanage", "off", "-r", "0", "-w", str(weights)]
    try:
        text = subprocess.run([program, "--help"], capture_output=True, check=False,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        text = b""
    if b"--cpu-only" in text:
        argv.insert(3, "--cpu-only")
    return argv


# --- positions and engines ---------------------------------------------------------------------

def openings(size: int, count: int, seed: int) -> list[list[int]]:
    """`count` random openings of legal non-pass moves (lengths cycling OPENING_LENGTHS, capped
    at a third of the board, even so Black is to move), each from its own seeded generator."""
    import numpy as np

    from fastgo.game import Game

    out = []
    for i in range(count):
        length = min(OPENING_LENGTHS[i % len(OPENING_LENGTHS)], size * size // 3) // 2 * 2
        rng = np.random.default_rng([seed, i])
        game = Game(size, 7.5)
        moves: list[int] = []
        while len(moves) < length:
            legal = np.flatnonzero(game.legal_moves()[:size * size])
            if not len(legal):
                break
            move = int(rng.choice(legal))
            game.play(move)
            moves.append(move)
        out.append(moves[:len(moves) // 2 * 2])
    return out


class _Capture:
    """A stderr sink for GtpClient: keeps the bytes."""

    def __init__(self):
        self.data = bytearray()
        self._lock = threading.Lock()

    def write(self, chunk):
        with self._lock:
            self.data += chunk

    def flush(self):
        pass

    def text(self):
        with self._lock:
            return bytes(self.data)

    def last_line(self):
        lines = [x for x in self.text().decode("utf-8", "replace").splitlines() if x.strip()]
        return lines[-1].strip()[:300] if lines else "(nothing on stderr)"


class EngineError(RuntimeError):
    """An engine did not start, answered '?', or did not answer in time."""


class EngineUnderTest:
    """One GTP engine under test: `genmove(opening)` sets the position after clear_board and
    returns (seconds of the genmove alone, the move)."""

    def __init__(self, label, argv, *, size, setup=(), env=None, move_timeout):
        from play.gtp.client import GtpClient

        self.label, self.size, self.move_timeout = label, size, move_timeout
        self.stderr = _Capture()
        self.argv = list(argv)
        try:
            self.client = GtpClient(argv, timeout=START_TIMEOUT_S, stderr=self.stderr, env=env)
        except OSError as err:
            raise EngineError(f"{label}: cannot start {argv[0]}: {err}") from None
        try:
            self.name = self._send("name")
            self.version = self._send("version")
            for command in (f"boardsize {size}", "komi 7.5", *setup):
                self._send(command)
        except EngineError:
            self.client.close()
            raise

    def _send(self, command):
        from fastgo.gtp import GtpError
        try:
            return self.client.send(command).strip()
        except GtpError as err:
            raise EngineError(f"{self.label}: {err} (stderr: {self.stderr.last_line()})") from None

    def genmove(self, opening):
        from fastgo import coords
        from fastgo.gtp import GtpError

        commands = ["clear_board"] + [f"play {'bw'[i % 2]} {coords.to_gtp(m, self.size)}"
                                      for i, m in enumerate(opening)]
        try:
            self.client.timeout = START_TIMEOUT_S
            self.client.send_many(commands)
            self.client.timeout = self.move_timeout
            start = time.perf_counter()
            move = self.client.send("genmove b").strip()
            seconds = time.perf_counter() - start
        except GtpError as err:
            raise EngineError(f"{self.label}: {err} (stderr: {self.stderr.last_line()})") from None
        return seconds, move

    def close(self):
        self.client.close()


def _fastgo_engine(args, checkpoint, backend, size):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    argv = [sys.executable, "-m", "fastgo_cli.main", "gtp", "--model", checkpoint,
            "--visits", str(args.visits), "--leaves", str(args.leaves), "--device", args.device,
            "--backend", backend]
    return EngineUnderTest("fastgo", argv, size=size, env=env, move_timeout=args.move_seconds)


def _leelaz_engine(args, program, weights):
    argv = leelaz_argv(program, weights, visits=args.visits, threads=args.threads)
    return EngineUnderTest("leelaz", argv, size=LEELAZ_SIZE, setup=("time_settings 0 1 0",),
                  move_timeout=args.move_seconds)


# --- the run -----------------------------------------------------------------------------------

def _check(args):
    """The ModelConfig of --net/--size; ValueError with the message on a bad argument."""
    from rundata.config import MODEL_NAME, ConfigError, ModelConfig, parse_section

    match = MODEL_NAME.fullmatch(args.net)
    if not match or match.group(3):       # Leela Zero's network has residual blocks only
        raise ValueError(f"--net {args.net!r}: expected bBLOCKScCHANNELS (e.g. b6c64)")
    for name, value, low, high in (("--visits", args.visits, 1, 1_000_000),
                                   ("--moves", args.moves, 1, 1000),
                                   ("--threads", args.threads, 1, 256)):
        if not low <= value <= high:
            raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    if not 0 <= args.raw_seconds <= 600:
        raise ValueError("--raw-seconds must be in [0, 600]")
    try:
        return parse_section(ModelConfig, {
            "board_size": args.size, "blocks": int(match.group(1)), "channels": int(match.group(2)),
            "policy_channels": LEELAZ_POLICY_FILTERS, "value_channels": LEELAZ_VALUE_FILTERS,
            "value_hidden": LEELAZ_VALUE_HIDDEN}, source="--net/--size", prefix="model")
    except ConfigError as err:
        raise ValueError(str(err)) from None


def _raw(runner, planes, seconds):
    from fastgo_cli.bench.harness import measure_raw
    if seconds <= 0:
        return 0, 0.0
    return measure_raw(runner, planes, seconds)


def _summary(times, visits):
    median = statistics.median(times)
    return {"visits_per_s": round(visits / median, 1), "median_move_s": round(median, 4),
            "move_s": [round(t, 4) for t in times]}


def run(args) -> int:
    prog = "fastgo bench gtp"
    try:
        model_config = _check(args)
    except ValueError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    program, skipped = None, None
    if args.size != LEELAZ_SIZE:
        skipped = f"Leela Zero plays {LEELAZ_SIZE}x{LEELAZ_SIZE} only"
        print(f"{prog}: Leela Zero plays {LEELAZ_SIZE}x{LEELAZ_SIZE} only; measuring fastgo alone "
              f"at {args.size}x{args.size}", file=sys.stderr)
    else:
        program = find_leelaz(args.leelaz)
        if program is None and args.leelaz:
            print(f"{prog}: --leelaz {args.leelaz!r} is not an executable program", file=sys.stderr)
            return 2
        if program is None:
            skipped = "leelaz not found"
            print(f"{prog}: leelaz not found (not on PATH, not /usr/games/leelaz; Debian package "
                  f"leela-zero, or --leelaz PATH): measuring fastgo alone", file=sys.stderr)

    import numpy as np
    import torch

    from fastgo_cli.bench.figures import write_json
    from fastgo_cli.bench.harness import random_planes
    from network.checkpoint import save_checkpoint
    from network.model import build_model
    from network.runner import ModelRunner

    torch.set_num_threads(args.threads)
    positions = openings(args.size, args.moves + 1, args.seed)      # [0] is the warm-up
    print(f"{prog}: {model_config.name} {args.size}x{args.size}, {args.visits} visits, "
          f"{args.moves} positions + 1 warm-up, {args.threads} thread(s)"
          + (f", against {program}" if program else ""), file=sys.stderr, flush=True)
    engines = []
    with tempfile.TemporaryDirectory(prefix="fastgo-bench-gtp-") as workdir:
        net = build_model(model_config, seed=args.seed).eval()
        checkpoint = os.path.join(workdir, "model.ckpt")
        save_checkpoint(checkpoint, net, step=1)
        try:
            runner = ModelRunner(net, device=args.device, backend=args.backend,
                                 capacity=max(8, args.leaves), threads=args.threads)
        except (ValueError, RuntimeError) as err:
            print(f"{prog}: cannot run the network with --backend {args.backend} on "
                  f"{args.device}: {err}", file=sys.stderr)
            return 1
        info = runner.describe()
        planes = random_planes(np.random.default_rng(args.seed), args.leaves, model_config)
        raw = []
        times: dict[str, list[float]] = {"fastgo": [], "leelaz": []}
        moves: dict[str, list[int]] = {"fastgo": [], "leelaz": []}
        try:
            engines.append(_fastgo_engine(args, checkpoint, runner.backend, args.size))
            if program:
                weights = write_leelaz_weights(os.path.join(workdir, "leelaz-weights.txt"),
                                               model_config.blocks, model_config.channels,
                                               seed=args.seed)
                engines.append(_leelaz_engine(args, program, weights))
            for index, opening in enumerate(positions):
                for engine in engines:                  # the same position, one after the other
                    seconds, move = engine.genmove(opening)
                    if index:
                        times[engine.label].append(seconds)
                        moves[engine.label].append(move)
                if index:                                   # the ceiling under the same load
                    raw.append(_raw(runner, planes, args.raw_seconds / args.moves))
                    print(f"  position {index} ({len(opening)} moves): " + ", ".join(
                        f"{e.label} {times[e.label][-1]:.3f} s" for e in engines)
                        + (f", raw {raw[-1][0] / raw[-1][1]:.0f} evals/s" if raw[-1][1] else ""),
                        file=sys.stderr, flush=True)
        except EngineError as err:
            print(f"{prog}: engine failed: {err}", file=sys.stderr)
            return 1
        finally:
            for engine in engines:
                engine.close()

    raw_positions, raw_seconds = sum(p for p, _ in raw), sum(s for _, s in raw)
    raw_rate = raw_positions / raw_seconds if raw_seconds else None
    ours = _summary(times["fastgo"], args.visits)
    result = {
        "model": model_config.name, "board_size": args.size, "visits": args.visits,
        "positions": args.moves, "opening_moves": [len(p) for p in positions[1:]],
        "fastgo": {**ours, "moves": moves["fastgo"], "name": engines[0].name,
                   "version": engines[0].version, "backend": info["backend"],
                   "device": info["device"], "precision": info["precision"],
                   "torch_threads": args.threads, "search_threads": 1, "leaves": args.leaves,
                   "raw_evals_per_s": None if raw_rate is None else round(raw_rate, 1),
                   "raw_batch": args.leaves,
                   "raw_share": None if raw_rate is None else round(ours["visits_per_s"] / raw_rate, 4)},
        "leelaz": None, "leelaz_skipped": skipped, "ratio": None,
    }
    if program:
        lz = engines[1]
        stderr = lz.stderr.text()
        visits = [int(m.group(1)) for m in LEELAZ_VISITS.finditer(stderr)][1:]
        used = LEELAZ_THREADS.search(stderr)
        result["leelaz"] = {**_summary(times["leelaz"], args.visits), "moves": moves["leelaz"],
                            "program": program, "name": lz.name, "version": lz.version,
                            "threads": int(used.group(1)) if used else args.threads,
                            "root_visits": visits, "argv": lz.argv}
        result["ratio"] = round(ours["visits_per_s"] / result["leelaz"]["visits_per_s"], 4)
    _report(result)
    write_json(args.json, result)
    return 0


def _report(result):
    ours, lz = result["fastgo"], result["leelaz"]
    raw = (f"raw forward {ours['raw_evals_per_s']:.0f} evals/s at batch {ours['raw_batch']} -> "
           f"{ours['raw_share']:.2f} of it" if ours["raw_evals_per_s"] else "raw forward not measured")
    print(f"gtp {result['model']} {result['board_size']}x{result['board_size']}, "
          f"{result['visits']} visits, {result['positions']} positions (fresh tree each):")
    print(f"  fastgo {ours['version']:<8} {ours['visits_per_s']:>9.1f} visits/s  (median "
          f"{ours['median_move_s']:.3f} s/move; {raw}) [{ours['backend']} {ours['device']} "
          f"{ours['precision']}, {ours['torch_threads']} inference thread(s), 1 search thread, "
          f"{ours['leaves']} leaves per forward]")
    if lz is None:
        print(f"  leelaz   not measured ({result['leelaz_skipped']})")
        return
    visits = lz["root_visits"]
    spread = (f"{min(visits)}..{max(visits)} root visits" if visits else "root visits not reported")
    print(f"  leelaz {lz['version']:<8} {lz['visits_per_s']:>9.1f} visits/s  (median "
          f"{lz['median_move_s']:.3f} s/move; {spread}) [cpu-only, {lz['threads']} search "
          f"thread(s)]")
    print(f"  ratio fastgo / leelaz: {result['ratio']:.3f}")
