"""A GTP v2 engine over a fastgo.game.Game and a Player (play.players).

`GtpEngine.handle_line(line)` answers one input line; `serve(stdin, stdout)` is the loop behind
`fastgo gtp`. Every failure is a GTP error response ('? illegal move', '? unknown command', ...),
never a traceback on stdout: an unexpected exception is logged to stderr and answered as
'? internal error'. The engine keeps the setup stones and moves of the current game itself, so
komi changes, undo and printsgf work whatever the Game keeps. Time control is
play.gtp.clock's, handicap and SGF setup play.gtp.position's, live analysis
play.gtp.analyze's.
"""
import logging
import sys
from importlib.metadata import version

from fastgo import coords
from fastgo.bounds import KOMI
from fastgo.constants import SIZE_RANGE
from fastgo.game import RESIGN, Game
from fastgo.gtp import (
    BLACK,
    WHITE,
    GtpError,
    color_name,
    float_arg,
    format_response,
    int_arg,
    parse_color,
    parse_line,
)
from fastgo.move_choice import point_instead_of_pass
from play.equal_time import empty_points
from play.gtp import kata
from play.gtp.analyze import LineReader, parse_analyze_args, stream
from play.gtp.clock import GtpClock
from play.gtp.position import (
    free_handicap_points,
    handicap_points,
    loadsgf_stop,
    read_sgf,
    set_free_handicap_points,
    sgf_position,
    sgf_text,
    write_text,
)
from play.players import AnalysingPlayer, Player

log = logging.getLogger("fastgo.gtp")

ENGINE_NAME = "fastgo"


def _engine_version():
    try:
        return version("fastgo")
    except Exception:   # not installed as a distribution (source checkout)
        return "0.1.0"


class GtpEngine:
    """One GTP session. `player` (a play.players.Player; an AnalysingPlayer gets the analysis
    commands) picks moves for genmove; `size`/`komi` start the first game."""

    def __init__(self, player, *, size=9, komi=7.5, superko=True, name=ENGINE_NAME,
                 move_seconds=None):
        if not isinstance(player, Player):
            raise TypeError(f"the GTP engine plays a play.players.Player, not "
                            f"{type(player).__name__}")
        if not coords.is_board_size(size):
            raise ValueError(f"board size {size} is outside {SIZE_RANGE}")
        self.player = player
        self.name = name
        self.size = int(size)
        self.komi = float(komi)
        self.superko = superko
        self.finished = False          # set by quit
        self.clock = GtpClock(move_seconds)
        self.handlers = {
            "protocol_version": self.cmd_protocol_version,
            "name": self.cmd_name,
            "version": self.cmd_version,
            "known_command": self.cmd_known_command,
            "list_commands": self.cmd_list_commands,
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "get_komi": self.cmd_get_komi,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "undo": self.cmd_undo,
            "showboard": self.cmd_showboard,
            "final_score": self.cmd_final_score,
            "list_stones": self.cmd_list_stones,
            "is_legal": self.cmd_is_legal,
            "captures": self.cmd_captures,
            "loadsgf": self.cmd_loadsgf,
            "printsgf": self.cmd_printsgf,
            "time_settings": self.clock.cmd_time_settings,
            "time_left": self.clock.cmd_time_left,
            "kgs-time_settings": self.clock.cmd_kgs_time_settings,
            "kgs-genmove_cleanup": self.cmd_kgs_genmove_cleanup,
            "fixed_handicap": self.cmd_fixed_handicap,
            "place_free_handicap": self.cmd_place_free_handicap,
            "set_free_handicap": self.cmd_set_free_handicap,
        }
        if isinstance(player, AnalysingPlayer):
            self.handlers["lz-analyze"] = self.cmd_lz_analyze
            self.handlers["kata-analyze"] = self.cmd_kata_analyze
            self.handlers["kata-genmove_analyze"] = self.cmd_kata_genmove_analyze
        self.handlers["kata-get-rules"] = kata.get_rules
        self.handlers["kata-set-rules"] = kata.set_rules
        self.analysis_interval = None  # set by lz-analyze: serve() streams until the next command
        self.analysis_report = None    # kata-analyze's line maker (play.gtp.kata), else lz-analyze's
        self.command_id = None         # the id of the command being answered
        self.live_output = None        # serve()'s stdout: kata-genmove_analyze writes as it searches
        self.max_analysis_visits = 100_000
        self._new_game()

    # --- the game ------------------------------------------------------------------------------

    def _new_game(self, setup_black=(), setup_white=(), to_move=BLACK):
        self.game = Game(size=self.size, komi=self.komi, superko=self.superko)
        self.setup_black = list(setup_black)
        self.setup_white = list(setup_white)
        self.handicap = 0              # stones placed by a handicap command
        if self.setup_black or self.setup_white:
            self.game.setup(black=self.setup_black, white=self.setup_white)
        self._set_to_move(to_move)

    def _set_to_move(self, color):
        if self.game.to_move != color:
            self.game.to_move = color

    def _vertex(self, text):
        try:
            return coords.from_gtp(text, self.size)
        except ValueError:
            raise GtpError("invalid coordinate") from None

    def _legal_for(self, color, move):
        """Legality of `move` for `color`. Out of turn it is asked of a copy: changing the side
        to move clears the simple-ko point, which the real game must keep."""
        if color == self.game.to_move:
            return self.game.is_legal(move)
        probe = self.game.copy()
        probe.to_move = color
        return probe.is_legal(move)

    def _board_empty(self):
        return not self.game.moves and not self.setup_black and not self.setup_white

    # --- the protocol --------------------------------------------------------------------------

    def handle_line(self, line):
        """The response text for one input line, or None when the line is empty or a comment."""
        self.analysis_interval = None
        try:
            command = parse_line(line)
        except GtpError as exc:     # an overlong line or an id beyond range: no id to echo
            return format_response(None, str(exc), ok=False)
        if command is None:
            return None
        if not command.name:
            return format_response(command.id, "syntax error", ok=False)
        handler = self.handlers.get(command.name)
        if handler is None:
            return format_response(command.id, "unknown command", ok=False)
        self.command_id = command.id
        try:
            text = handler(command.args)
            if isinstance(text, kata.RawResponse):        # kata-genmove_analyze: already formatted
                return str(text)
            if self.analysis_interval is not None:       # lz-analyze: the response stays open
                return "=" + ("" if command.id is None else str(command.id)) + "\n"
            return format_response(command.id, text)
        except GtpError as exc:
            return format_response(command.id, str(exc), ok=False)
        except Exception as exc:   # an engine bug: logged, answered, and the session goes on
            log.exception("command %r failed", command.name)
            return format_response(command.id, f"internal error: {type(exc).__name__}", ok=False)

    def serve(self, stdin=None, stdout=None):
        """Answers lines from stdin until quit or end of input; flushes after each response."""
        reader = LineReader(sys.stdin if stdin is None else stdin)
        stdout = sys.stdout if stdout is None else stdout
        self.live_output = stdout
        while not self.finished:
            line = reader.readline()
            if line is None:
                break
            response = self.handle_line(line)
            if response is None:
                continue
            stdout.write(response)
            stdout.flush()
            if self.analysis_interval is not None:
                interval, self.analysis_interval = self.analysis_interval, None
                try:
                    stream(self.player, self.game, reader, stdout, interval, self.max_analysis_visits,
                           report=self.analysis_report)
                except Exception:     # a failing search ends the analysis, never the session
                    log.exception("lz-analyze failed")
                    stdout.write("\n")
                    stdout.flush()
        return 0

    @staticmethod
    def _arity(args, low, high=None):
        high = low if high is None else high
        if not low <= len(args) <= high:
            raise GtpError("syntax error")

    # --- administrative commands ---------------------------------------------------------------

    def cmd_protocol_version(self, args):
        return "2"

    def cmd_name(self, args):
        return self.name

    def cmd_version(self, args):
        return _engine_version()

    def cmd_known_command(self, args):
        self._arity(args, 1)
        return "true" if args[0] in self.handlers else "false"

    def cmd_list_commands(self, args):
        return "\n".join(self.handlers)

    def cmd_quit(self, args):
        self.finished = True
        return ""

    # --- setup ---------------------------------------------------------------------------------

    def cmd_boardsize(self, args):
        self._arity(args, 1)
        size = int_arg(args[0], message="boardsize not an integer")
        self._check_size(size)
        self.size = size
        self._new_game()
        self._reset_player()
        return ""

    def _check_size(self, size):
        """GtpError unless the rules and the player (a network plays one size) take `size`."""
        fixed = self.player.board_size
        if not coords.is_board_size(size) or (fixed is not None and size != fixed):
            raise GtpError("unacceptable size")

    def cmd_clear_board(self, args):
        self._new_game()
        self._reset_player()
        return ""

    def _reset_player(self):
        self.player.reset()

    def cmd_komi(self, args):
        self._arity(args, 1)
        komi = float_arg(args[0], KOMI.low, KOMI.high, message="komi not a float")
        self.komi = komi
        self.game.komi = komi
        return ""

    def cmd_get_komi(self, args):
        return f"{self.komi:g}"

    def _place_handicap(self, points):
        if not self._board_empty():
            raise GtpError("board not empty")
        self._new_game(setup_black=points, to_move=WHITE)
        self.handicap = len(points)
        return " ".join(coords.to_gtp(p, self.size) for p in points)

    def cmd_fixed_handicap(self, args):
        self._arity(args, 1)
        count = int_arg(args[0], message="handicap not an integer")
        return self._place_handicap(handicap_points(self.size, count))

    def cmd_place_free_handicap(self, args):
        self._arity(args, 1)
        count = int_arg(args[0], message="handicap not an integer")
        return self._place_handicap(free_handicap_points(self.size, count))

    def cmd_set_free_handicap(self, args):
        self._place_handicap(set_free_handicap_points(args, self.size, self._vertex))
        return ""

    def cmd_loadsgf(self, args):
        self._arity(args, 1, 2)
        stop = loadsgf_stop(args[1]) if len(args) == 2 else None
        record = read_sgf(args[0])
        self._check_size(record.size)
        komi = self.komi if record.komi is None else record.komi
        game = sgf_position(record, komi=komi, superko=self.superko, stop=stop)
        self.size = record.size
        self.komi = komi
        self.game = game
        self.setup_black = list(record.setup_black)
        self.setup_white = list(record.setup_white)
        self.handicap = record.handicap
        self._reset_player()
        return color_name(self.game.to_move)

    # --- play ----------------------------------------------------------------------------------

    def cmd_play(self, args):
        self._arity(args, 2)
        color = parse_color(args[0])
        if args[1].lower() == "resign":
            self.game.resign(color)
            return ""
        move = self._vertex(args[1])
        if not self._legal_for(color, move):
            raise GtpError("illegal move")
        self._set_to_move(color)
        self.game.play(move)
        return ""

    def cmd_kgs_genmove_cleanup(self, args):
        """genmove that does not pass while a legal move outside the player's own eyes is left,
        so dead stones are captured before the game ends (KGS's cleanup phase)."""
        return self.cmd_genmove(args, cleanup=True)

    def cmd_genmove(self, args, cleanup=False):
        self._arity(args, 1)
        color = parse_color(args[0])
        if self.game.is_over():
            return "pass"            # two passes, the move cap or a resignation: nothing to add
        self._set_to_move(color)     # like GNU Go: genmove plays for the color asked
        options = {}
        if self.player.accepts_limits:
            options["seconds"] = self.clock.move_budget(color, empty_points(self.game.board))
            options["no_pass"] = cleanup
        try:
            move = int(self.player.genmove(self.game, **options))
        except Exception as exc:     # e.g. the evaluator failed mid-search: start the player afresh
            log.exception("genmove failed; resetting the player")
            try:
                self._reset_player()
            except Exception:
                log.exception("resetting the player after a failed genmove failed too")
            raise GtpError(f"genmove failed: {type(exc).__name__}") from None
        if move == RESIGN and cleanup:
            move = self.size * self.size
        if move == RESIGN:
            self.game.resign(color)
            return "resign"
        if cleanup and move == self.size * self.size:
            move = self._cleanup_move()
        if not self.game.is_legal(move):
            log.error("player %s chose illegal move %d; passing instead", self.player.name, move)
            move = self.size * self.size
        self.game.play(move)
        return coords.to_gtp(move, self.size)

    def _cleanup_move(self):
        """Instead of a pass (fastgo.move_choice.point_instead_of_pass): a legal point outside
        the player's own eyes, the searched one with the most visits where the player keeps a
        search; the pass where none is left."""
        rows = self.player.analysis() if isinstance(self.player, AnalysingPlayer) else []
        return point_instead_of_pass(self.game, [row["move"] for row in rows])

    def cmd_lz_analyze(self, args):
        color, interval = parse_analyze_args(args)
        if color is not None:
            self._set_to_move(color)
        self.analysis_interval, self.analysis_report = interval, None
        return ""

    def cmd_kata_analyze(self, args):
        color, interval, flags = kata.parse_kata_args(args)
        if color is not None:
            self._set_to_move(color)
        self.analysis_interval, self.analysis_report = interval, kata.reporter(flags)
        return ""

    def cmd_kata_genmove_analyze(self, args):
        return kata.genmove_analyze(self, args)

    def cmd_undo(self, args):
        if not self.game.moves or not self.game.undo():
            raise GtpError("cannot undo")
        return ""

    # --- queries -------------------------------------------------------------------------------

    def cmd_list_stones(self, args):
        self._arity(args, 1)
        color = parse_color(args[0])
        stones = self.game.board.stones().ravel()
        return " ".join(coords.to_gtp(m, self.size) for m in range(self.size * self.size)
                        if stones[m] == color)

    def cmd_is_legal(self, args):
        self._arity(args, 2)
        color = parse_color(args[0])
        move = self._vertex(args[1])
        return "1" if self._legal_for(color, move) else "0"

    def cmd_captures(self, args):
        self._arity(args, 1)
        color = parse_color(args[0])
        black, white = self.game.board.captures
        return str(black if color == BLACK else white)

    def cmd_final_score(self, args):
        if self.game.resigned is not None:
            return self.game.result_string()
        score = float(self.game.score())
        if score > 0:
            return f"B+{score:g}"
        if score < 0:
            return f"W+{-score:g}"
        return "0"

    def cmd_showboard(self, args):
        size = self.size
        stones = self.game.board.stones()
        letters = coords.GTP_COLUMNS[:size]
        header = "   " + " ".join(letters)
        black_caps, white_caps = self.game.board.captures
        lines = [header]
        for row in range(size):
            number = size - row
            cells = " ".join(".XO"[int(stones[row, col])] for col in range(size))
            line = f"{number:2d} {cells} {number:<2d}"
            if row == size - 2:
                line += f"    WHITE (O) has captured {white_caps} stones"
            elif row == size - 1:
                line += f"    BLACK (X) has captured {black_caps} stones"
            lines.append(line)
        lines.append(header)
        lines.append(f"{color_name(self.game.to_move)} to move, komi {self.komi:g}, "
                     f"move {len(self.game.moves)}")
        return "\n" + "\n".join(lines)

    def cmd_printsgf(self, args):
        self._arity(args, 0, 1)
        text = sgf_text(self.game, setup_black=self.setup_black, setup_white=self.setup_white,
                        handicap=self.handicap, application=f"{ENGINE_NAME}:{_engine_version()}")
        if args:
            write_text(args[0], text)
            return ""
        return text
