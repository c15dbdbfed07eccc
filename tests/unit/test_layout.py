"""The import rules of the layout as contracts, read from the source (ast for .py, the import lines
of .pyx/.pxd kernels; imports inside functions count, a script's `if __name__ == "__main__":`
block does not, as importing the module never runs it): packages import down the layers only,
fastgo, rundata, selfplay_workers and play never import torch, the Go kernel (fastgo) sits
below the run's data model (rundata) like any other floor, only supervision/ray_launcher.py
imports ray, no
import cycle between the project's modules, no test module imports another, and no module is
longer than MAX_LINES (500 for .py, 1,100 for a .pyx kernel)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Dependency order: a package imports packages of a lower rank (or itself) only; packages of the
# same rank do not import each other.
RANK = {"fastgo": 0, "rundata": 1, "network": 2, "wire": 2, "inference_server": 3,
        "recorder": 3, "selfplay_workers": 3, "play": 3, "trainer": 3, "evaluation": 4,
        "roles": 5, "supervision": 6, "dashboard": 6, "comparison": 7, "fastgo_cli": 8}
NO_TORCH = ("fastgo", "rundata", "wire", "selfplay_workers", "play")
RAY_ONLY_IN = "supervision.ray_launcher"
MAX_LINES = {".py": 500, ".pyx": 1100}   # a module longer than this holds more than one concept
KERNEL_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))", re.M)
IMPORTERS = ("import_module", "__import__")


def module_files(root, packages):
    """{dotted module name: path} of every .py, .pyx and .pxd file of the packages under root
    (a package is named by its __init__.py; a kernel's .pyx and .pxd share one name)."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if path.suffix not in (".py", ".pyx", ".pxd") or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.setdefault(".".join(parts), []).append(path)
    return out


def imports_of(path, module):
    """[(imported dotted name, line)] of one file: every import statement anywhere in it but a
    top-level `if __name__ == "__main__":` block, and importlib.import_module / __import__
    called with a string constant; relative imports are resolved against `module`."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [(m.group(1) or m.group(2), text.count("\n", 0, m.start()) + 1)
                for m in KERNEL_IMPORT.finditer(text)]
    is_package = path.name == "__init__.py"
    found = []
    tree = ast.parse(text, filename=str(path))
    tree.body = [node for node in tree.body if not is_main_guard(node)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                package = package[:len(package) - node.level + (1 if is_package else 0)]
                base = ".".join(package + ([base] if base else []))
            found.extend((base if alias.name == "*" else f"{base}.{alias.name}", node.lineno)
                         for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            if name in IMPORTERS:
                found.append((node.args[0].value, node.lineno))
    return found


def is_main_guard(node):
    """True for `if __name__ == "__main__":`."""
    return isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
        and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__" \
        and len(node.test.comparators) == 1 and isinstance(node.test.comparators[0], ast.Constant) \
        and node.test.comparators[0].value == "__main__"


def import_graph(root, packages=tuple(RANK)):
    """({module: {project module it imports: (path, line) of the first such import}},
    {module: [(imported name, path, line)]}). An import counts as one of the longest project
    module its name starts with (`from a.b import c`: a.b.c where that is a module, else a.b);
    the parent packages Python runs on the way are not counted."""
    files = module_files(root, packages)
    graph, raw = {}, {}
    for module, paths in files.items():
        edges, names = {}, []
        for path in paths:
            for name, line in imports_of(path, module):
                names.append((name, path, line))
                target = name
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges.setdefault(target, (path, line))
        graph[module], raw[module] = edges, names
    return graph, raw


def where(path, line):
    return f"{Path(path).relative_to(ROOT) if Path(path).is_relative_to(ROOT) else path}:{line}"


def layer_violations(graph):
    out = []
    for module, edges in graph.items():
        mine = module.split(".")[0]
        for target, (path, line) in edges.items():
            theirs = target.split(".")[0]
            if theirs != mine and RANK[theirs] >= RANK[mine]:
                out.append(f"{where(path, line)}: {module} imports {target}")
    return sorted(out)


def forbidden_imports(raw, banned, allowed_modules=(), only_packages=None):
    """Imports of `banned` (a top-level name) by modules outside allowed_modules (and inside
    only_packages, when given)."""
    out = []
    for module, names in raw.items():
        if module in allowed_modules or (only_packages and module.split(".")[0] not in only_packages):
            continue
        for name, path, line in names:
            if name.split(".")[0] == banned:
                out.append(f"{where(path, line)}: {module} imports {name}")
    return sorted(set(out))


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(start):
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


@pytest.fixture(scope="module")
def project():
    return import_graph(ROOT)


def test_layers_point_one_way(project, project_packages):
    graph, _ = project
    assert set(m.split(".")[0] for m in graph) == set(RANK) == set(project_packages)
    assert layer_violations(graph) == []


def test_fastgo_and_selfplay_workers_never_import_torch(project):
    _, raw = project
    assert forbidden_imports(raw, "torch", only_packages=NO_TORCH) == []


def test_only_the_ray_launcher_imports_ray(project):
    _, raw = project
    assert forbidden_imports(raw, "ray", allowed_modules=(RAY_ONLY_IN,)) == []


def test_no_import_cycle_between_modules(project):
    graph, _ = project
    assert cycles(graph) == []


def test_no_module_is_longer_than_its_bound():
    long = [f"{path.relative_to(ROOT)}: {n} lines"
            for paths in module_files(ROOT, RANK).values() for path in paths
            if path.suffix in MAX_LINES
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES[path.suffix]]
    assert long == []


def test_no_test_module_imports_another():
    tests = ROOT / "tests"
    local = {p.stem for p in tests.rglob("*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for name, line in imports_of(path, path.stem):
            if name.split(".")[0] in local:
                found.append(f"{where(path, line)}: imports {name}")
    assert found == []


def test_the_checks_find_what_they_look_for(tmp_path):
    """A small tree that breaks every rule once: each check names the offending line."""
    files = {
        "fastgo/__init__.py": "",
        "fastgo/board.pyx": "from fastgo.rng cimport Rng\n",
        "fastgo/rng.pxd": "",
        "fastgo/game.py": ("import numpy\n\ndef f():\n    from trainer.training_core import x\n"
                           "    import torch\n"),
        "inference_server/__init__.py": "",
        "inference_server/model.py": "from . import client\nimport ray\n",
        "inference_server/client.py": "from .model import build\n",
        "selfplay_workers/__init__.py": "",
        "selfplay_workers/worker.py": "import importlib\nimportlib.import_module('trainer.training_core')\n",
        "trainer/__init__.py": "", "trainer/training_core.py": "from fastgo import game\n",
        "supervision/__init__.py": "", "supervision/ray_launcher.py": "import ray.util\n",
        "fastgo_cli/__init__.py": "", "fastgo_cli/main.py": "import supervision.ray_launcher\n",
        "evaluation/__init__.py": "",
        "evaluation/plots.py": "if __name__ == '__main__':\n    import fastgo_cli.main\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph, raw = import_graph(tmp_path)
    assert graph["fastgo.board"] == {"fastgo.rng": (tmp_path / "fastgo/board.pyx", 1)}
    assert [v.split(": ", 1)[1] for v in layer_violations(graph)] == [
        "fastgo.game imports trainer.training_core", "selfplay_workers.worker imports trainer.training_core"]
    assert [v.split(": ", 1)[1] for v in forbidden_imports(raw, "torch", only_packages=NO_TORCH)] \
        == ["fastgo.game imports torch"]
    assert [v.split(": ", 1)[1] for v in forbidden_imports(raw, "ray", allowed_modules=(RAY_ONLY_IN,))] \
        == ["inference_server.model imports ray"]
    assert cycles(graph) == [["fastgo.game", "trainer.training_core"],
                             ["inference_server.client", "inference_server.model"]]
