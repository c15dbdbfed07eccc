"""The reference players' index (fastgo.reference_players) and their spec, ref:NAME
(fastgo.player_spec): what an index entry names, every malformed index refused in one line, an
unknown name answered with the known ones, the shipped folder installed as package data."""
import ast
import fnmatch
import hashlib
import json
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
