"""The reference players that ship with the project: small networks, each played at its own
fixed visits, named `ref:NAME` in the player-spec grammar (fastgo.player_spec). A player at
fixed visits is the same player on every machine, so their games against GNU Go and each other,
played once (rundata.calibration_table: calibration.jsonl beside the index), put a run's curve
on CGOS's scale where neither GNU Go nor KataGo is installed.

The folder (REFERENCES_DIR, installed as package data; the environment variable REFERENCES_ENV
names another folder instead) holds NAME.ckpt files and one index, INDEX_NAME:

    {"format": 1,
     "references": [
       {"name": "q60", "file": "q60.ckpt", "visits": 64, "board_size": 9,
        "sha256": "<64 hex digits of the file>",
        "provenance": "one line: the run, its config and the checkpoint's step"}]}

in rising strength. A name is immutable once published: a rating table row names `ref:NAME`,
so another network or other visits is another name; one file may serve several names at other
visits (the same network searching more is a stronger player). Stdlib only (the kernel's layer).

The folder may be anyone's (REFERENCES_ENV), so its contents are untrusted input: the index is
read with a bound, as a regular file, as strict JSON (no NaN or Infinity, no key twice, every
field checked), and a player's file only as a regular file directly in the folder (no path in
the index, a symbolic link refused), so nothing outside the folder is read; every refusal is
one line naming the file and what is wrong.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass

from fastgo.constants import MAX_BOARD_SIZE, MIN_BOARD_SIZE
from fastgo.files import NotRegularFile, escaped, read_bounded, read_regular, reason

REFERENCES_ENV = "FASTGO_REFERENCES"      # a folder of reference players instead of the shipped
REFERENCES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "references")
INDEX_NAME = "index.json"
INDEX_FORMAT = 1
MAX_INDEX_BYTES = 1 << 20
MAX_REFERENCE_BYTES = 1 << 28             # a player's file: small networks (the shipped ~1 MB)
MAX_REFERENCES = 64
MAX_VISITS = 100_000
NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")
FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.ckpt")
DIGEST = re.compile(r"[0-9a-f]{64}")
MAX_PROVENANCE = 300                      # characters of the provenance line
FIELDS = ("name", "file", "visits", "board_size", "sha256", "provenance")
TOP_FIELDS = ("format", "references")
SHOWN = 120                               # characters of a value or a parser's error shown


class ReferenceIndexError(ValueError):
    """A reference folder whose index cannot be read or breaks the format: one line naming
    the file and what is wrong."""


@dataclass(frozen=True)
class Reference:
    """One shipped player: `name` (the NAME of ref:NAME), `path` (its checkpoint file),
    `visits` (root visits a move, fixed), `board_size`, `sha256` (hex digest of the file's
    bytes), `provenance` (one line)."""
    name: str
    path: str
    visits: int
    board_size: int
    sha256: str
    provenance: str

    @property
    def spec(self) -> str:
        return f"ref:{self.name}"


def references_dir(env=None) -> str:
    """The folder of reference players: $FASTGO_REFERENCES when set (and not empty), else the
    shipped one."""
    env = os.environ if env is None else env
    return env.get(REFERENCES_ENV) or REFERENCES_DIR


_CACHE: dict = {}    # index path -> ((inode, mtime_ns, size), {name: Reference})


def _key(info):
    return info.st_ino, info.st_mtime_ns, info.st_size


def read_index(folder=None) -> dict:
    """{name: Reference} of the index in `folder` (default: references_dir()), in the index's
    order; {} when the folder or its index is absent. ReferenceIndexError of one line for any
    other: an index that is not a regular file (a symbolic link, FIFO or folder), over
    MAX_INDEX_BYTES, not strict JSON (NaN, Infinity, a key twice, nested deeper than the
    parser goes), another format, a field missing, unknown or out of range, a name or file
    named twice. Read again only when the file changed."""
    folder = os.fspath(folder) if folder is not None else references_dir()
    path = os.path.join(folder, INDEX_NAME)
    shown = escaped(path)
    cached = _CACHE.get(path)
    try:
        info, raw = read_regular(path, MAX_INDEX_BYTES, follow=False,
                                 skip=lambda st: cached is not None and cached[0] == _key(st))
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise ReferenceIndexError(f"{shown}: {_file_reason(err)}") from None
    if raw is None and cached is not None:        # unchanged since the last read
        return cached[1]
    value = parse_index(raw or b"", folder)
    _CACHE[path] = (_key(info), value)
    return value


def parse_index(raw: bytes, folder) -> dict:
    """{name: Reference} of the bytes `raw` of `folder`'s index (at most MAX_INDEX_BYTES, as
    read_index reads them): strict JSON (_decode) in the format (_parse), or
    ReferenceIndexError of one line naming the index; no other exception for any bytes."""
    folder = os.fspath(folder)
    shown = escaped(os.path.join(folder, INDEX_NAME))
    return _parse(shown, folder, _decode(shown, raw))


def _file_reason(err: OSError) -> str:
    """Why a file of the folder cannot be read, in a few words (a link: not followed)."""
    if isinstance(err, NotRegularFile) and err.what == "a symbolic link":
        return "a symbolic link, not followed (the folder's files are read only from the folder)"
    return escaped(reason(err), SHOWN, one_line=True)


def _refuse_constant(word):
    raise ValueError(f"{word} is no JSON number")


def _finite(text):
    """A JSON number with a fraction or exponent, finite (1e999 would be infinity)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{escaped(text, 40)} is out of range")
    return value


def _object(pairs):
    """A JSON object's dict; ValueError for a key given twice (json keeps the last silently)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {escaped(key, 40, quoted=True)} is given twice in one object")
        out[key] = value
    return out


def _decode(shown, raw: bytes):
    """The JSON value of an index's bytes, strictly: UTF-8, no NaN or Infinity (nor a number
    that overflows to it), no key twice; ReferenceIndexError naming the file otherwise (a
    nesting deeper than the parser's recursion included)."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant,
                          parse_float=_finite, object_pairs_hook=_object)
    except RecursionError:
        raise ReferenceIndexError(f"{shown}: not a JSON index: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as err:
        raise ReferenceIndexError(f"{shown}: not a JSON index: "
                                  f"{escaped(err, SHOWN, one_line=True)}") from None


def _parse(path, folder, data):
    """{name: Reference} of the decoded index `data` of `folder` (`path`: the index as
    messages show it); ReferenceIndexError for anything but the format."""
    fmt = data.get("format") if isinstance(data, dict) else None
    if type(fmt) is not int or fmt != INDEX_FORMAT or not isinstance(data.get("references"), list):
        raise ReferenceIndexError(f"{path}: expected {{\"format\": {INDEX_FORMAT}, "
                                  f"\"references\": [...]}}")
    unknown = sorted(set(data) - set(TOP_FIELDS))
    if unknown:
        raise ReferenceIndexError(f"{path}: unknown field {escaped(unknown[0], 40, quoted=True)} "
                                  f"(an index has only {', '.join(TOP_FIELDS)})")
    entries = data["references"]
    if len(entries) > MAX_REFERENCES:
        raise ReferenceIndexError(f"{path}: {len(entries)} references, at most {MAX_REFERENCES}")
    out, files = {}, {}
    for k, entry in enumerate(entries):
        where = f"{path}: reference {k + 1}"
        if not isinstance(entry, dict) or set(entry) != set(FIELDS):
            raise ReferenceIndexError(f"{where}: expected exactly the fields {', '.join(FIELDS)}")
        name, file = entry["name"], entry["file"]
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ReferenceIndexError(f"{where}: name must match {NAME.pattern}")
        if not isinstance(file, str) or not FILE.fullmatch(file):
            raise ReferenceIndexError(f"{where}: file must be a file name matching {FILE.pattern}")
        for field, low, high in (("visits", 1, MAX_VISITS),
                                 ("board_size", MIN_BOARD_SIZE, MAX_BOARD_SIZE)):
            value = entry[field]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ReferenceIndexError(f"{where}: {field} must be an integer in {low}..{high}")
        if not isinstance(entry["sha256"], str) or not DIGEST.fullmatch(entry["sha256"]):
            raise ReferenceIndexError(f"{where}: sha256 must be 64 lowercase hex digits")
        provenance = entry["provenance"]
        if not isinstance(provenance, str) or not provenance.strip() \
                or len(provenance) > MAX_PROVENANCE or not provenance.isprintable():
            raise ReferenceIndexError(f"{where}: provenance must be one line of at most "
                                      f"{MAX_PROVENANCE} characters")
        if name in out:
            raise ReferenceIndexError(f"{where}: {name!r} is named twice")
        # one network at several visits is several players (a rung each), one file: the same
        # file named again must carry the same digest and other visits
        earlier = files.get(file)
        if earlier is not None and (earlier[0] != entry["sha256"] or entry["visits"] in earlier[1]):
            raise ReferenceIndexError(f"{where}: {file!r} is named again with another sha256 or "
                                      "the same visits (another player needs other visits)")
        files.setdefault(file, (entry["sha256"], set()))[1].add(entry["visits"])
        out[name] = Reference(name, os.path.join(folder, file), entry["visits"],
                              entry["board_size"], entry["sha256"], provenance)
    return out


def reference(name, folder=None) -> Reference:
    """The Reference called `name` (case-insensitive); ValueError of one line naming the
    known ones for any other."""
    index = read_index(folder)
    found = index.get(str(name).strip().lower())
    if found is None:
        known = ", ".join(f"ref:{n}" for n in index) or "none in " + escaped(
            os.fspath(folder) if folder is not None else references_dir())
        raise ValueError(f"unknown reference player ref:{escaped(name, 40, one_line=True)} "
                         f"(known: {known})")
    return found


def check_digest(ref: Reference, data: bytes) -> None:
    """ValueError unless `data` (the bytes of ref.path) has the index's sha256."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != ref.sha256:
        raise ValueError(f"reference player {ref.spec}: {escaped(ref.path)} has sha256 "
                         f"{digest[:16]}..., the index says {ref.sha256[:16]}... (a damaged or "
                         "replaced file)")


def read_reference(ref: Reference, max_bytes: int = MAX_REFERENCE_BYTES) -> bytes:
    """The bytes of `ref`'s file, checked against the index's sha256 (check_digest). Read only
    as a regular file of at most `max_bytes` directly in the index's folder: a symbolic link
    is refused (nothing is read from where it points), a FIFO or folder without blocking.
    ValueError of one line naming the file and what is wrong (missing, not a regular file,
    too large, damaged or replaced)."""
    try:
        data = read_bounded(ref.path, max_bytes, follow=False)
    except OSError as err:
        raise ValueError(f"reference player {ref.spec}: {escaped(ref.path)}: "
                         f"{_file_reason(err)}") from None
    check_digest(ref, data)
    return data


def index_entry(name, path, *, visits, board_size, provenance) -> dict:
    """The index entry of the checkpoint file at `path` as reference `name` (its sha256
    computed): what adding a reference player writes into INDEX_NAME."""
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    return {"name": name, "file": os.path.basename(path), "visits": int(visits),
            "board_size": int(board_size), "sha256": digest, "provenance": provenance}
