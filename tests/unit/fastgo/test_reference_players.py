"""The reference players' index (fastgo.reference_players) and their spec, ref:NAME
(fastgo.player_spec): what an index entry names, every malformed index refused in one line, an
unknown name answered with the known ones, the shipped folder installed as package data; the
folder as hostile input (an index huge, deep, not strict JSON, not a regular file; a player's
file a link out of the folder, a FIFO, a folder, missing, damaged), and the index parser under a
seeded fuzz of a valid index's mutations."""
import ast
import fnmatch
import hashlib
import json
import os
import pathlib

import pytest

from fastgo import reference_players as refs
from fastgo.player_spec import parse_spec

ROOT = pathlib.Path(__file__).resolve().parents[3]
DIGEST = "ab" * 32


def write_index(folder, entries, fmt=1):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / refs.INDEX_NAME).write_text(json.dumps({"format": fmt, "references": entries}))
    return folder


def entry(**changes):
    base = {"name": "low", "file": "low.ckpt", "visits": 8, "board_size": 9, "sha256": DIGEST,
            "provenance": "a test"}
    return dict(base, **changes)


def test_an_index_names_each_player_its_file_visits_and_digest(tmp_path):
    folder = write_index(tmp_path / "refs", [entry(), entry(name="high", file="high.ckpt",
                                                            visits=64)])
    index = refs.read_index(folder)
    assert list(index) == ["low", "high"]                       # the index's order
    high = index["high"]
    assert (high.path, high.visits, high.board_size, high.spec) == (
        str(folder / "high.ckpt"), 64, 9, "ref:high")
    assert refs.read_index(tmp_path / "nothing-here") == {}      # no index: no players


def test_one_network_at_other_visits_is_another_player(tmp_path):
    folder = write_index(tmp_path / "refs", [entry(), entry(name="low-deep", visits=256)])
    index = refs.read_index(folder)
    assert [(r.spec, r.path, r.visits) for r in index.values()] == [
        ("ref:low", str(folder / "low.ckpt"), 8), ("ref:low-deep", str(folder / "low.ckpt"), 256)]


@pytest.mark.parametrize("bad", [
    {"format": 2, "references": []},
    {"format": 1},
    {"format": 1, "references": [entry(name="Low")]},              # names are lowercase
    {"format": 1, "references": [entry(file="../low.ckpt")]},       # a file in the folder
    {"format": 1, "references": [entry(visits=0)]},
    {"format": 1, "references": [entry(visits=True)]},
    {"format": 1, "references": [entry(board_size=1)]},
    {"format": 1, "references": [entry(sha256="AB" * 32)]},
    {"format": 1, "references": [entry(provenance="two\nlines")]},
    {"format": 1, "references": [entry(extra=1)]},
    {"format": 1, "references": [entry(), entry(file="other.ckpt")]},      # a name twice
    {"format": 1, "references": [entry(), entry(name="two")]},         # a file at the same visits
    {"format": 1, "references": [entry(), entry(name="two", visits=64, sha256="cd" * 32)]},
])
def test_a_malformed_index_is_refused_in_one_line(tmp_path, bad):
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / refs.INDEX_NAME).write_text(json.dumps(bad))
    with pytest.raises(refs.ReferenceIndexError) as info:
        refs.read_index(folder)
    assert "\n" not in str(info.value) and str(folder / refs.INDEX_NAME) in str(info.value)


def test_the_spec_names_a_reference_at_its_own_visits(tmp_path, monkeypatch):
    folder = write_index(tmp_path / "refs", [entry(), entry(name="high", file="high.ckpt",
                                                            visits=64)])
    monkeypatch.setenv(refs.REFERENCES_ENV, str(folder))
    spec = parse_spec(" REF:High ")
    assert (spec.kind, spec.name, spec.count, spec.path) == (
        "ref", "ref:high", 64, str(folder / "high.ckpt"))
    with pytest.raises(ValueError) as info:
        parse_spec("ref:middle")
    assert str(info.value) == "unknown reference player ref:middle (known: ref:low, ref:high)"
    with pytest.raises(ValueError, match="expected ref:NAME"):
        parse_spec("ref")
    (folder / refs.INDEX_NAME).write_text("{")                  # a damaged index: one line
    with pytest.raises(ValueError, match=r"player spec 'ref:low': .*not a JSON index"):
        parse_spec("ref:low")


def test_a_file_is_checked_against_its_digest(tmp_path):
    data = b"the bytes of a network"
    good = refs.Reference("low", str(tmp_path / "low.ckpt"), 8, 9,
                          hashlib.sha256(data).hexdigest(), "a test")
    refs.check_digest(good, data)
    with pytest.raises(ValueError, match=r"ref:low: .* \(a damaged or replaced file\)"):
        refs.check_digest(good, data + b"!")


def test_the_shipped_index_is_valid_and_each_file_is_as_it_says(monkeypatch):
    monkeypatch.delenv(refs.REFERENCES_ENV, raising=False)
    assert refs.references_dir() == refs.REFERENCES_DIR
    index = refs.read_index()
    assert (pathlib.Path(refs.REFERENCES_DIR) / refs.INDEX_NAME).is_file()
    for ref in index.values():
        refs.check_digest(ref, pathlib.Path(ref.path).read_bytes())
    shipped = {p.name for p in pathlib.Path(refs.REFERENCES_DIR).glob("*.ckpt")}
    assert shipped == {pathlib.Path(ref.path).name for ref in index.values()}   # none unlisted


def package_data():
    """setup.py's package_data, read from its source."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "package_data":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no package_data")


def test_setup_installs_the_reference_folder_as_package_data():
    patterns = package_data()["fastgo"]
    folder = pathlib.Path(refs.REFERENCES_DIR)
    files = [f"references/{p.name}" for p in folder.iterdir() if p.is_file()]
    assert "references/index.json" in files
    for name in files + ["references/a-future-net.ckpt"]:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


# -- the folder as hostile input ------------------------------------------------------------------

def raw_index(text, folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / refs.INDEX_NAME).write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


GOOD = json.dumps({"format": 1, "references": [entry()]})


@pytest.mark.parametrize("text, words", [
    (GOOD + " " * refs.MAX_INDEX_BYTES, "over the limit of 1048576"),              # huge
    ("[" * 100_000 + "]" * 100_000, "not a JSON index: nested too deeply"),        # deep
    (GOOD.replace('"a test"', "[" * 50_000 + "]" * 50_000), "nested too deeply"),
    (GOOD.replace('"visits": 8', '"visits": NaN'), "NaN is no JSON number"),
    (GOOD.replace('"format": 1', '"format": Infinity'), "Infinity is no JSON number"),
    (GOOD.replace('"visits": 8', '"visits": -Infinity'), "-Infinity is no JSON number"),
    (GOOD.replace('"visits": 8', '"visits": 1e999'), "1e999 is out of range"),
    (GOOD.replace('"visits": 8', '"visits": ' + "9" * 5000), "not a JSON index"),
    (GOOD.replace('"visits": 8', '"visits": 8, "visits": 9'),
     "the key 'visits' is given twice in one object"),                            # a key twice
    (GOOD.replace('{"format": 1', '{"format": 1, "format": 1'), "'format' is given twice"),
    (GOOD.replace('"format": 1', '"format": true'), 'expected {"format": 1'),
    (GOOD.replace('"format": 1', '"format": 1.0'), 'expected {"format": 1'),
    (GOOD[:-1] + ', "more": [[1]]}', "unknown field 'more'"),
    (GOOD[:-1] + ', "a\\nb": 1}', r"unknown field 'a\nb'"),                      # shown escaped
    ("[]", 'expected {"format": 1'),
    ('{"format": 1, "references": {}}', 'expected {"format": 1'),
    ('{"format": 1, "references": ["low"]}', "reference 1: expected exactly the fields"),
    (b"\xff\xfe{", "not a JSON index: 'utf-8' codec can't decode"),
    ("\ufeff" + GOOD, "not a JSON index"),
    (GOOD.replace('"low.ckpt"', '"/etc/low.ckpt"'), "reference 1: file must be a file name"),
    (GOOD.replace('"low.ckpt"', '"..ckpt"'), "reference 1: file must be a file name"),
    (GOOD.replace('"a test"', '"\\u202e evil"'), "provenance must be one line"),
])
def test_a_hostile_index_is_refused_in_one_line(tmp_path, text, words):
    folder = raw_index(text, tmp_path / "refs")
    with pytest.raises(refs.ReferenceIndexError) as info:
        refs.read_index(folder)
    message = str(info.value)
    assert message.startswith(str(folder / refs.INDEX_NAME) + ": ") and "\n" not in message
    assert words in message, message


def spy_open(monkeypatch):
    """The paths os.open is asked for from now on (a list that grows)."""
    opened, real = [], os.open

    def spy(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", spy)
    return opened


def test_an_index_that_is_no_regular_file_in_the_folder_is_refused_unread(tmp_path, monkeypatch):
    outside = write_index(tmp_path / "outside", [entry()])
    cases = {"a FIFO": os.mkfifo, "a directory": os.mkdir,
             "a symbolic link, not followed": lambda path: os.symlink(
                 outside / refs.INDEX_NAME, path)}
    opened = spy_open(monkeypatch)
    for what, make in cases.items():
        folder = tmp_path / what.replace(" ", "-")
        folder.mkdir()
        make(folder / refs.INDEX_NAME)
        with pytest.raises(refs.ReferenceIndexError) as info:     # a FIFO: no wait for a writer
            refs.read_index(folder)
        assert str(info.value).startswith(f"{folder / refs.INDEX_NAME}: ") and what in str(info.value)
    assert opened == []                                  # nothing opened, the link not followed


def test_a_players_file_is_read_only_as_a_regular_file_of_its_folder(tmp_path, monkeypatch):
    data = b"the bytes of a network"
    outside = tmp_path / "outside.ckpt"
    outside.write_bytes(data)                            # as the index says: only the link is wrong
    folder = tmp_path / "refs"
    folder.mkdir()
    ref = refs.Reference("low", str(folder / "low.ckpt"), 8, 9, hashlib.sha256(data).hexdigest(),
                         "a test")
    cases = [("a symbolic link, not followed", lambda p: os.symlink(outside, p)),
             ("No such file or directory", lambda p: None),
             ("not a regular file (a FIFO)", os.mkfifo),
             ("not a regular file (a directory)", os.mkdir)]
    path = folder / "low.ckpt"
    for words, make in cases:
        make(path)
        opened = spy_open(monkeypatch)
        with pytest.raises(ValueError) as info:
            refs.read_reference(ref)
        monkeypatch.undo()
        assert str(info.value) == f"reference player ref:low: {path}: {words}" + (
            " (the folder's files are read only from the folder)" if "link" in words else "")
        assert opened == []                              # refused before anything was opened
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif os.path.lexists(path):
            path.unlink()
    path.write_bytes(data)
    assert refs.read_reference(ref) == data
    with pytest.raises(ValueError, match=r"low.ckpt: 22 bytes, over the limit of 10$"):
        refs.read_reference(ref, max_bytes=10)
    path.write_bytes(data[:10])                                                # truncated
    with pytest.raises(ValueError, match=r"ref:low: .*low.ckpt has sha256 .*\(a damaged or replaced"):
        refs.read_reference(ref)


# -- the index parser under random mutation -------------------------------------------------------

FUZZ_SEED = 87
FUZZ_CASES = 300
# Inputs the parser once got wrong, tried first on every run: nesting that escaped it as a
# RecursionError (found by this fuzz, in a field's value too), indexes taken as valid (a key
# twice, the last one kept; format true or 1.0; an unknown top-level field), and non-finite
# numbers that JSON has no words for (now refused by the reader itself).
KNOWN_HOSTILE = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"format": 1, "references": [' + b"[" * 5000 + b"]" * 5000 + b"]}",
    b'{"format": 1, "references": [{"a": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3001 + b"]}",
    b'{"format": true, "references": []}',
    b'{"format": 1.0, "references": []}',
    b'{"format": 1, "format": 1, "references": []}',
    b'{"format": 1, "references": [], "references": []}',
    b'{"format": 1, "references": [], "extra": [[[1]]]}',
    GOOD.replace('"visits": 8', '"visits": 8, "visits": 9').encode(),
    GOOD.replace('"visits": 8', '"visits": NaN').encode(),
    GOOD.replace('"visits": 8', '"visits": 1e400').encode(),
]
HOSTILE_VALUES = [None, True, False, 0, -1, 1.5, 2 ** 63, float("nan"), float("inf"), "", "x" * 400,
                  "../low.ckpt", "/etc/passwd", "a\nb", "\u202e", "\ud800", "LOW", [], {}, [[[[[]]]]],
                  {"format": 1}, "AB" * 32, "ab" * 32]


def valid_index_bytes():
    return json.dumps({"format": 1, "references": [
        entry(), entry(name="low-deep", visits=64),
        entry(name="high", file="high.ckpt", visits=16, sha256="cd" * 32)]}).encode()


def mutate(raw: bytes, rng) -> bytes:
    """`raw` changed once: a value replaced, a key removed or added, an entry repeated (the
    JSON rewritten), or its bytes flipped, cut, repeated, opened or nested deeper."""
    kind = rng.randrange(9)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data, kind = None, 4 + rng.randrange(5)            # no longer JSON: a byte mutation
    if kind <= 3:
        holders = []
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                holders.append(node)
                stack.extend(node.values())
            elif isinstance(node, list):
                holders.append(node)
                stack.extend(node)
        holder = rng.choice(holders)
        keys = list(holder) if isinstance(holder, dict) else list(range(len(holder)))
        if kind == 0 and keys:
            holder[rng.choice(keys)] = rng.choice(HOSTILE_VALUES)
        elif kind == 1 and keys:
            del holder[rng.choice(keys)]
        elif kind == 2:
            if isinstance(holder, dict):
                holder[rng.choice(["extra", "name", "format", "visits", ""])] = rng.choice(
                    HOSTILE_VALUES)
            else:
                holder.append(rng.choice(HOSTILE_VALUES + [entry()]))
        elif isinstance(holder, list) and holder:
            holder.append(json.loads(json.dumps(rng.choice(holder))))
        return json.dumps(data).encode()
    at = rng.randrange(len(raw) + 1)
    if kind == 4:
        return raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1:]
    if kind == 5:
        return raw[:at] + raw[at + rng.randrange(1, 40):]
    if kind == 6:
        end = min(len(raw), at + rng.randrange(1, 60))
        return raw[:end] + raw[at:end] * rng.randrange(1, 4) + raw[end:]
    if kind == 7:
        return raw[:at]
    depth = rng.choice([10, 1000, 20_000])
    return raw[:at] + b"[" * depth + b"1" + b"]" * depth + raw[at:]


def assert_valid(index, folder):
    """Every Reference the parser gave keeps the format's bounds, its file in the folder."""
    assert len(index) <= refs.MAX_REFERENCES
    for name, ref in index.items():
        assert name == ref.name and refs.NAME.fullmatch(name)
        assert os.path.dirname(ref.path) == str(folder)
        assert refs.FILE.fullmatch(os.path.basename(ref.path))
        assert 1 <= ref.visits <= refs.MAX_VISITS and type(ref.visits) is int
        assert type(ref.board_size) is int and refs.DIGEST.fullmatch(ref.sha256)
        assert ref.provenance.isprintable() and len(ref.provenance) <= refs.MAX_PROVENANCE


def test_random_mutations_of_an_index_parse_or_are_refused_in_one_line(tmp_path):
    import random

    rng = random.Random(FUZZ_SEED)
    folder = tmp_path / "refs"
    shown = str(folder / refs.INDEX_NAME)
    cases = list(KNOWN_HOSTILE)
    while len(cases) < len(KNOWN_HOSTILE) + FUZZ_CASES:
        raw = valid_index_bytes()
        for _ in range(rng.randrange(1, 4)):
            raw = mutate(raw, rng)
        cases.append(raw[:refs.MAX_INDEX_BYTES])            # read_index reads no more
    parsed = refused = 0
    for k, raw in enumerate(cases):
        try:
            index = refs.parse_index(raw, folder)
        except refs.ReferenceIndexError as err:
            assert str(err).startswith(shown + ": ") and "\n" not in str(err), (k, str(err))
            refused += 1
        except Exception as err:             # the property: nothing else, whatever the bytes
            pytest.fail(f"case {k}: {type(err).__name__}: {err} for {raw[:200]!r}")
        else:
            assert_valid(index, folder)
            parsed += 1
    assert refused >= len(KNOWN_HOSTILE) and parsed > 0   # the mutations reach both outcomes
