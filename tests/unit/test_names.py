"""One definition per public name: a function or class a module defines at its top level is defined
nowhere else in the project (a reader who greps a name finds one thing), and no module imports a
project name under another (`import ... as`), which is where walks of the code lose the trail.
The exceptions are the protocols a family of modules implements by name: a command's or a
bench's `run`, `add_arguments`, `parents`; a program's `main`."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fastgo", "rundata", "network", "wire", "inference_server", "recorder", "selfplay_workers",
            "play", "trainer", "evaluation", "roles", "supervision", "dashboard", "comparison",
            "fastgo_cli")
PROTOCOL = {"run", "add_arguments", "parents", "main"}


def modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def public_definitions(tree) -> list:
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not node.name.startswith("_") and node.name not in PROTOCOL]


def aliases(tree) -> list:
    """(line, 'module.name as alias') of every import of a project name under another name."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in PACKAGES:
            out += [(node.lineno, f"{node.module}.{a.name} as {a.asname}") for a in node.names
                    if a.asname and a.asname != a.name]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, f"{a.name} as {a.asname}") for a in node.names
                    if a.asname and a.name.split(".")[0] in PACKAGES]
    return out


def test_each_public_function_and_class_is_defined_once():
    where = defaultdict(list)
    for name, tree in modules():
        for definition in public_definitions(tree):
            where[definition].append(name)
    twice = {d: files for d, files in where.items() if len(files) > 1}
    assert twice == {}, "defined more than once: " + "; ".join(
        f"{d} in {', '.join(files)}" for d, files in sorted(twice.items()))


def test_no_project_name_is_imported_under_another():
    found = [f"{name}:{line}: {text}" for name, tree in modules() for line, text in aliases(tree)]
    assert found == [], "\n".join(found)


def test_the_checks_find_a_second_definition_and_an_alias():
    tree = ast.parse("from play.specs import make_side as side\nimport fastgo.player_spec as g\n"
                     "import numpy as np\nfrom .x import y as z\n"
                     "def run(args): pass\ndef make_side(): pass\nclass _Hidden: pass\n")
    assert aliases(tree) == [(1, "play.specs.make_side as side"), (2, "fastgo.player_spec as g")]
    assert public_definitions(tree) == ["make_side"]
