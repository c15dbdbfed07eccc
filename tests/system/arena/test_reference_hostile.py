"""The reference players' folder as hostile input, through every command that names `ref:NAME`:
`fastgo arena`, the evaluator's anchors, `fastgo compare --opponents` and the dashboard's play.
Each hostile folder (an index huge, deep, with a name or key twice, non-finite numbers, of the
wrong shape, not a regular file; a player's file that escapes the folder, is missing, a FIFO, a
folder, truncated, of another board size or not as its sha256 says) is answered with one line
naming the file and what is wrong: exit status 2 at the start (a config that names it refused
the same way), or the anchor skipped with its reason in a running evaluator; no traceback, and
nothing opened outside the folder."""
import asyncio
import builtins
import hashlib
import json
import logging
import os
import shutil
from types import SimpleNamespace

import pytest

from fastgo import reference_players as refs
from fastgo_cli.main import main

# -- the hostile folders --------------------------------------------------------------------------
# Each case changes a copy of a folder of two tiny players, ref:low (3 visits) and ref:high (6),
# 9x9; `outside` is a folder beside it whose files are valid (a link to them is what is wrong).


def edit_index(folder, change):
    index = json.loads((folder / refs.INDEX_NAME).read_text())
    text = change(index)
    (folder / refs.INDEX_NAME).write_text(text if isinstance(text, str) else json.dumps(index))


def low_entry(**changes):
    def change(index):
        index["references"][0].update(changes)
    return change


def replace_low(folder, make):
    (folder / "low.ckpt").unlink()
    make(folder / "low.ckpt")


def truncated(folder, outside):
    data = (folder / "low.ckpt").read_bytes()
    (folder / "low.ckpt").write_bytes(data[:len(data) // 2])


def thirteen(folder, outside):
    shutil.copy(outside / "thirteen.ckpt", folder / "low.ckpt")
    digest = hashlib.sha256((folder / "low.ckpt").read_bytes()).hexdigest()
    edit_index(folder, low_entry(sha256=digest))


INDEX_CASES = {        # the index itself: no player of the folder can be named
    "huge": (lambda f, o: (f / refs.INDEX_NAME).write_text(
        (f / refs.INDEX_NAME).read_text() + " " * refs.MAX_INDEX_BYTES),
        "index.json: ", "bytes, over the limit of 1048576"),
    "deep": (lambda f, o: (f / refs.INDEX_NAME).write_text("[" * 100_000 + "]" * 100_000),
             "index.json: not a JSON index: nested too deeply", ""),
    "name-twice": (lambda f, o: edit_index(f, low_entry(name="high")),
                   "index.json: reference 2: 'high' is named twice", ""),
    "key-twice": (lambda f, o: edit_index(f, lambda index: json.dumps(index).replace(
        '"visits": 3', '"visits": 3, "visits": 30')),
        "index.json: not a JSON index: the key 'visits' is given twice in one object", ""),
    "nan": (lambda f, o: edit_index(f, lambda index: json.dumps(index).replace(
        '"visits": 3', '"visits": NaN')), "index.json: not a JSON index: NaN is no JSON number", ""),
    "infinity": (lambda f, o: edit_index(f, lambda index: json.dumps(index).replace(
        '"format": 1', '"format": Infinity')),
        "index.json: not a JSON index: Infinity is no JSON number", ""),
    "wrong-shape": (lambda f, o: (f / refs.INDEX_NAME).write_text('{"format": 1, "references": {}}'),
                    'index.json: expected {"format": 1, "references": [...]}', ""),
    "another-format": (lambda f, o: edit_index(f, lambda index: json.dumps(dict(index, format=2))),
                       'index.json: expected {"format": 1', ""),
    "dot-dot": (lambda f, o: edit_index(f, low_entry(file="../outside/low.ckpt")),
                "index.json: reference 1: file must be a file name matching", ""),
    "absolute": (lambda f, o: edit_index(f, low_entry(file=str(o / "low.ckpt"))),
                 "index.json: reference 1: file must be a file name matching", ""),
    "index-fifo": (lambda f, o: replace_index(f, os.mkfifo),
                   "index.json: not a regular file (a FIFO)", ""),
    "index-folder": (lambda f, o: replace_index(f, os.mkdir),
                     "index.json: not a regular file (a directory)", ""),
    "index-link": (lambda f, o: replace_index(f, lambda p: os.symlink(o / refs.INDEX_NAME, p)),
                   "index.json: a symbolic link, not followed", ""),
}
FILE_CASES = {         # ref:low's file: ref:high still plays
    "link-out": (lambda f, o: replace_low(f, lambda p: os.symlink(o / "low.ckpt", p)),
                 "low.ckpt: a symbolic link, not followed", ""),
    "missing": (lambda f, o: (f / "low.ckpt").unlink(), "low.ckpt: No such file or directory", ""),
    "fifo": (lambda f, o: replace_low(f, os.mkfifo), "low.ckpt: not a regular file (a FIFO)", ""),
    "folder": (lambda f, o: replace_low(f, os.mkdir),
               "low.ckpt: not a regular file (a directory)", ""),
    "truncated": (truncated, "low.ckpt has sha256 ", "(a damaged or replaced file)"),
    "sha256": (lambda f, o: edit_index(f, low_entry(sha256="0" * 64)),
               "low.ckpt has sha256 ", "the index says 0000000000000000... (a damaged or "
                                       "replaced file)"),
}
SIZE_CASE = (thirteen, "low.ckpt holds a network of 13x13, the index says 9x9", "")
CASES = {**INDEX_CASES, **FILE_CASES, "thirteen": SIZE_CASE}


def replace_index(folder, make):
    (folder / refs.INDEX_NAME).unlink()
    make(folder / refs.INDEX_NAME)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, reference_folder):
    """(a valid folder of ref:low and ref:high, the folder `outside` beside it, and there
    thirteen.ckpt: a 13x13 network recording its komi)."""
    from network.checkpoint import save_checkpoint
    from network.loading import training_record
    from network.model import build_model
    from rundata.config import ModelConfig

    root = tmp_path_factory.mktemp("references")
    reference_folder(root / "refs", [("low", 3), ("high", 6)])
    shutil.copytree(root / "refs", root / "outside")
    save_checkpoint(str(root / "outside" / "thirteen.ckpt"),
                    build_model(ModelConfig(board_size=13, blocks=1, channels=8, score_head=True),
                                seed=9), step=1, extra=training_record(7.5))
    return root


@pytest.fixture(params=sorted(CASES))
def hostile(request, pristine, tmp_path, monkeypatch):
    """SimpleNamespace(case, folder, outside, words: the start and end of the one line, index:
    True when the index itself is what is wrong), FASTGO_REFERENCES set to the folder."""
    folder, outside = tmp_path / "refs", tmp_path / "outside"
    shutil.copytree(pristine / "refs", folder)
    shutil.copytree(pristine / "outside", outside)
    make, start, end = CASES[request.param]
    make(folder, outside)
    monkeypatch.setenv(refs.REFERENCES_ENV, str(folder))
    path = folder / (refs.INDEX_NAME if request.param in INDEX_CASES else "low.ckpt")
    return SimpleNamespace(case=request.param, folder=folder, outside=outside,
                           index=request.param in INDEX_CASES, start=start, end=end,
                           path=str(path))


def says(line, hostile):
    """`line` names the hostile file and what is wrong, on one line."""
    assert "\n" not in line and "Traceback" not in line, line
    assert hostile.path in line and hostile.start in line and line.endswith(hostile.end), line


@pytest.fixture
def opened_outside(monkeypatch):
    """The paths os.open or open were asked for that lead (links followed) into an `outside`
    folder: a link in the folder that was opened shows here, though it was named inside."""
    seen, real_os_open, real_open = [], os.open, builtins.open

    def note(path):
        text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
        if isinstance(text, str) and text and \
                "outside" in os.path.realpath(text).split(os.sep):
            seen.append(text)

    def spy_os_open(path, *args, **kwargs):
        note(path)
        return real_os_open(path, *args, **kwargs)

    def spy_open(file, *args, **kwargs):
        note(file)
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    return seen


# -- fastgo arena ---------------------------------------------------------------------------------

def test_the_arena_refuses_it_in_one_line_with_exit_status_2(hostile, capsys, opened_outside):
    code = main(["arena", "ref:low", "random", "--games", "2", "--no-table"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("fastgo arena: A: ") and captured.err.count("\n") == 1
    says(captured.err.rstrip("\n"), hostile)
    assert opened_outside == []


# -- the evaluator's anchors ----------------------------------------------------------------------

def evaluator(tmp_path, anchors):
    from evaluation.evaluator import Evaluator
    from rundata.config import loads_config
    from rundata.rundir import open_run_dir

    text = "[evaluator]\nanchors = [" + ", ".join(f'"{a}"' for a in anchors) + "]\n"
    return Evaluator(loads_config(text), open_run_dir(tmp_path / "run"), logging.getLogger("test"))


def test_the_evaluator_refuses_a_config_or_skips_the_anchor_with_its_reason(
        hostile, tmp_path, caplog, opened_outside):
    from rundata.config import ConfigError

    if hostile.index:            # the config names a player no index can say: refused at the start
        with pytest.raises(ConfigError) as info:
            evaluator(tmp_path, ["random", "ref:low"])
        assert ": evaluator.anchors: player spec 'ref:low': " in str(info.value)   # <string>: ...
        says(str(info.value), hostile)
        assert opened_outside == []
        return
    with caplog.at_level(logging.WARNING):
        rating = evaluator(tmp_path, ["random", "ref:low", "ref:high"])
    if hostile.case == "thirteen":     # its network is loaded when first played: then skipped
        assert list(rating.anchors) == ["random", "ref:low", "ref:high"]
        job = SimpleNamespace(seed=1, anchors={})
        assert rating.opponents.anchor_side(job, "ref:low") is None and job.anchors == {}
        why = rating.opponents.unusable["ref:low"]
        assert why.startswith("unusable: reference player ref:low: ")
        says(why, hostile)
        assert "anchor ref:low: unusable: reference player ref:low: " in caplog.text
        return
    assert list(rating.anchors) == ["random", "ref:high"]           # skipped from the start
    (group,) = rating.opponents.skipped_figures()
    assert group["anchors"] == ["ref:low"] and group["what"] == "reference player"
    assert group["why"].startswith("reference player ref:low: ")
    says(group["why"], hostile)
    assert f"anchor ref:low skipped: {group['why']}" in caplog.text
    assert opened_outside == []


# -- fastgo compare --opponents -------------------------------------------------------------------

def test_compare_refuses_the_opponent_in_one_line_before_any_run(hostile, tmp_path, capsys,
                                                                 monkeypatch, opened_outside):
    import comparison.compare

    def no_runs(*args, **kwargs):
        raise AssertionError("the comparison started")
    monkeypatch.setattr(comparison.compare, "compare", no_runs)
    code = main(["compare", "quickstart", "quickstart", "--duration", "5m", "--opponents",
                 "random,ref:low", "--out", str(tmp_path / "out"), "--set",
                 'evaluator.anchors=["random"]'])
    captured = capsys.readouterr()
    assert code == 2 and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("fastgo compare: opponent 'ref:low': player spec 'ref:low': "
                                   if hostile.index else
                                   "fastgo compare: opponent ref:low: reference player ref:low")
    says(captured.err.rstrip("\n"), hostile)
    assert not (tmp_path / "out").exists() and opened_outside == []


# -- the dashboard's play -------------------------------------------------------------------------

def test_the_dashboard_answers_a_game_against_it_with_one_line(hostile, tmp_path, opened_outside):
    from aiohttp.test_utils import TestClient, TestServer

    from dashboard.run_view import references
    from dashboard.server import Dashboard
    from rundata.rundir import open_run_dir

    dashboard = Dashboard(open_run_dir(tmp_path / "run").root)

    async def body():
        async with TestClient(TestServer(dashboard.app())) as client:
            response = await client.post("/api/play", json={"checkpoint": "ref:low"})
            return response.status, await response.json()
    status, answer = asyncio.run(body())
    assert status == (404 if hostile.index else 409) and set(answer) == {"error"}
    says(answer["error"], hostile)
    assert dashboard.sessions == {} and opened_outside == []
    # the page offers the players an index names: none of an unreadable index
    assert [r["name"] for r in references()] == ([] if hostile.index else ["ref:low", "ref:high"])
