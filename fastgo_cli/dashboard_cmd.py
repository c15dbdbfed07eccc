"""`fastgo dashboard [RUN_DIR] [--port N] [--host H --token T]`: serves a live page of a run
directory (dashboard.server). Loopback unless --host names another address, which needs a
token. Called by fastgo_cli.main through `add_arguments(parser)` and `run(args) -> int`."""
from __future__ import annotations

import ipaddress
import os
import sys

PROG = "fastgo dashboard"
DEFAULT_PORT = 8765


def add_arguments(parser):
    parser.add_argument("run_dir", nargs="?", default=".", metavar="RUN_DIR",
                        help="the run directory to show; read only")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="TCP port (0: any free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on; another than loopback needs --token")
    parser.add_argument("--token", default=None,
                        help="a secret every request must carry (?token=T); required with --host")
    parser.add_argument("--games-at-once", type=int, default=4, metavar="N",
                        help="games against checkpoints open at once (each runs two engines)")
    parser.add_argument("--max-streams", type=int, default=32, metavar="N",
                        help="live event streams (open pages) at once")


def _loopback(host) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def problem(args) -> str:
    """Why these arguments cannot be served ('' when they can)."""
    if not 0 <= args.port <= 65535:
        return f"--port must be in 0..65535, got {args.port}"
    if not _loopback(args.host) and not args.token:
        return f"--host {args.host[:100]} is not loopback: give --token T as well"
    if args.token is not None and not (8 <= len(args.token) <= 200 and args.token.isascii()
                                       and args.token.isprintable() and " " not in args.token):
        return "--token must be 8..200 printable ASCII characters without spaces"
    if not 1 <= args.games_at_once <= 64:
        return f"--games-at-once must be in 1..64, got {args.games_at_once}"
    if not 1 <= args.max_streams <= 1024:
        return f"--max-streams must be in 1..1024, got {args.max_streams}"
    if not os.path.isdir(args.run_dir):
        return f"{args.run_dir[:200]}: not a directory"
    return ""


def run(args):
    why = problem(args)
    if why:
        print(f"{PROG}: {why}", file=sys.stderr)
        return 2
    from dashboard.server import ServerLimits, serve

    def ready(url):
        print(f"{PROG}: {url} (run {os.path.abspath(args.run_dir)})", flush=True)

    try:
        return serve(args.run_dir, host=args.host, port=args.port, token=args.token,
                     limits=ServerLimits(sessions=args.games_at_once, event_clients=args.max_streams),
                     ready=ready)
    except OSError as err:
        print(f"{PROG}: cannot listen on {args.host}:{args.port}: {err.strerror or err}",
              file=sys.stderr)
        return 2
