"""Every dotted project name the docs and the docstrings give (`evaluation.pairings.predictor`,
rundata.rundir.kept_steps) names something that exists: a module, or an attribute of one (a
class, a function, a constant, a method). A name left behind by a move or a rename fails here
with the file that gives it. Config keys that read like a package's name (`trainer.lr`, a
setting of the [trainer] section) are keys, not names, and are left alone."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fastgo", "rundata", "network", "wire", "inference_server", "selfplay_workers", "play",
            "trainer", "evaluation", "roles", "supervision", "dashboard", "comparison",
            "fastgo_cli", "recorder")
NAME = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)")
FILES = ("png", "key", "json", "jsonl", "toml", "ckpt", "csv", "log", "out", "txt", "md", "py",
         "pyx", "shard", "sgf", "onnx", "xml", "bin", "html", "js")      # a file's name, not code
CODE = ("fastgo", "rundata", "network", "wire", "inference_server", "selfplay_workers", "play", "trainer",
        "evaluation", "roles", "supervision", "dashboard", "comparison", "fastgo_cli",
        "recorder", "tools")


def config_keys() -> set:
    """'section.key' of every setting of the config (rundata.config.Config)."""
    from rundata.config import Config

    keys = set()
    for section in dataclasses.fields(Config):
        value = getattr(Config(), section.name)
        if dataclasses.is_dataclass(value):
            keys.update(f"{section.name}.{f.name}" for f in dataclasses.fields(value))
    return keys


def resolves(name: str) -> bool:
    """True when `name` is a module or an attribute path below the longest importable module
    prefix of it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def docstrings(path: Path):
    """(line, text) of the module's, classes' and functions' docstrings and of its comments."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                first = node.body[0]
                yield first.lineno, doc
    for number, line in enumerate(source.splitlines(), 1):
        if "#" in line:
            yield number, line[line.index("#"):]


def texts():
    for path in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield path, number, line
    for package in CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, text in docstrings(path):
                yield path, number, text


def test_every_dotted_project_name_in_the_docs_and_docstrings_resolves():
    keys = config_keys()
    missing = []
    seen: dict = {}
    for path, number, text in texts():
        for match in NAME.finditer(text):
            name = match.group(1).rstrip(".")
            if name.rsplit(".", 1)[1] in FILES:
                continue
            if name in keys or any(name.startswith(k + ".") for k in keys):
                continue
            if name not in seen:
                seen[name] = resolves(name)
            if not seen[name]:
                missing.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert not missing, f"{len(missing)} names that do not resolve:\n" + "\n".join(missing[:80])


def test_the_scan_finds_a_name_that_does_not_resolve():
    assert resolves("rundata.rundir.kept_steps") and resolves("rundata.rundir")
    assert resolves("rundata.strength.Strength.gain")
    assert not resolves("rundata.rundir.no_such_function")
    assert not resolves("evaluation.no_such_module.thing")
    found = [m.group(1) for m in NAME.finditer("see `rundata.elo_fit.fit_window` and "
                                               "trainer.lr, not runs/fastgo.x or a.fastgo.y")]
    assert found == ["rundata.elo_fit.fit_window", "trainer.lr"]
    assert "trainer.lr" in config_keys() and "evaluator.anchors" in config_keys()
