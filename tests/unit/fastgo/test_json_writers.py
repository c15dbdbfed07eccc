"""Nothing non-finite leaves the project: every JSON the project writes goes through
fastgo.bounded_json.dumps (NaN and infinities as null), read from the source (ast), with the few
json.dumps calls that write no number from outside named with why; and each writer of a run's
files or a --json file, given NaN and infinities, writes JSON a strict reader parses."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# (module path, what it writes): json.dumps calls that are not the project's JSON output
ALLOWED = {
    "fastgo/bounded_json.py": "the writer itself",
    "rundata/ratings_table.py": "ratings rows, with allow_nan=False",
    "dashboard/sessions.py": "a checked query to the analysis engine's stdin",
    "dashboard/run_view.py": "the digest of a snapshot already finite (never written)",
    "play/analysis/query.py": "a refused value echoed inside an error's text",
    "play/analysis/rules.py": "KataGo's rules vocabulary (strings and booleans)",
    "supervision/role_process.py": "a TOML value's text",
}


def json_writes(path):
    """Line numbers of json.dump/json.dumps calls in a module."""
    tree = ast.parse(path.read_text(), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("dump", "dumps") and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "json"]


def test_every_json_the_project_writes_goes_through_bounded_json_dumps(project_packages):
    found = {}
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = json_writes(path)
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    stray = {name: lines for name, lines in found.items() if name not in ALLOWED}
    assert stray == {}, "write JSON with fastgo.bounded_json.dumps: " + repr(stray)


def strict(text):
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written"))


NOT_FINITE = {"elo": float("nan"), "low": float("-inf"), "high": float("inf"), "n": 3}


def test_the_evaluators_ratings_json_is_finite(tmp_path):
    from evaluation.evaluator import _write_json
    from rundata.statefiles import read_ratings

    path = tmp_path / "ratings.json"
    _write_json(path, {"latest": {"player": "ckpt-1", "elo": float("nan"), "elo_low": -1e999,
                                  "elo_high": 1e999, "results": []},
                       "ratings": {"ckpt-1": [float("nan"), float("-inf"), float("inf")]}})
    data = strict(path.read_text())
    assert data["ratings"]["ckpt-1"] == [None, None, None]
    latest = read_ratings(path)["latest"]                       # and read back as not rated
    assert latest["player"] == "ckpt-1" and latest["elo"] != latest["elo"]


def test_the_cluster_status_file_is_finite(tmp_path):
    from roles.registry import SUPERVISOR
    from rundata.rundir import open_run_dir, status_path
    from supervision.status import write_cluster_status

    run_dir = open_run_dir(tmp_path / "run")
    write_cluster_status(run_dir, dict(NOT_FINITE, line="x"))
    assert strict(Path(status_path(run_dir, SUPERVISOR)).read_text()) == \
        {"elo": None, "low": None, "high": None, "n": 3, "line": "x"}


def test_the_backend_cache_is_finite(tmp_path):
    from network.backend_cache import write_cache

    path = tmp_path / "cache.json"
    write_cache("k", dict(NOT_FINITE), path=path)
    assert strict(path.read_text())["k"] == {"elo": None, "low": None, "high": None, "n": 3}
