"""Does a checkpoint's score mean points? Two figures through `fastgo analysis` (KataGo's JSON
protocol, the way KaTrain reads it):

  * the empty board's `scoreLead` for Black at the run's komi (9x9's fair komi is about 7, so a
    lead near 0 under komi 7.5 is what a Go player expects);
  * over the position after move M of G self-play games of a run directory, the share where the
    sign of `scoreLead` agrees with the sign of (win rate - 0.5), both for Black.

    python tools/score_check.py CKPT RUN_DIR [--games 100] [--move 20] [--visits 200]

Prints one JSON object; `disagreeing` lists the [win rate, scoreLead] of the positions whose
signs disagree; `mean_sign_agreement` is the same share for `scoreSelfplay` (the score head's
mean margin), which differs from `scoreLead` where the network has a lead head. Positions come
from the newest shards, one per game, games shorter than M + 1 moves skipped."""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

from fastgo import coords
from rundata.shards import read_shard

MAX_GAMES = 10_000


def positions(run_dir, games, move):
    """[(id, [[colour, gtp], ...])] of up to `games` games' first `move` moves, newest shards
    first; (size, komi) of the run."""
    out, size, komi = [], None, None
    for path in sorted(glob.glob(os.path.join(run_dir, "shards", "*.shard")), reverse=True):
        shard = read_shard(path)
        size, komi = shard.header["size"], shard.header["komi"]
        for game in shard.games:
            if len(game.moves) <= move:
                continue
            moves = [["B" if k % 2 == 0 else "W", coords.to_gtp(int(m), size)]
                     for k, m in enumerate(game.moves[:move])]
            out.append((game.id, moves))
            if len(out) >= games:
                return out, size, komi
    return out, size, komi


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("run_dir")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--move", type=int, default=20)
    parser.add_argument("--visits", type=int, default=200)
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES or not 0 <= args.move <= 1000 \
            or not 1 <= args.visits <= 100_000:
        parser.error("--games 1..10000, --move 0..1000, --visits 1..100000")
    found, size, komi = positions(args.run_dir, args.games, args.move)
    if size is None:
        parser.error(f"no shards in {args.run_dir}")
    queries = [{"id": "empty", "moves": [], "boardXSize": size, "boardYSize": size,
                "komi": komi, "rules": "tromp-taylor", "maxVisits": args.visits}]
    queries += [{"id": gid, "moves": moves, "boardXSize": size, "boardYSize": size,
                 "komi": komi, "rules": "tromp-taylor", "maxVisits": args.visits}
                for gid, moves in found]
    text = "".join(json.dumps(dict(q, reportAnalysisWinratesAs="BLACK")) + "\n" for q in queries)
    done = subprocess.run([sys.executable, "-m", "fastgo_cli.main", "analysis", "--model",
                           args.checkpoint, "--log-level", "ERROR"], input=text,
                          capture_output=True, text=True, timeout=3600, check=False)
    answers = {}
    for line in done.stdout.splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if isinstance(reply, dict) and "rootInfo" in reply and not reply.get("isDuringSearch"):
            answers[reply["id"]] = reply["rootInfo"]
    if "empty" not in answers:
        sys.exit(f"score_check: no answer for the empty board: {done.stderr.strip()[-300:]}")
    agree = checked = mean_agree = 0
    disagree = []
    for gid, _ in found:
        root = answers.get(gid)
        if root is None or "scoreLead" not in root:
            continue
        lead, win = float(root["scoreLead"]), float(root["winrate"])
        if win == 0.5:
            continue
        checked += 1
        mean = float(root.get("scoreSelfplay", lead))
        mean_agree += (mean > 0) == (win > 0.5)
        if (lead > 0) == (win > 0.5):
            agree += 1
        else:
            disagree.append([round(win, 3), round(lead, 2)])
    print(json.dumps({"checkpoint": args.checkpoint, "visits": args.visits, "komi": komi,
                      "empty_board": {"scoreLead": answers["empty"].get("scoreLead"),
                                      "scoreSelfplay": answers["empty"].get("scoreSelfplay"),
                                      "winrate": answers["empty"].get("winrate")},
                      "move": args.move, "positions": checked,
                      "sign_agreement": round(agree / checked, 4) if checked else None,
                      "mean_sign_agreement": round(mean_agree / checked, 4) if checked else None,
                      "disagreeing": sorted(disagree)}))


if __name__ == "__main__":
    main()
