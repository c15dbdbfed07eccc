"""RunDir (rundata/rundir.py) is the one place that spells a run directory's files and folders:
every entry has its property or method, the checkpoints are listed by it, and no other module
of the packages spells one of those names as a string literal; each state file kind has one
reader (ratings.json: rundata.statefiles.read_ratings)."""
import ast
import os
from pathlib import Path

from rundata.rundir import RunDir, open_run_dir

ROOT = Path(__file__).resolve().parents[3]
NAMES = {"evaluated", "evaluations.jsonl", "ratings.json", "ratings.jsonl", "pool.json", "tb",
         "sgf_shards", "curve.png", "loss.png", "metrics.csv", "latest.ckpt", "checkpoints",
         "quarantine", "logs"}


def test_every_entry_has_its_name(tmp_path):
    run = RunDir(str(tmp_path))
    entries = {run.evaluated: "evaluated", run.evaluations: "evaluations.jsonl",
               run.ratings: "ratings.json", run.ratings_table: "ratings.jsonl",
               run.pool: "pool.json", run.tensorboard: "tb", run.sgf_shards: "sgf_shards",
               run.curve: "curve.png", run.losses: "loss.png", run.metrics: "metrics.csv",
               run.outbox(3): "outbox-w3", run.status("train"): "logs/train.status.json",
               run.output("cluster"): "logs/cluster.out", run.log("serve"): "logs/serve.log"}
    for path, name in entries.items():
        assert path == os.path.join(str(tmp_path), name)


def test_checkpoints_are_listed_by_step(tmp_path):
    run = open_run_dir(tmp_path / "run")
    for name in ("ckpt-000000020.ckpt", "ckpt-000000003.ckpt", "latest.ckpt",
                 ".tmp-latest-1.ckpt", "ckpt-12.ckpt", "notes.txt"):
        Path(run.checkpoints, name).write_text("")
    assert run.checkpoint_list() == [(3, run.checkpoint(3)), (20, run.checkpoint(20))]
    assert RunDir(str(tmp_path / "missing")).checkpoint_list() == []


def test_no_module_but_rundir_spells_a_run_directory_name(project_packages):
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "rundir.py" and path.parent.name == "rundata":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            # a config key that happens to share a name ({"checkpoints": ...}, x["checkpoints"])
            keys = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys}
            keys |= {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in NAMES and id(node) not in keys:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
                elif isinstance(node, ast.JoinedStr) and any(
                        isinstance(v, ast.Constant) and "outbox-w" in str(v.value)
                        for v in node.values):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: outbox-w")
    assert found == []


def test_one_reader_of_ratings_json(project_packages):
    readers = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "def read_ratings" in text:
                readers.append(str(path.relative_to(ROOT)))
    assert readers == ["rundata/statefiles.py"]


def test_no_module_but_rundir_spells_a_checkpoint_player_name(project_packages):
    # 'ckpt-STEP' is built by checkpoint_player and parsed by player_step only: a string that
    # starts with it (a name, a prefix test, a pattern) or an f-string that builds one elsewhere
    # is a second spelling; docstrings and help text may mention it
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "rundir.py" and path.parent.name == "rundata":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                               ast.AsyncFunctionDef))
                          and node.body and isinstance(node.body[0], ast.Expr)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and id(node) not in docstrings and node.value.startswith("ckpt-"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
                elif isinstance(node, ast.JoinedStr) and any(
                        isinstance(v, ast.Constant) and str(v.value).endswith("ckpt-")
                        for v in node.values):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: f'...ckpt-{{}}'")
    assert found == []


def test_a_checkpoint_player_name_and_its_step():
    from rundata.rundir import checkpoint_player, player_step

    assert checkpoint_player(300) == "ckpt-300" and player_step("ckpt-300") == 300
    assert player_step(checkpoint_player(0)) == 0
    for other in ("random", "gnugo:10", "ckpt-", "ckpt-x", "ckpt-000000300.ckpt", None, 3):
        assert player_step(other) is None
