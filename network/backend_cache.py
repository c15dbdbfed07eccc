"""The per-machine cache of `backend = "auto"`'s choice: one JSON file
(`$XDG_CACHE_HOME/fastgo/backends.json`, else `~/.cache/fastgo/backends.json`) mapping a key
(machine, runtime versions, network shape, batch, threads) to the chosen backend and the table
it was chosen from.

The file is read once per process, by one bounded reader: a regular file only (a FIFO, device or
folder is refused without blocking), at most MAX_CACHE_BYTES, JSON nested at most
MAX_CACHE_DEPTH deep (checked before decoding, without recursion), every entry checked against
the schema below (types, sizes, finite speeds). Anything wrong makes the whole cache absent: a
choice is measured again and the file rewritten atomically. A cache that cannot be read or
written costs one warning line per process, whatever goes wrong and however often. A cached
entry is only a ranking: the server checks each backend against fp32 on the weights it serves
before using it, so an entry claiming that a backend agrees decides nothing.

    {KEY: {"choice": NAME, "time": SECONDS, "table": {NAME: ROW}}}
    ROW: {"evals_per_s": >= 0, "ok": bool, "top1", "value_mae", "policy_kl", "max_logit_err":
          numbers, "checks": {LABEL: {the same four numbers}}} or {"error": TEXT, "ok": false}
"""
from __future__ import annotations

import hashlib
import logging
import math
import os

from fastgo import bounded_json, diskfull
from fastgo.files import atomic_write_text, printable, read_bounded, reason
from network.backend_support import ALL_BACKENDS, backend_available, versions
from network.cpu_isa import cpu_flags, cpu_name, isa_limit

log = logging.getLogger("fastgo.backends")

MAX_CACHE_BYTES = 1 << 20        # a larger file is not read
MAX_CACHE_DEPTH = 8              # {key: {"table": {name: {"checks": {label: {...}}}}}} is 5
MAX_CACHE_ENTRIES = 256          # entries kept (the oldest dropped first)
MAX_KEY_CHARS = 1024
MAX_TEXT_CHARS = 1024            # an error text or a label
MAX_CHECKS = 16                  # position sets of one row
FIGURES = ("top1", "value_mae", "policy_kl", "max_logit_err")

_state: dict = {"warned": False, "docs": {}}     # one warning per process; path -> entries read


class CacheInvalid(ValueError):
    """Why a cache document does not follow the schema."""


def cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fastgo", "backends.json")


# Bumped when the set of candidates `auto` times changes (2: int8 and bf16 offered by what the
# runtimes report, not by the CPU's flags), so that a choice made among fewer is made again.
CANDIDATES_VERSION = 2


def cache_key(config, *, batch: int, threads: int) -> str:
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx", "amx", "fma")))
    # an instruction-set limit makes another machine of the same CPU (cpu_isa.isa_limit)
    machine = " ".join([cpu_name(), *flags, f"isa={isa_limit()}"])
    machine = hashlib.sha256(machine.encode()).hexdigest()[:16]
    runtimes = ",".join(f"{k}={v}" for k, v in sorted(versions().items()))
    return (f"{machine}|c{CANDIDATES_VERSION}|{runtimes}|{config.name}|{config.board_size}|{config.encoding}|"
            f"b{int(batch)}|t{int(threads)}")


def _warn(text: str) -> None:
    """The one warning line of this process about the cache; later ones are left out."""
    if not _state["warned"]:
        _state["warned"] = True
        log.warning("%s", printable(text))


def _number(value, what, *, low=None, finite=True):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CacheInvalid(f"{what} is not a number")
    if isinstance(value, int) and value.bit_length() > 64:
        raise CacheInvalid(f"{what} is out of range")
    value = float(value)
    if finite and not math.isfinite(value):
        raise CacheInvalid(f"{what} is not finite")
    if low is not None and not value >= low:
        raise CacheInvalid(f"{what} is below {low}")
    return value


def _text(value, what, limit=MAX_TEXT_CHARS):
    if not isinstance(value, str) or len(value) > limit:
        raise CacheInvalid(f"{what} is not a string of at most {limit} characters")
    return value


def _row(name, row, where):
    if not isinstance(row, dict):
        raise CacheInvalid(f"{where}: row {name} is not an object")
    if not isinstance(row.get("ok"), bool):
        raise CacheInvalid(f"{where}: row {name}: ok is not true or false")
    if "error" in row:
        _text(row["error"], f"{where}: row {name}: error")
        return {"error": row["error"], "ok": False}
    out = {"ok": row["ok"],
           "evals_per_s": _number(row.get("evals_per_s"), f"{where}: row {name}: evals_per_s",
                                  low=0.0)}
    for figure in FIGURES:
        if figure in row:
            out[figure] = _number(row[figure], f"{where}: row {name}: {figure}", finite=False)
    checks = row.get("checks")
    if checks is not None:
        if not isinstance(checks, dict) or len(checks) > MAX_CHECKS:
            raise CacheInvalid(f"{where}: row {name}: checks is not an object of at most "
                               f"{MAX_CHECKS} sets")
        out["checks"] = {}
        for label, agree in checks.items():
            _text(label, f"{where}: row {name}: a label")
            if not isinstance(agree, dict) or any(f not in agree for f in FIGURES[:2]):
                raise CacheInvalid(f"{where}: row {name}: checks {label[:40]} lacks its figures")
            out["checks"][label] = {f: _number(agree[f], f"{where}: row {name}: {f}",
                                               finite=False) for f in FIGURES if f in agree}
    return out


def _entry(key, entry):
    where = f"entry {key[:60]}"
    if not isinstance(entry, dict):
        raise CacheInvalid(f"{where} is not an object")
    choice = entry.get("choice")
    if choice not in ALL_BACKENDS:
        raise CacheInvalid(f"{where}: choice is not a backend name")
    table = entry.get("table", {})
    if not isinstance(table, dict) or len(table) > len(ALL_BACKENDS):
        raise CacheInvalid(f"{where}: table is not an object of backend rows")
    rows = {}
    for name, row in table.items():
        if name not in ALL_BACKENDS:
            raise CacheInvalid(f"{where}: table row {str(name)[:40]} is not a backend name")
        rows[name] = _row(name, row, where)
    out = {"choice": choice, "table": rows}
    if "time" in entry:
        out["time"] = _number(entry["time"], f"{where}: time")
    return out


def parse_cache(data: bytes) -> dict:
    """{key: entry} of a cache file's bytes, checked against the schema; entries whose backend
    this install cannot run are left out. CacheInvalid (a ValueError) for anything else."""
    try:
        doc = bounded_json.loads(data, max_depth=MAX_CACHE_DEPTH, max_size=MAX_CACHE_BYTES)
    except ValueError as err:          # also a number of 4300+ digits
        raise CacheInvalid(f"not JSON ({str(err)[:80]})") from None
    if not isinstance(doc, dict):
        raise CacheInvalid("not a JSON object")
    if len(doc) > MAX_CACHE_ENTRIES:
        raise CacheInvalid(f"more than {MAX_CACHE_ENTRIES} entries")
    out, here = {}, {}
    for key, entry in doc.items():
        _text(key, "a key", MAX_KEY_CHARS)
        checked = _entry(key, entry)
        choice = checked["choice"]
        if choice not in here:             # only the runtimes the entries choose are loaded
            here[choice] = backend_available(choice)
        if here[choice]:
            out[key] = checked
    return out


def read_cache(path=None) -> dict:
    """{key: entry} of the cache (a copy); the file is read the first time a process asks for
    `path`, anything wrong with it counted as no cache, with the process's one warning."""
    path = os.fspath(path or cache_path())
    if path not in _state["docs"]:
        doc = {}
        try:
            doc = parse_cache(read_bounded(path, MAX_CACHE_BYTES))
        except FileNotFoundError:
            pass
        except OSError as err:
            _warn(f"backend cache {path} ignored: {reason(err)}")
        except ValueError as err:
            _warn(f"backend cache {path} ignored: {err}")
        _state["docs"][path] = doc
    return dict(_state["docs"][path])


def write_cache(key: str, entry: dict, path=None) -> None:
    """Adds `entry` under `key` to the entries read (read_cache) and writes them atomically,
    the oldest dropped beyond MAX_CACHE_ENTRIES; a failure is the process's one warning."""
    path = os.fspath(path or cache_path())
    doc = read_cache(path)
    doc[key] = entry
    if len(doc) > MAX_CACHE_ENTRIES:
        for old in sorted(doc, key=lambda k: doc[k].get("time", 0))[:len(doc) - MAX_CACHE_ENTRIES]:
            del doc[old]
    _state["docs"][path] = doc
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with diskfull.no_wait():              # a cache is worth no wait for disk space
            atomic_write_text(path, bounded_json.dumps(doc, indent=1, sort_keys=True) + "\n")
    except (OSError, ValueError) as err:          # ValueError: a table json cannot write
        _warn(f"backend cache {path} not written: {reason(err) if isinstance(err, OSError) else err}")
