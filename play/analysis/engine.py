"""`fastgo analysis`: KataGo's JSON analysis engine over one batched search.

`AnalysisEngine(cache, board_size, encoding)` answers query lines (play.analysis.query) with
response lines (play.analysis.report), one JSON object per line, possibly out of order. Every
analysed turn of every open query waits in one priority queue (higher `priority` first, then
arrival); up to `positions` of them are searched at once as the games of one BatchedSearch, so
each network call carries a leaf of every position being searched (a whole game's turns share
the batches). The network is the HeadsCache given (play.heads_cache): the search evaluates
through it under the identity symmetry, so scores and ownership are then found by position.

A turn's search ends at maxVisits root visits, at maxTime seconds, or on `terminate`; while it
runs, `reportDuringSearchEvery` prints partial responses (isDuringSearch true); it ends with
exactly one final response (or `noResults` when terminated before any visit). Lines are read
on a thread (play.analysis.lines) with a size cap; a refused line is answered with an error
object and nothing else changes. At the end of input the queued turns are finished, then
`serve` returns.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from fastgo import bounded_json
from fastgo.features import encode_into
from fastgo.mcts import BatchedSearch
from fastgo.search_settings import SearchSettings
from play.analysis.lines import EMPTY, LineFeed, Overlong
from play.analysis.query import Limits, parse_query
from play.analysis.report import analysis_response, area_ownership, finished_response, no_results
from play.tree_stats import tree_stats

log = logging.getLogger("fastgo.analysis")

VERSION = "1.16.0"            # the KataGo protocol version whose behaviour this follows
MAX_QUEUED_TURNS = 20_000     # turns waiting at once; a query beyond it is refused


@dataclass
class Turn:
    query: object
    number: int
    game: object
    priority: int
    seq: int
    slot: int = -1
    started: float = 0.0
    next_report: float | None = None
    stopped: bool = False          # terminated while searching

    def __lt__(self, other):
        return (-self.priority, self.seq) < (-other.priority, other.seq)


class _Root:
    """A Game as a search root with avoidMoves / allowMoves applied to its legal moves."""

    def __init__(self, game, banned):
        self.board = game.board
        self.superko = game.superko
        self.hash_history = game.hash_history
        self._game = game
        self._banned = banned

    def legal_moves(self):
        mask = self._game.legal_moves()
        for move in self._banned:
            if move < len(mask) - 1:
                mask[move] = 0
        return mask


def _banned(query, game):
    color = game.to_move
    if color in query.allow:
        keep = query.allow[color]
        return [m for m in range(game.size * game.size) if m not in keep]
    return sorted(query.avoid.get(color, ()))


@dataclass
class EngineSettings:
    positions: int = 16            # turns searched at once (the search's games)
    leaves: int = 4                # leaves per position per network call (virtual loss)
    max_nodes: int = 1 << 18       # tree nodes per position
    limits: Limits = field(default_factory=Limits)
    max_line_bytes: int = 1 << 20
    seed: int | None = None


class AnalysisEngine:
    def __init__(self, cache, *, board_size, encoding, settings=None, model_name="fastgo"):
        settings = EngineSettings() if settings is None else settings
        self.cache = cache
        self.size = int(board_size)
        self.settings = settings
        self.model_name = model_name
        search = SearchSettings.for_play(encoding, leaves_per_game=settings.leaves,
                                         random_symmetry=False, max_nodes=settings.max_nodes,
                                         max_batches=1)
        self.search = BatchedSearch(games=settings.positions, size=self.size, settings=search,
                                    seed=settings.seed)
        self._buffer = np.empty((settings.positions * settings.leaves, self.search.planes,
                                 self.size, self.size), np.uint8)
        self.queue = []                # heap of waiting Turns
        self.slots = [None] * settings.positions
        self._seq = itertools.count()
        self.out = None
        self.evaluations = 0           # network rows asked by the search
        self.turns_done = 0

    # --- output -------------------------------------------------------------------------------

    def emit(self, obj):
        """One answer line; a non-finite number in it is written as null (bounded_json.dumps)."""
        self.out.write(bounded_json.dumps(obj, separators=(",", ":")) + "\n")
        self.out.flush()

    # --- input --------------------------------------------------------------------------------

    def handle_line(self, raw):
        """One input line (bytes, or an Overlong): errors, warnings, actions, or queued turns."""
        if isinstance(raw, Overlong):
            self.emit({"error": f"Request line of {raw.length} bytes is longer than "
                                f"{self.settings.max_line_bytes} bytes, ignoring it"})
            return
        if not raw.strip():
            return
        parsed = parse_query(raw, self.settings.limits)
        for message in parsed.messages:
            self.emit(message)
        if parsed.action is not None:
            self._action(parsed.action)
        elif parsed.query is not None:
            self._enqueue(parsed.query)

    def _enqueue(self, query):
        if len(self.queue) + len(query.turns) > MAX_QUEUED_TURNS:
            self.emit({"id": query.id, "field": "analyzeTurns",
                       "error": f"The engine already holds {len(self.queue)} turns to analyse "
                                f"(at most {MAX_QUEUED_TURNS}); try again later"})
            return
        for number, game in query.turns:
            heapq.heappush(self.queue, Turn(query, number, game, query.priorities.get(number, 0),
                                            next(self._seq)))

    def _action(self, value):
        action = value["action"]
        if action == "query_version":
            self.emit({**value, "version": VERSION, "git_hash": "<omitted>"})
        elif action == "query_models":
            self.emit({**value, "models": [{"name": self.model_name, "internalName": self.model_name,
                                            "maxBatchSize": int(self._buffer.shape[0]),
                                            "usesHumanSLProfile": False, "version": 0,
                                            "usingFP16": "false"}]})
        elif action == "clear_cache":
            self.cache.clear()
            self.emit(value)
        else:
            ident = value.get("terminateId") if action == "terminate" else None
            turns = value.get("turnNumbers")
            self._terminate(ident, None if turns is None else set(turns))
            self.emit(value)

    def _terminate(self, ident, turns):
        def matches(turn):
            return (ident is None or turn.query.id == ident) and (turns is None or turn.number in turns)

        kept = []
        for turn in self.queue:
            if matches(turn):
                self.emit(no_results(turn.query.id, turn.number))
            else:
                kept.append(turn)
        if len(kept) != len(self.queue):
            self.queue = kept
            heapq.heapify(self.queue)
        for turn in self.slots:
            if turn is not None and matches(turn):
                turn.stopped = True

    # --- the search ---------------------------------------------------------------------------

    def _start(self, slot, turn, now):
        game = turn.game
        turn.slot, turn.started = slot, now
        if turn.query.report_every is not None:
            turn.next_report = now + turn.query.first_report_after
        if game.is_over():
            wanted = turn.query.include_ownership
            self.emit(finished_response(turn.query, turn.number, game,
                                        ownership=self._ownership(game) if wanted else None))
            self.turns_done += 1
            return False
        self.search.set_position(slot, _Root(game, _banned(turn.query, game)))
        # KataGo's maxVisits counts the root's own visit: its children hold one fewer.
        self.search.start(max(1, turn.query.max_visits - 1), games=[slot])
        self.slots[slot] = turn
        return True

    def _ownership(self, game):
        """The network's ownership of a finished game's position from the view of the player
        to move ([N*N] floats in -1..1), or the Tromp-Taylor area by the rules (which decides
        the result) where the network has no ownership head."""
        planes = np.empty((1, self.search.planes, self.size, self.size), np.uint8)
        encode_into(game.board, self.search.settings.encoding, planes[0])
        own = self.cache.fetch(planes)[0][2]
        if own is not None:
            return np.asarray(own, np.float64)
        return area_ownership(game.board.stones(), game.to_move)

    def _fill(self, now):
        for slot, turn in enumerate(self.slots):
            while turn is None and self.queue:
                if self._start(slot, heapq.heappop(self.queue), now):
                    break
            turn = self.slots[slot]

    def _report(self, turn, during_search):
        g = turn.slot
        if self.search.root_visits(g).sum() == 0 and not during_search:
            self.emit(no_results(turn.query.id, turn.number))
            return
        query = turn.query
        stats = tree_stats(self.search, g, self.cache, model_komi=self.settings.limits.model_komi,
                           ownership=query.include_ownership or query.include_moves_ownership)
        rows = self.search.analysis(g, query.pv_len + 1)
        self.emit(analysis_response(query, turn.number, turn.game, rows, stats,
                                    self.search.root_value(g), during_search=during_search))

    def _finish(self, turn):
        self.search.start(0, games=[turn.slot])     # stops it (nothing is in flight here)
        self._report(turn, during_search=False)
        self.slots[turn.slot] = None
        self.turns_done += 1

    def step(self):
        """One network call for every position being searched, then the bookkeeping: finished
        turns answered, partial reports printed, free slots refilled. False when idle."""
        now = time.monotonic()
        self._fill(now)
        if not any(self.slots):
            return False
        count = self.search.collect(self._buffer)
        if count:
            try:
                logits, values = self.cache(self._buffer[:count])
                self.search.apply(logits, values)
            except BaseException:
                self.search.cancel()
                raise
            self.evaluations += count
        idle = set(int(g) for g in self.search.idle_games())
        now = time.monotonic()
        for turn in list(self.slots):
            if turn is None:
                continue
            limit = turn.query.max_time
            if turn.slot in idle or turn.stopped or (limit is not None and now - turn.started >= limit):
                self._finish(turn)
            elif turn.next_report is not None and now >= turn.next_report:
                if self.search.root_visits(turn.slot).sum() > 0:
                    self._report(turn, during_search=True)
                turn.next_report = now + turn.query.report_every
        return True

    def serve(self, stdin, stdout):
        """Answers the lines of the binary stream `stdin` on the text stream `stdout` until the
        end of input and the last queued turn; returns 0."""
        self.out = stdout
        feed = LineFeed(stdin, self.settings.max_line_bytes)
        at_end = False
        while True:
            busy = any(self.slots) or bool(self.queue)
            item = EMPTY if at_end else feed.get(timeout=0.0 if busy else None)
            while item is not EMPTY:
                if item is None:
                    at_end = True
                    break
                try:
                    self.handle_line(item)
                except BrokenPipeError:         # the reader has gone: nobody to answer
                    raise
                except Exception as exc:        # an engine bug: this line fails, not the engine
                    log.exception("analysis line failed")
                    self.emit({"error": f"internal error: {type(exc).__name__}"})
                item = feed.get(timeout=0.0)
            if not self.step() and at_end and not self.queue:
                return 0
