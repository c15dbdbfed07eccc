"""A run's checkpoint as a reference player's file: its served weights only (the weight average
the server plays, without the trainer's optimizer state and raw weights), written to
fastgo/references/NAME.ckpt, and the index entries of the players it makes at each of the
visits asked for (NAME-vV), printed as JSON lines to append to fastgo/references/index.json.

    python tools/make_reference.py runs/quickstart/checkpoints/ckpt-000014000.ckpt NAME \
        --visits 16 64 256 --provenance "step 14000 of a quickstart run, 60 minutes on ..."
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("name", help="the file's name without .ckpt (lowercase, digits, _.-)")
    parser.add_argument("--visits", type=int, nargs="+", required=True)
    parser.add_argument("--provenance", required=True, help="one line: run, config, step")
    parser.add_argument("--folder", default=os.path.join(ROOT, "fastgo", "references"))
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    from fastgo.reference_players import index_entry
    from network.checkpoint import load_checkpoint, save_checkpoint

    loaded = load_checkpoint(args.checkpoint)
    extra = {k: v for k, v in (loaded.extra or {}).items() if k in ("komi", "rules")}
    path = os.path.join(args.folder, f"{args.name}.ckpt")
    save_checkpoint(path, loaded.model, step=loaded.step, extra=extra)
    size = loaded.config.board_size
    for visits in args.visits:
        entry = index_entry(f"{args.name}-v{visits}", path, visits=visits, board_size=size,
                            provenance=f"{args.provenance}; served weights only; {visits} "
                                       f"visits a move")
        print(json.dumps(entry))
    print(f"{path}: {os.path.getsize(path)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
