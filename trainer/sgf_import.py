"""SGF game records -> experience shards, for supervised pretraining (`fastgo train --sgf`).

Each usable game becomes a GameRecord exactly like a self-play game's, except that its visit
distribution is the move played (one entry of weight 1, a full target at every move),
`root_value` is 0 and `versions` is empty. Games are replayed with fastgo's board under
positional superko (fastgo.replay.check_game); the result comes from RE[]. Files that cannot be
read, parsed or replayed are skipped and counted by kind, with the first reason of each kind
kept for the summary. Only the first game of a file (an SGF collection) and its main line are
read. Directories are walked without recursion, MAX_DIR_DEPTH levels and MAX_WALK_ENTRIES
entries at most; a folder refused (too deep, not listable) is counted and named in a warning.
Torch-free: a worker could run it.
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field

import numpy as np

from fastgo import coords
from fastgo.bounds import KOMI
from fastgo.files import printable, reason
from fastgo.replay import check_game
from fastgo.sgf import BLACK, COLOR_LETTERS, WHITE, SgfError, read_sgf_file
from rundata.shards import GameRecord, ShardWriter

MAX_FILES = 1_000_000          # SGF files one import may name or find
MAX_DIR_DEPTH = 64             # folder levels walked below a directory given
MAX_WALK_ENTRIES = 10_000_000  # directory entries one walk looks at (files and folders)
MAX_WALK_WARNINGS = 20         # refused folders logged one by one; the rest only counted
MAX_FILE_BYTES = 1 << 20       # one game record; larger files are skipped as unreadable
SHARD_GAMES = 2_000            # games per shard written
MAX_OPEN_SHARDS = 16           # shards open at once (one per komi): one more komi seals the oldest
SHARD_PREFIX = "sgf"

log = logging.getLogger("fastgo.train")


class SgfInputError(ValueError):
    """The paths given cannot be imported at all (missing, not an SGF, none found, too many):
    one line for the command line."""


class Skip(Exception):
    """A game left out: `kind` groups the summary, `reason` names the file and the problem."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass
class ImportReport:
    read: int = 0                                   # files tried
    used: int = 0                                   # games written
    positions: int = 0                              # moves of the games written
    passes: int = 0                                 # of them, ended by passes with real ownership
    skipped: dict = field(default_factory=dict)     # kind -> count
    first: dict = field(default_factory=dict)       # kind -> the first reason of that kind

    def skip(self, kind: str, reason: str):
        self.skipped[kind] = self.skipped.get(kind, 0) + 1
        self.first.setdefault(kind, reason)

    def summary(self) -> str:
        """'312 games read, 288 used (20,104 positions); skipped: 14 wrong board size (first:
        a.sgf: SZ[19]), ...', kinds by count, then name."""
        text = f"{self.read} games read, {self.used} used ({self.positions} positions)"
        if self.skipped:
            kinds = sorted(self.skipped, key=lambda k: (-self.skipped[k], k))
            text += "; skipped: " + ", ".join(
                f"{self.skipped[k]} {k} (first: {self.first[k]})" for k in kinds)
        return text


# --- finding files ---------------------------------------------------------------------------

class FoundFiles(list):
    """(path, name shown in reasons) of the SGF files found, plus what the walk refused:
    `refused` kind -> count and `first` kind -> the first reason of that kind (the same shape
    as ImportReport.skipped and .first)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused: dict = {}
        self.first: dict = {}

    def refuse(self, kind: str, why: str):
        """Counts one refusal; the first MAX_WALK_WARNINGS are logged as warnings."""
        self.refused[kind] = self.refused.get(kind, 0) + 1
        total = sum(self.refused.values())
        if total <= MAX_WALK_WARNINGS:
            log.warning("SGF import: %s: %s", kind, why)
        elif total == MAX_WALK_WARNINGS + 1:
            log.warning("SGF import: more folders refused; the summary counts them")
        self.first.setdefault(kind, why)


def _is_sgf_name(name: str) -> bool:
    return name.lower().endswith(".sgf") and not name.startswith(".")


def _walk(given: str, found: FoundFiles, *, max_files: int, max_depth: int, max_entries: int):
    """Appends the SGF files under the directory `given` to `found` in sorted pre-order (a
    folder's files, then each subfolder in name order), iteratively: a folder more than
    `max_depth` levels below `given`, one that cannot be listed (permissions, a path over the
    system's limit) or seen twice (a bind-mount loop) is refused and counted; symlinked folders
    are not followed; after `max_entries` entries the walk stops, the rest counted as one."""
    stack = [(given, 0)]              # (folder, levels below given): the top is walked next
    seen = set()                       # (st_dev, st_ino) of the folders walked
    entries = 0
    while stack:
        folder, depth = stack.pop()
        shown = printable(os.path.relpath(folder, given)) if folder != given else printable(given)
        try:
            info = os.stat(folder)
            if (info.st_dev, info.st_ino) in seen:
                found.refuse("folder seen twice", f"{shown}: a loop back to a folder already walked")
                continue
            seen.add((info.st_dev, info.st_ino))
            files, folders = [], []
            with os.scandir(folder) as listing:
                for entry in listing:
                    entries += 1
                    if entries > max_entries:
                        found.refuse("walk stopped", f"{shown}: more than {max_entries} "
                                                     f"entries looked at, the rest not walked")
                        return
                    try:
                        is_folder = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_folder = False
                    if is_folder:
                        folders.append(entry.name)
                    elif _is_sgf_name(entry.name):
                        files.append(entry.name)
        except OSError as err:
            found.refuse("folder not listed", f"{shown}: {reason(err)}")
            continue
        for name in sorted(files):
            path = os.path.join(folder, name)
            found.append((path, printable(os.path.relpath(path, given))))
            if len(found) > max_files:
                raise SgfInputError(f"--sgf: more than {max_files} SGF files")
        for name in sorted(folders, reverse=True):
            if depth + 1 > max_depth:
                found.refuse("folder too deep", printable(os.path.relpath(
                    os.path.join(folder, name), given)) + f": more than {max_depth} levels "
                                                           f"below {printable(given)}")
            else:
                stack.append((os.path.join(folder, name), depth + 1))


def find_sgf_files(paths, *, max_files: int = MAX_FILES, max_depth: int = MAX_DIR_DEPTH,
                   max_entries: int = MAX_WALK_ENTRIES) -> FoundFiles:
    """(path, name shown in reasons) of every SGF file: a directory is walked (symlinked
    directories are not followed; see _walk for the depth and entry bounds and what is
    refused) for files ending in .sgf (any case), sorted; a file must end in .sgf. Shown names
    are printable (a name that is not UTF-8 keeps its bytes as escapes). Raises SgfInputError
    for a missing path, a file that is not .sgf, no files at all, or more than max_files."""
    found = FoundFiles()
    if not paths:
        raise SgfInputError("--sgf: give at least one directory or .sgf file")
    for given in paths:
        given = os.fsdecode(os.fspath(given))
        if os.path.isdir(given):
            before = len(found)
            _walk(given, found, max_files=max_files, max_depth=max_depth, max_entries=max_entries)
            if len(found) == before:
                refused = "".join(f"; {count} {kind} (first: {found.first[kind]})"
                                  for kind, count in sorted(found.refused.items()))
                raise SgfInputError(f"--sgf: no .sgf files under {printable(given)}{refused}")
        elif os.path.exists(given):
            if not given.lower().endswith(".sgf") or not os.path.isfile(given):
                raise SgfInputError(f"--sgf: {printable(given)} is not an .sgf file or a directory")
            found.append((given, printable(given)))
            if len(found) > max_files:
                raise SgfInputError(f"--sgf: more than {max_files} SGF files")
        else:
            raise SgfInputError(f"--sgf: {printable(given)} does not exist")
    return found


# --- one game --------------------------------------------------------------------------------

def parse_result(text: str):
    """RE[] -> (winner, score): winner 1 Black, -1 White, 0 draw; score Black minus White
    (komi included) when the result gives it, else None. Raises ValueError for a result that
    names no winner ('', '?', 'Void', unknown forms)."""
    value = text.strip()
    upper = value.upper()
    if upper in ("0", "DRAW", "JIGO", "D"):
        return 0, 0.0
    if len(value) < 2 or upper[0] not in "BW" or value[1] != "+":
        raise ValueError(f"RE[{value[:30]}] names no winner")
    winner = 1 if upper[0] == "B" else -1
    rest = upper[2:].strip()
    if rest in ("", "R", "RESIGN", "T", "TIME", "F", "FORFEIT"):
        return winner, None
    try:
        margin = coords.parse_float(rest, low=0.0, high=10_000.0, what="margin")
    except ValueError:
        raise ValueError(f"RE[{value[:30]}]: unknown result form") from None
    return winner, winner * margin


def game_record(sgf, name: str, *, size: int, default_komi: float) -> GameRecord:
    """A GameRecord of a parsed SgfGame (fastgo.sgf.SgfGame). Raises Skip."""
    if sgf.size != size:
        raise Skip("wrong board size", f"{name}: SZ[{sgf.size}], the model plays {size}")
    if sgf.setup_black or sgf.setup_white or sgf.handicap >= 2:
        raise Skip("setup stones or handicap",
                   f"{name}: {len(sgf.setup_black)} AB, {len(sgf.setup_white)} AW, HA[{sgf.handicap}]")
    komi = default_komi if sgf.komi is None else float(sgf.komi)
    if komi not in KOMI:
        raise Skip("komi out of range", f"{name}: KM[{komi}]")
    if not sgf.moves:
        raise Skip("no moves", f"{name}: no B or W move")
    try:
        winner, score = parse_result(sgf.result)
    except ValueError as err:
        raise Skip("no usable result", f"{name}: {err}") from None
    for index, (color, _) in enumerate(sgf.moves):
        expected = BLACK if index % 2 == 0 else WHITE
        if color != expected:
            raise Skip("moves out of turn", f"{name} move {index + 1}: {COLOR_LETTERS[color]} "
                                            f"plays where {COLOR_LETTERS[expected]} is to move")
    moves = np.array([move for _, move in sgf.moves], dtype=np.int16)
    nn = size * size
    bad, why, over, replay_score, ownership = check_game(size, komi, moves)
    if bad >= 0:
        color, move = sgf.moves[bad]
        point = coords.to_sgf(move, size) if 0 <= move <= nn else str(move)
        if why == "played after the game ended":
            ended = f"the move cap of {2 * nn}" if bad >= 2 * nn else "two passes"
            raise Skip("moves after the end", f"{name} move {bad + 1}: {COLOR_LETTERS[color]}"
                                              f"[{point}] is played after {ended}")
        raise Skip("illegal move", f"{name} move {bad + 1}: {COLOR_LETTERS[color]}[{point}] is {why}")
    # Over under Tromp-Taylor with the score as recorded: the final position is the truth,
    # ownership included. Otherwise the result stands as written and ownership is unknown.
    # (Board keeps komi as a C float: scores compare to 1e-3.)
    expected = 1 if replay_score > 0 else (-1 if replay_score < 0 else 0)
    if over and score is not None and abs(score - replay_score) <= 1e-3 and winner == expected:
        passed = len(moves) >= 2 and moves[-1] == nn and moves[-2] == nn
        end, score = ("passes" if passed else "move_cap"), float(replay_score)
    else:
        end, score, ownership = "recorded", float(score or 0.0), np.zeros(nn, np.int8)
    length = len(moves)
    digest = hashlib.sha256(f"{size}/{komi}/{winner}/".encode() + moves.tobytes()).hexdigest()
    return GameRecord(size=size, komi=komi, moves=moves, full=np.ones(length, np.uint8),
                      root_value=np.zeros(length, np.float32),
                      policy_count=np.ones(length, np.uint16), policy_moves=moves.copy(),
                      policy_visits=np.ones(length, np.float32), winner=winner, score=score,
                      end=end, ownership=ownership.astype(np.int8), versions=[], id=digest[:32])


def read_game(path: str, name: str, *, size: int, default_komi: float) -> GameRecord:
    """read_sgf_file + game_record; raises Skip."""
    try:
        sgf = read_sgf_file(path, max_chars=MAX_FILE_BYTES)
    except SgfError as err:
        raise Skip("bad SGF", f"{name}: {err}") from None
    except OSError as err:
        raise Skip("unreadable", f"{name}: {reason(err)}") from None
    return game_record(sgf, name, size=size, default_komi=default_komi)


# --- shards ----------------------------------------------------------------------------------

def clear_shards(directory: str):
    """Removes the shards of an earlier import (an import replaces the previous one)."""
    for name in os.listdir(directory):
        if name.startswith(SHARD_PREFIX + "-") and name.endswith(".shard"):
            os.unlink(os.path.join(directory, name))


def import_sgf(paths, directory, *, size: int, default_komi: float,
               shard_games: int = SHARD_GAMES, max_files: int = MAX_FILES):
    """Reads every SGF under `paths` (find_sgf_files) and writes the usable games, in file
    order, into shards `directory/sgf-NNNNNN.shard` (one komi per shard; earlier sgf-*.shard
    files there are removed first). A game whose moves and result equal an earlier one's is
    skipped as a duplicate; folders the walk refused are counted among the skipped kinds.
    Returns (ImportReport, [shard paths])."""
    files = find_sgf_files(paths, max_files=max_files)
    os.makedirs(directory, exist_ok=True)
    clear_shards(directory)
    report = ImportReport()
    for kind, count in files.refused.items():
        report.skipped[kind] = report.skipped.get(kind, 0) + count
        report.first.setdefault(kind, files.first[kind])
    writers: dict[float, ShardWriter] = {}
    written: list[str] = []
    seen: set[str] = set()

    def seal(komi):
        writer = writers.pop(komi)
        written.append(writer.close(f"{SHARD_PREFIX}-{len(written):06d}.shard"))

    try:
        for path, name in files:
            report.read += 1
            try:
                record = read_game(path, name, size=size, default_komi=default_komi)
                if record.id in seen:
                    raise Skip("duplicate game", f"{name}: the same moves and result as an "
                                                 f"earlier file")
            except Skip as skip:
                report.skip(skip.kind, skip.reason)
                continue
            seen.add(record.id)
            writer = writers.get(record.komi)
            if writer is None:
                if len(writers) >= MAX_OPEN_SHARDS:       # the oldest open shard is sealed
                    seal(next(iter(writers)))
                writer = writers[record.komi] = ShardWriter(directory, prefix=SHARD_PREFIX,
                                                            size=size, komi=record.komi)
            writer.add(record)
            report.used += 1
            report.positions += len(record.moves)
            report.passes += record.end != "recorded"
            if writer.count >= shard_games:
                seal(record.komi)
        for komi in sorted(writers):
            seal(komi)
    except BaseException:
        for writer in writers.values():
            writer.abort()
        raise
    return report, written
