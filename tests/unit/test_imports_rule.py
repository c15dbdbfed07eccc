"""Imports sit at the top of a module (docs/architecture.md). An import inside a function is
allowed only where a measured start-up cost says so:

- it imports a heavy library (HEAVY, what `python -X importtime -c "import NAME"` measured), or a
  project module that imports one at its top, directly or through other project modules (the
  import graph of the modules' top-level statements, read from the source);
- it is one of a command's lazy imports: `fastgo CMD --help` and a usage error load a command's
  module of fastgo_cli/ (fastgo_cli/main.py imports only the named one) and nothing its run needs;
- or it names another reason, on its line or in the comment line above it: `# lazy: <reason>`
  (an import cycle, a library only one path needs).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Libraries whose import alone costs a command or a worker that does not need them: seconds to
# import on a 2-core AMD EPYC, warm file cache (`python -X importtime`; for openvino and ray, which
# load lazily, the wall time of `python -c` reaching their Core and init). numpy (0.2 s) is not
# among them: every process that touches a board pays it through the kernels (fastgo/*.pyx).
HEAVY = {
    "torch": 1.7,          # and torch.utils.tensorboard, 4.3
    "onnx": 1.1,
    "onnxruntime": 0.2,
    "openvino": 1.3,       # its Core
    "ray": 1.2,            # ray.init
    "matplotlib": 0.45,    # pyplot 0.54
    "aiohttp": 0.22,
}
LAZY_COMMANDS = "fastgo_cli"   # every module of it is loaded by some `fastgo CMD --help`
REASON = re.compile(r"#\s*lazy:\s*\S")
KERNEL_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))", re.M)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def modules(root, packages):
    """{dotted module name: [paths]} of the .py and .pyx files of the packages under root (a
    package named by its __init__.py)."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if path.suffix not in (".py", ".pyx") or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.setdefault(".".join(parts), []).append(path)
    return out


def never_imported(node):
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) and `if __name__ == "__main__":`: blocks
    that importing the module never runs."""
    test = node.test if isinstance(node, ast.If) else None
    if test is None:
        return False
    if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING":
        return True
    return isinstance(test, ast.Compare) and getattr(test.left, "id", None) == "__name__" \
        and len(test.comparators) == 1 and getattr(test.comparators[0], "value", None) == "__main__"


def import_statements(tree, module, is_package):
    """[(imported dotted names, node, inside a function)] of a parsed module, relative imports
    resolved against `module`; the blocks importing it never runs left out (never_imported)."""
    found = []

    def names(node):
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            package = module.split(".")
            package = package[:len(package) - node.level + (1 if is_package else 0)]
            base = ".".join(package + ([base] if base else []))
        return [base if alias.name == "*" else f"{base}.{alias.name}" for alias in node.names]

    def visit(node, inside):
        for child in ast.iter_child_nodes(node):
            if never_imported(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((names(child), child, inside))
            visit(child, inside or isinstance(child, FUNCTIONS))

    visit(tree, False)
    return found


def targets(name, files):
    """The project modules Python runs for importing `name`: the longest module it names and its
    parent packages."""
    target = name
    while target and target not in files:
        target = target.rpartition(".")[0]
    parts = target.split(".") if target else []
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in files]


def scan(root, packages):
    """({module: heavy library it imports at its top, directly or through project modules, or
    None}, [(path, line, text, imported names, the comment line above or '')] of every import
    inside a function)."""
    files = modules(root, packages)
    top, inner = {}, []
    for module, paths in files.items():
        top[module] = set()
        for path in paths:
            text = path.read_text(encoding="utf-8")
            if path.suffix != ".py":
                top[module].update(m.group(1) or m.group(2) for m in KERNEL_IMPORT.finditer(text))
                continue
            lines = text.splitlines()
            for imported, node, inside in import_statements(ast.parse(text), module,
                                                            path.name == "__init__.py"):
                if inside:
                    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                    span = "\n".join(lines[node.lineno - 1:node.end_lineno])
                    inner.append((path, node.lineno, span, imported,
                                  above if above.startswith("#") else ""))
                else:
                    top[module].update(imported)
    heavy = {module: next((n.split(".")[0] for n in sorted(names) if n.split(".")[0] in HEAVY), None)
             for module, names in top.items()}
    changed = True
    while changed:                  # through project modules, to a fixed point
        changed = False
        for module, names in top.items():
            if heavy[module] is None:
                heavy[module] = next((heavy[t] for n in sorted(names) for t in targets(n, files)
                                      if t != module and heavy[t]), None)
                changed = changed or heavy[module] is not None
    return heavy, inner


def uncovered(root, packages):
    """'path:line: import' of each import inside a function that no reason covers."""
    heavy, inner = scan(root, packages)
    files = set(heavy)
    out = []
    for path, line, text, imported, comment_above in inner:
        relative = path.relative_to(root)
        if relative.parts[0] == LAZY_COMMANDS or REASON.search(text) or REASON.match(comment_above):
            continue
        if all(name.split(".")[0] in HEAVY
               or any(heavy.get(target) for target in targets(name, files)) for name in imported):
            continue
        out.append((str(relative), line, " ".join(text.split())))
    return [f"{path}:{line}: {text}" for path, line, text in sorted(out)]


def test_every_import_inside_a_function_has_a_reason(project_packages):
    assert uncovered(ROOT, project_packages) == []


def test_the_rule_finds_what_it_looks_for(tmp_path):
    """A small tree: heavy through two modules, cheap, a reason, a command, a type-only import."""
    files = {
        "fastgo/__init__.py": "",
        "fastgo/board.pyx": "import numpy\n",
        "fastgo/cheap.py": "import json\n",
        "fastgo/game.py": "from fastgo import board\n",
        "network/__init__.py": "",
        "network/model.py": "import torch\n",
        "network/runner.py": "from .model import build\n",
        "network/loading.py": ("from typing import TYPE_CHECKING\n"
                               "if TYPE_CHECKING:\n    from network.runner import Runner\n"
                               "def load():\n    from network.runner import run\n"
                               "    import onnxruntime.quantization\n"
                               "    from fastgo import cheap\n"
                               "    from fastgo.game import Game  # lazy: a cycle with fastgo.game\n"
                               "    import json, torch\n"
                               "    # lazy: only one path needs it\n    import json\n"
                               "    # a comment that names no reason\n    import csv\n"),
        "play/__init__.py": "", "play/tool.py": "if __name__ == '__main__':\n    import torch\n",
        "play/side.py": "def side():\n    from network.loading import (\n        load)\n"
                        "    return lambda: __import__('json')\n",
        "fastgo_cli/__init__.py": "", "fastgo_cli/gtp_cmd.py": "def run():\n    import json\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    heavy, _ = scan(tmp_path, ("fastgo", "network", "play", "fastgo_cli"))
    assert heavy["network.runner"] == "torch" and heavy["network.loading"] is None
    assert heavy["fastgo.board"] is None and heavy["fastgo.game"] is None and heavy["play.tool"] is None
    assert [v.split(": ", 1)[1] for v in uncovered(tmp_path, ("fastgo", "network", "play", "fastgo_cli"))] \
        == ["from fastgo import cheap", "import json, torch", "import csv",
            "from network.loading import ( load)"]
