"""The suite's own set-up (tests/conftest.py, read as pytest loaded it): a backend cache of its
own."""
import os
from pathlib import Path

import pytest

from network.backend_cache import cache_path

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


@pytest.fixture
def root(request):
    """tests/conftest.py, the plugin pytest registered for it."""
    for plugin in request.config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None)
        if path and Path(path).resolve() == ROOT_CONFTEST:
            return plugin
    raise AssertionError("tests/conftest.py is not loaded")


def test_the_suite_uses_a_backend_cache_of_its_own(root):
    home = os.environ["XDG_CACHE_HOME"]
    assert home == os.environ[root._CACHE_ENV] and os.path.isdir(home)
    user = os.path.join(os.path.expanduser("~"), ".cache")
    assert not os.path.realpath(home).startswith(os.path.realpath(user) + os.sep)
    assert cache_path() == os.path.join(home, "fastgo", "backends.json")


def test_files_are_handed_out_learning_then_system_then_unit(root, request):
    """The collection hook sorts by folder (stable: a file's tests keep their order), a file with
    a test marked slow in its own code right after the learning files, and marks the slow
    folders; xdist keeps that order (`--no-loadscope-reorder` in pyproject.toml)."""
    class Item:
        def __init__(self, relative, marks=()):
            self.path = root.TESTS / relative
            self.marks = list(marks)

        def add_marker(self, mark):
            self.marks.append(mark.name)

        def get_closest_marker(self, name):
            return name if name in self.marks else None

    names = ["unit/a/test_x.py", "system/b/test_y.py", "unit/test_z.py",
             "learning/test_w.py", "system/test_v.py", "unit/a/test_x.py",
             "unit/test_c.py", "unit/test_c.py"]
    items = [Item(name) for name in names[:-1]]
    items.append(Item(names[-1], marks=["slow"]))  # one test of unit/test_c.py marked in its file
    root.pytest_collection_modifyitems(request.config, items)
    assert [str(i.path.relative_to(root.TESTS)) for i in items] == [
        "learning/test_w.py", "unit/test_c.py", "unit/test_c.py",
        "system/b/test_y.py", "system/test_v.py",
        "unit/a/test_x.py", "unit/test_z.py", "unit/a/test_x.py"]
    assert [bool(i.marks) for i in items] == [True, False, True, True, True, False, False, False]
    addopts = (root.TESTS.parent / "pyproject.toml").read_text()
    assert "--dist loadfile --no-loadscope-reorder" in addopts
