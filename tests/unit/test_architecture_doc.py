"""docs/architecture.md names every module of the packages, one line each: a module added without
its line there fails here (a kernel by its .pyx, or its .pxd where it has no .pyx; a command by
its name in the `*_cmd.py` row, a bench by its name in the `bench/<target>.py` row)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def modules(project_packages):
    """Paths (relative, posix) of every module a reader looks up: .py and .pyx files, and .pxd
    files without a .pyx, not __init__.py."""
    out = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*")):
            if "__pycache__" in path.parts or path.name == "__init__.py":
                continue
            if path.suffix in (".py", ".pyx") or (path.suffix == ".pxd"
                                                  and not path.with_suffix(".pyx").exists()):
                out.append(path.relative_to(ROOT).as_posix())
    return out


def row(text, key):
    """The table row of docs/architecture.md whose first cell is `key`."""
    match = re.search(r"^\| `" + re.escape(key) + r"` \|(.*)$", text, re.M)
    return match.group(1) if match else ""


def missing(project_packages, text):
    commands, benches = row(text, "fastgo_cli/*_cmd.py"), row(text, "fastgo_cli/bench/<target>.py")
    out = []
    for path in modules(project_packages):
        name = Path(path).stem
        if f"`{path}`" in text:
            continue
        if path.startswith("fastgo_cli/bench/") and f"`{name}`" in benches:
            continue
        if re.fullmatch(r"fastgo_cli/\w+_cmd\.py", path) and f"`{name[:-4]}`" in commands:
            continue
        out.append(path)
    return out


def test_every_module_has_its_line(project_packages):
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert missing(project_packages, text) == []


def test_the_check_finds_a_module_without_its_line(project_packages):
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert missing(project_packages, text.replace("`fastgo/coords.py`", "`fastgo/coords`")) \
        == ["fastgo/coords.py"]
    assert "fastgo_cli/gtp_cmd.py" in missing(project_packages,
                                              text.replace("`gtp`, `analysis`", "`analysis`"))


INDEXED = ("network", "wire", "inference_server", "recorder")   # packages whose __init__ lists its modules


def index_names(text):
    """The module names an __init__ docstring's index lists: lines `  name  what it holds`."""
    return {m.group(1) for m in re.finditer(r"^  ([a-z_]+)\s{2,}\S", text, re.M)}


@pytest.mark.parametrize("package", INDEXED)
def test_a_package_index_lists_every_module_it_holds(package):
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    modules = {path.stem for path in (ROOT / package).glob("*.py") if path.stem != "__init__"}
    assert index_names(doc) == modules


def test_the_index_check_sees_a_missing_module():
    assert index_names("Modules:\n  protocol    the wire\n  client      a DEALER\n") == {"protocol", "client"}
