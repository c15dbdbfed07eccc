"""A misbehaving GTP engine for the arena's fault tests: `fake_gtp.py MODE`.

It answers the set-up commands properly and passes on genmove until its board holds
FAULT_AFTER moves (plays and its own genmoves since clear_board); from then on genmove does what
MODE says:
  pass     always pass (a well-behaved, weak engine)
  crash    exit with status 3 without answering, one line on stderr
  garbage  answer '= banana' (a success that is not a move)
  noise    write a line that is not GTP at all
  illegal  answer the vertex of the last stone played (occupied)
  hang     never answer (sleep)
  slow     answer pass after SLOW_S seconds (overruns a short time a move)
  clock    answer pass when the game's time control came as `fake_gtp.py clock S` expects:
           `time_settings 0 S 1` after clear_board and `time_left COLOR S 1` before this
           genmove; otherwise 'banana' (so a side that does not send it loses the game)
  gameclock  the same for a game clock (`fake_gtp.py gameclock T`): `time_settings T 0 0`
           after clear_board and before each genmove `time_left COLOR L 0`, L in 0..T and
           never more than the color's last L in this game
  dead     (at start) exit at once, before reading anything
  suicide  answer A1 at every genmove (a suicide where the opponent holds A2 and B1)
  visits   KataGo's search at `fake_gtp.py visits S` seconds a visit: takes `kata-set-param
           maxVisits N` / `maxTime T` (and answers kata-get-param of them) and clear_cache;
           genmove passes after min(N * S, T) seconds (N = 1, T unbounded until set)
"""
import sys
import time

FAULT_AFTER = 4
SLOW_S = 1.6
COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "pass"
    if mode == "dead":
        sys.exit(1)
    board = []          # vertices played since clear_board, 'pass' included
    expected = sys.argv[2] if len(sys.argv) > 2 else None
    settings = left = None      # the time control since clear_board, the last time_left
    lowest = {}                 # gameclock: color -> the least time_left seen in this game
    params = {"maxVisits": "1", "maxTime": "1e9"}      # visits: the search's limits
    out = sys.stdout
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        ident = ""
        if words[0].isdigit():
            ident, words = words[0], words[1:]
        if not words:
            continue
        command, args = words[0].lower(), words[1:]
        answer = ""
        if command == "protocol_version":
            answer = "2"
        elif command == "name":
            answer = "fake"
        elif command in ("boardsize", "komi"):
            pass
        elif command == "clear_board":
            board, settings, left, lowest = [], None, None, {}
        elif command in ("time_settings", "time_left") and mode in ("clock", "gameclock"):
            if command == "time_settings":
                settings = args
            else:
                left = args
        elif command == "play":
            board.append(args[1].upper() if len(args) > 1 else "PASS")
        elif mode == "visits" and command == "kata-set-param" and args[:1] in (["maxVisits"],
                                                                           ["maxTime"]):
            params[args[0]] = args[1]
        elif mode == "visits" and command == "kata-get-param" and args[:1] in (["maxVisits"],
                                                                           ["maxTime"]):
            answer = params[args[0]]
        elif mode == "visits" and command == "clear_cache":
            pass
        elif command == "genmove":
            if mode == "gameclock":
                answer = "pass" if _clock_kept(settings, left, args, expected, lowest) \
                    else "banana"
                left = None
            elif mode == "clock":
                wanted = (["0", expected, "1"], [args[0] if args else "", expected, "1"])
                answer = "pass" if (settings, left) == wanted else "banana"
                left = None
            elif mode == "suicide":
                answer = "A1"
            elif mode == "visits":
                time.sleep(min(int(params["maxVisits"]) * float(expected),
                               float(params["maxTime"])))
            elif len(board) >= FAULT_AFTER and mode != "pass":
                if mode == "crash":
                    sys.stderr.write("fake engine: fatal error, giving up\n")
                    sys.exit(3)
                if mode == "hang":
                    time.sleep(3600)
                if mode == "slow":
                    time.sleep(SLOW_S)
                if mode == "noise":
                    out.write("hello, I am not a GTP engine\n\n")
                    out.flush()
                    continue
                if mode == "garbage":
                    answer = "banana"
                elif mode == "illegal":
                    stones = [v for v in board if v != "PASS"]
                    answer = stones[-1] if stones else "A1"
            if not answer:
                answer = "pass"
            board.append(answer.upper())
        elif command == "quit":
            out.write(f"={ident}\n\n")
            out.flush()
            return
        else:
            out.write(f"?{ident} unknown command\n\n")
            out.flush()
            continue
        out.write(f"={ident} {answer}\n\n")
        out.flush()


def _clock_kept(settings, left, args, expected, lowest):
    """gameclock: the game clock came as expected; records the color's time left."""
    if settings != [expected, "0", "0"] or left is None or len(left) != 3 or not args:
        return False
    color, seconds, stones = left
    if color.lower()[:1] != args[0].lower()[:1] or stones != "0" or not seconds.isdigit():
        return False
    seconds = int(seconds)
    if seconds > int(expected) or seconds > lowest.get(color.lower()[:1], seconds):
        return False
    lowest[color.lower()[:1]] = seconds
    return True


if __name__ == "__main__":
    main()
