"""GTP time control for the engine (play.gtp.engine): the clock that time_settings,
kgs-time_settings and time_left set, and the seconds one genmove may spend by it or by a fixed
limit per move."""
from __future__ import annotations

from fastgo.gtp import GtpError, int_arg, parse_color
from play.equal_time import moves_left, safe_budget

MAX_TIME = 10 ** 9          # seconds or stones in time commands (about 31 years)
BYO_SHARE = 0.8             # share of a byo-yomi period's slice added to a main-time move
KGS_ARGS = {"none": 1, "absolute": 2, "byoyomi": 4, "canadian": 4}


class GtpClock:
    """settings: (main_time s, byo_yomi_time s, byo_yomi_stones) or None (no clock);
    left: color -> (seconds, stones) as the last time_left said (stones > 0: in byo-yomi);
    move_seconds: a fixed limit per move (`fastgo gtp --seconds`) or None."""

    def __init__(self, move_seconds=None):
        self.settings = None
        self.left = {}
        self.move_seconds = move_seconds

    def cmd_time_settings(self, args):
        """time_settings MAIN BYO_YOMI STONES (seconds, seconds, stones)."""
        if len(args) != 3:
            raise GtpError("syntax error")
        main, byo, stones = (int_arg(a, 0, MAX_TIME) for a in args)
        self.settings = (main, byo, stones)
        return ""

    def cmd_kgs_time_settings(self, args):
        """kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS |
        canadian MAIN PERIOD STONES (seconds). Forgets what time_left said."""
        kind = args[0].lower() if args else ""
        if kind not in KGS_ARGS or len(args) != KGS_ARGS[kind]:
            raise GtpError("syntax error")
        if kind == "none":
            self.settings = None
        elif kind == "absolute":
            self.settings = (int_arg(args[1], 0, MAX_TIME), 0, 0)
        else:
            main, period, count = (int_arg(a, 0, MAX_TIME) for a in args[1:])
            # Japanese byo-yomi: each period is one move; Canadian: `count` stones per period
            self.settings = (main, period, 1 if kind == "byoyomi" else count)
        self.left = {}
        return ""

    def cmd_time_left(self, args):
        """time_left COLOR SECONDS STONES."""
        if len(args) != 3:
            raise GtpError("syntax error")
        color = parse_color(args[0])
        seconds, stones = int_arg(args[1], -MAX_TIME, MAX_TIME), int_arg(args[2], 0, MAX_TIME)
        self.left[color] = (seconds, stones)
        return ""

    def move_budget(self, color, empties):
        """Seconds `color`'s next move may take, `empties` points of the board being empty:
        a share of the clock (main time over play.equal_time.moves_left, plus a share of
        byo-yomi; in byo-yomi the period over its stones), play.equal_time.safe_budget of it;
        capped by move_seconds. None: no clock and no fixed limit."""
        budget = None
        if color in self.left or self.settings is not None:
            main, byo, stones = self.settings or (0, 0, 0)
            seconds, left_stones = self.left.get(color, (main if main else byo,
                                                         0 if main else stones))
            if left_stones > 0:                  # in byo-yomi: this period over its stones
                budget = seconds / left_stones
            elif seconds > 0:                    # main time: spread over the moves likely left
                budget = seconds / moves_left(empties)
                if byo and stones:
                    budget += BYO_SHARE * byo / stones
            elif byo and stones:
                budget = byo / stones
            if budget is not None:
                budget = safe_budget(budget)
        if self.move_seconds is not None:
            budget = self.move_seconds if budget is None else min(budget, self.move_seconds)
        return budget
