"""roles.registry: every role is one named thing. Each Role's command is a `fastgo` command whose
module only parses and hands over to the role's body (roles.<name>.run); its files in RUN/logs
and its ready line are spelled by the registry alone (a scan of the source keeps it so); the
roles of a cluster come in start order with their command lines."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

from roles.registry import READY, RESOURCES_KEY, SUPERVISOR, Role, is_worker_file, role_specs
from rundata.config import Config
from rundata.rundir import open_run_dir

ROOT = Path(__file__).resolve().parents[3]
FILE_CALLS = {"read_status", "StatusFile", "status_path", "log", "output", "status"}


def test_every_role_has_its_command_body_and_resources():
    from fastgo_cli.main import COMMANDS

    for role in Role:
        assert role.command in COMMANDS, role
        body = importlib.import_module(role.body)
        assert callable(body.run), role
        command = importlib.import_module(COMMANDS[role.command][0])
        source = Path(command.__file__).read_text()
        # the command parses and hands over: the body's wrapper, logging and status are not its
        package, module = role.body.rsplit(".", 1)
        assert f"from {package} import {module}" in source, role
        assert f"{module}.run(args)" in source, role
        assert "run_role" not in source and "setup_logging" not in source, role
        assert role.resources_key in {f for f in Config().cluster.__dataclass_fields__}, role
    assert set(RESOURCES_KEY) == set(Role) and set(READY) == {Role.SERVE, Role.RECORDER}


def test_a_roles_files_are_named_by_the_registry(tmp_path):
    run = open_run_dir(tmp_path / "run")
    assert Role.SELFPLAY.file_name(3) == "selfplay-w3" and is_worker_file("selfplay-w3")
    assert Role.RECORDER.file_name() == "recorder" and not is_worker_file("recorder")
    assert Role.TRAIN.log(run) == run.log("train")
    assert Role.SELFPLAY.status_file(run, 2).path == run.status("selfplay-w2")
    assert Role.SERVE.ready == "fastgo serve: ready on " and not Role.SERVE.heartbeat
    assert SUPERVISOR not in set(Role)


def test_the_cluster_starts_the_roles_in_order():
    specs = role_specs(Config().cluster, 2, True, recorder=True)
    assert [(s.name, s.kind) for s in specs] == [
        ("serve", Role.SERVE), ("train", Role.TRAIN), ("recorder", Role.RECORDER),
        ("selfplay-w0", Role.SELFPLAY), ("selfplay-w1", Role.SELFPLAY),
        ("evaluate", Role.EVALUATE)]
    assert [s.heartbeat for s in specs] == [None, "train", "recorder", "selfplay-w0",
                                            "selfplay-w1", "evaluate"]


def spelled_roles(path):
    """[(line, text)] of the string constants in `path` (docstrings aside) that spell a role's
    file name or ready line: a worker's 'selfplay-w' name, a ready line, or a role's name given
    to a run directory's file call (read_status, StatusFile, status_path, .log, .output,
    .status)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    names = {role.value for role in Role} | {SUPERVISOR}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings \
                and ("selfplay-w" in node.value or ": ready on" in node.value):
            found.append((node.lineno, node.value))
        if isinstance(node, ast.Call) and node.args:
            func = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            for arg in node.args[:2]:
                if func in FILE_CALLS and isinstance(arg, ast.Constant) and arg.value in names:
                    found.append((node.lineno, arg.value))
    return found


def test_no_module_but_the_registry_spells_a_roles_files(project_packages):
    found = []
    for package in project_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "roles" / "registry.py":
                continue
            found += [f"{path.relative_to(ROOT)}:{line}: {text!r}"
                      for line, text in spelled_roles(path)]
    assert found == []


def test_the_scan_finds_a_role_spelled_out(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""selfplay-w0 in a docstring is fine."""\n'
                    'a = read_status(run, "train")\nb = run.log(f"selfplay-w{i}")\n'
                    'print("fastgo serve: ready on " + e)\n')
    assert [line for line, _ in spelled_roles(path)] == [2, 3, 4]
