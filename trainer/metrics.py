"""metrics.csv: the columns every trainer writes, one meaning per column name, the one way
rows are appended (each row checked first; a file begun by another trainer gains the missing
columns at the end of its header, so every row keeps its values under their names) and the one
way they are read (read_metrics, one bound). TensorBoard scalars beside it.
"""
from __future__ import annotations

import csv
import errno
import io
import logging
import numbers
import os
from typing import TYPE_CHECKING

from fastgo.files import append_bytes, atomic_write, printable, read_bounded
from rundata.statefiles import MAX_COLUMNS, StateRows, open_regular, read_lines

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

# Every column any trainer writes, and what it means. Loss terms are means over the steps
# since the previous row; "the result" is the game's result from the side to move's view.
COLUMNS = {
    "step": "training steps taken (REINFORCE: updates) when the row was written",
    "time": "Unix time of the row, seconds",
    "positions": "positions taken in so far (self-play: ever added to the window; supervised: "
                 "training positions; REINFORCE: the learner's positions trained)",
    "games": "games taken in so far (REINFORCE: games used in updates)",
    "window": "positions in the replay window (supervised: training positions)",
    "samples": "training samples drawn so far",
    "samples_per_s": "training samples per second since the previous row",
    "loss": "the total loss minimized",
    "policy_loss": "the policy term of the loss",
    "value_loss": "the value term of the loss, before value_weight",
    "ownership_loss": "the ownership term of the loss, before ownership_weight",
    "score_loss": "the score term of the loss (MSE of the final margin / board area), before "
                  "score_weight; 0 without a score head",
    "lead_loss": "the lead term of the loss (absolute error of the final margin / board area: "
                 "the median), before score_weight; 0 without a lead head",
    "opponent_policy_loss": "the opponent's-reply term of the loss (cross-entropy to the move "
                            "played next), before opponent_policy_weight; 0 without that head",
    "soft_policy_loss": "the soft policy term of the loss (cross-entropy to the policy target "
                        "raised to the power 1/4), before soft_policy_weight; 0 without that "
                        "head",
    "policy_acc": "top-1 agreement of the policy with its target on the training batches",
    "value_mse": "mean squared error of the value head to the result on the training batches",
    "value_abs_error": "mean absolute error of the value head to the result on the training "
                       "batches",
    "heldout_value_mse": "mean squared error of the value head to the result on the held-out "
                         "positions",
    "heldout_top1": "held-out positions whose most likely move is the move played (fraction)",
    "heldout_top5": "held-out positions with the move played among the 5 most likely",
    "heldout_loss": "cross-entropy of the policy to the move played on the held-out positions",
    "phase": "the trainer that wrote the row, where the algorithm does not show in the columns",
    "mask_loss": "REINFORCE: -log P(acceptable moves), summed per game, averaged per update",
    "advantage": "REINFORCE: mean z - b over the learner's positions of an update",
    "kl": "REINFORCE: mean KL(before || after) of the policy per update",
    "win_rate": "REINFORCE: the learner's wins per decided game since the previous row",
    "staleness": "REINFORCE: mean updates between a game's learner version and its update",
    "stale": "REINFORCE: games dropped unused for max_staleness since the previous row",
    "pool": "REINFORCE: checkpoints in the opponent pool",
    "updates_per_s": "REINFORCE: updates per second since the previous row",
    "lr": "the optimizer's learning rate",
    "version": "the checkpoint version (its step) the row belongs to",
    "quarantined": "shards quarantined so far",
}

_HEAD = ("step", "time", "positions", "games", "window", "samples", "samples_per_s")
_TAIL = ("lr", "version", "quarantined")
# the loss and accuracy terms of each window trainer, in column order
ALPHAZERO_TERMS = ("loss", "policy_loss", "value_loss", "ownership_loss", "policy_acc",
                   "value_mse", "score_loss", "lead_loss", "opponent_policy_loss",
                   "soft_policy_loss")
VALUE_TERMS = ("loss", "policy_loss", "value_loss", "ownership_loss", "policy_acc",
               "value_abs_error")
ALPHAZERO_FIELDS = _HEAD + ALPHAZERO_TERMS + _TAIL
VALUE_FIELDS = _HEAD + VALUE_TERMS + _TAIL
SUPERVISED_FIELDS = (_HEAD + ("loss", "policy_loss", "value_loss", "ownership_loss",
                              "policy_acc", "heldout_value_mse") + _TAIL
                     + ("heldout_top1", "heldout_top5", "heldout_loss", "phase"))
REINFORCE_FIELDS = ("step", "time", "games", "positions", "loss", "policy_loss", "value_loss",
                    "mask_loss", "advantage", "kl", "win_rate", "staleness", "stale", "pool",
                    "updates_per_s", "lr", "version", "quarantined")


MAX_HEADER_BYTES = 1 << 16         # metrics.csv's header line at most
MAX_METRICS_BYTES = 16 << 20       # of metrics.csv's rows only the last this many bytes are read
MAX_CELL = 200                     # characters of a text cell of a row
MAX_REWRITE_BYTES = 64 << 20       # a file larger than this is not rewritten to add columns

log = logging.getLogger("fastgo.train")
_said: set[tuple[str, str]] = set()   # (path, what) already logged by this process


def _say_once(path, what, level, text, *args):
    if (os.fspath(path), what) not in _said:
        _said.add((os.fspath(path), what))
        log.log(level, "%s: " + text, printable(path), *args)


def metrics_row(fields, row) -> dict:
    """`row`'s cells of the columns `fields` (other keys are left out), each checked: a number
    (not a bool), a text of at most MAX_CELL characters without a line break, or None (an empty
    cell); ValueError naming the column otherwise (a row the readers would misread is a bug of
    its trainer)."""
    out = {}
    for key in fields:
        if key not in row:
            continue
        value = row[key]
        if value is None:
            value = ""
        elif isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
            raise ValueError(f"metrics.csv column {key!r}: not a number or text: {value!r:.80}")
        elif isinstance(value, str) and (len(value) > MAX_CELL or "\n" in value or "\r" in value):
            raise ValueError(f"metrics.csv column {key!r}: a text over {MAX_CELL} characters or "
                             f"with a line break: {value!r:.80}")
        out[key] = value
    return out


def append_metrics_row(path, fields, row) -> bool:
    """Appends `row` (keys among `fields`) to the CSV file at `path` under its header; a new or
    empty file gets `fields` as its header. The file is the user's: its bytes are kept. A last
    line without a line end (a row cut short, or anything else) is ended with one before the
    row, and a line says so. A header lacking some of `fields` gets them added at its end, each
    earlier line kept as it was with empty cells appended (_widen), so every row keeps its
    columns; a file that cannot be widened so (too large, not UTF-8, a line that is not a row of
    its header) is left as it is and the row's cells of the columns it lacks are left out, which
    a line says once. A file that cannot take the row (not a regular file, an unreadable header)
    is left as it is, the row not written, a warning logged: False. ValueError for a row
    metrics_row refuses, before anything is written."""
    row = metrics_row(fields, row)
    try:
        header, ended = _read_header(path)
    except (OSError, ValueError) as err:
        log.warning("%s: metrics row not written: %s", printable(path),
                    printable(err.strerror if isinstance(err, OSError) and err.strerror else err))
        return False
    data = io.StringIO()
    if header is not None and not ended:
        _say_once(path, "unended", logging.WARNING, "its last line has no line end: one added "
                  "after it, its bytes kept as they were; rows continue on the next line")
        data.write("\n")
    if header is not None and any(f not in header for f in fields):
        wider = header + [f for f in fields if f not in header]
        if _widen(path, header, wider, prefix=data.getvalue()):
            header = wider
            data = io.StringIO()
    if header is None:
        header = list(fields)
        csv.writer(data).writerow(header)
    csv.DictWriter(data, fieldnames=header, restval="", extrasaction="ignore").writerow(row)
    try:
        append_bytes(path, data.getvalue().encode("utf-8"))
    except OSError as err:
        log.warning("%s: metrics row not written: %s", printable(path),
                    printable(err.strerror or err))
        return False
    return True


def read_metrics(path, *, max_rows=None, columns=None) -> tuple[list, StateRows]:
    """(header, rows as dicts of str): metrics.csv as every reader takes it. The header is the
    file's first line; the rows are those of its last MAX_METRICS_BYTES (the newest; a row cut
    at the start of that tail is dropped), a row shorter than the header padded with empty
    cells. A line that is not a row of the header (not UTF-8 CSV, more cells, over the line
    bound) is skipped and counted in rows.skipped_lines (numbered within what was read); a
    file that is absent, not a regular file or whose header cannot be read gives ([], rows
    with a note saying why, empty when absent). `max_rows`: at most this many rows, evenly
    spaced over the lines read, the first and the last kept (a chart of a month's run parses
    2,000 rows, not 100,000); `columns`: only these columns in each row (the others dropped)."""
    try:
        header, _ = _read_header(path)
        size = os.stat(path).st_size if header is not None else 0
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else err
        return [], StateRows(note=f"not read: {why}")
    if header is None:
        return [], StateRows()
    if len(header) > MAX_COLUMNS:
        return [], StateRows(note=f"a header of {len(header)} columns, over {MAX_COLUMNS}: "
                                  f"no row read")
    lines, too_long, note = read_lines(path, max_bytes=MAX_METRICS_BYTES)
    tail = size > MAX_METRICS_BYTES           # the first line read is a row, not the header
    if not tail and lines and lines[0][0] == 1:
        lines = lines[1:]
    if max_rows is not None and len(lines) > max(2, max_rows):
        last, wanted = len(lines) - 1, max(2, max_rows)
        lines = [lines[last * k // (wanted - 1)] for k in range(wanted)]
    keep = None if columns is None else [c for c in header if c in columns]
    rows, skipped = [], list(too_long)
    for number, raw in lines:
        try:
            cells = next(csv.reader([raw.decode("utf-8")]), [])
        except (UnicodeDecodeError, csv.Error):
            skipped.append(number)
            continue
        if len(cells) > len(header):
            skipped.append(number)
            continue
        if cells:
            row = dict(zip(header, cells + [""] * (len(header) - len(cells))))
            rows.append(row if keep is None else {c: row[c] for c in keep})
    out = StateRows(rows, sorted(skipped), note)
    if out.skipped or note:
        _say_once(path, "read", logging.WARNING, "%s", "; ".join(
            x for x in (f"{out.skipped} line(s) skipped as not rows of its header"
                        if out.skipped else "", note) if x))
    return header, out


def _read_header(path):
    """(the header cells of metrics.csv, whether the file ends with a line end); (None, True)
    when it is absent or empty. OSError for a FIFO, a device or a folder (never opened to wait),
    ValueError for a header that is too long, not UTF-8 or not CSV."""
    try:
        handle = open_regular(path)
    except ValueError:
        raise OSError(errno.EINVAL, "not a usable path") from None
    if handle is None:
        return None, True
    with handle:
        line = handle.readline(MAX_HEADER_BYTES + 1)
        if line:
            handle.seek(-1, os.SEEK_END)
            ended = handle.read(1) == b"\n"
    if not line:
        return None, True
    if len(line) > MAX_HEADER_BYTES:
        raise ValueError(f"its header line is over {MAX_HEADER_BYTES} bytes")
    try:
        header = next(csv.reader([line.decode("utf-8-sig").rstrip("\r\n")]), None)
    except (UnicodeDecodeError, csv.Error) as err:
        raise ValueError(f"its header line is not UTF-8 CSV ({type(err).__name__})") from None
    return (header or None), ended


def _widen(path, header, wider, *, prefix="") -> bool:
    """Rewrites metrics.csv (atomically) with the columns `wider` adds to `header` appended to
    its header line and empty cells appended to each row, every earlier byte of each line kept
    in place (`prefix`, a line end the file lacks, added first). False, the file untouched and a
    line saying why once, when it is over MAX_REWRITE_BYTES, not UTF-8, or holds a line that is
    not a row of its header (more cells, or an unclosed quote)."""
    added = wider[len(header):]
    try:
        text = read_bounded(path, MAX_REWRITE_BYTES).decode("utf-8") + prefix
        lines = text.split("\n")
        out = []
        for number, line in enumerate(lines[:-1], start=1):
            body = line[:-1] if line.endswith("\r") else line
            ending = line[len(body):] + "\n"
            if number == 1:
                cells = io.StringIO()
                csv.writer(cells, lineterminator="").writerow(added)
                out.append(f"{body},{cells.getvalue()}{ending}")
                continue
            row = next(csv.reader([body], strict=True), [])
            if len(row) > len(header):
                raise ValueError(f"line {number} has {len(row)} cells, its header {len(header)}")
            out.append(body + "," * (len(wider) - len(row)) + ending if row else line + "\n")
    except (OSError, UnicodeDecodeError, ValueError, csv.Error) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else (
            f"line {number}: {err}" if isinstance(err, csv.Error) else err)
        _say_once(path, "narrow", logging.WARNING, "not rewritten to add the columns %s (%s); "
                  "rows go under its header", ", ".join(added), printable(why))
        return False
    atomic_write(path, lambda handle: handle.write("".join(out) + lines[-1]), binary=False,
                 suffix=".csv")
    _say_once(path, "widened", logging.INFO, "columns %s added at the end of its header; every "
              "earlier line kept as it was, with empty cells appended", ", ".join(added))
    return True


_TB: dict[str, SummaryWriter] = {}     # run root -> its writer
_TB_MISSING = False                     # the tensorboard package failed to import


def tensorboard(run_dir, row):
    """The row's numeric cells as TensorBoard scalars train/COLUMN at its step, under RUN/tb,
    when the tensorboard package is installed (else nothing)."""
    global _TB_MISSING
    if _TB_MISSING:
        return
    writer = _TB.get(run_dir.root)
    if writer is None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except Exception:                       # tensorboard not installed
            _TB_MISSING = True
            return
        writer = _TB[run_dir.root] = SummaryWriter(run_dir.tensorboard)
    for key, value in row.items():
        if key not in ("step", "time", "version"):
            try:
                writer.add_scalar(f"train/{key}", float(value), int(row["step"]))
            except (TypeError, ValueError):
                pass
    writer.flush()
