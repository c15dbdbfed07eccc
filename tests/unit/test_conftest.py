"""The suite's own set-up (tests/conftest.py, read as pytest loaded it): a backend cache of its
own, the order files are handed out, and the `needs` mark: a missing program skips its test
with one line at the end of the run, and fails it under CI."""
import os
import subprocess
import sys
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


INNER = """
import pytest

@pytest.mark.needs("chromedriver")
def test_with_the_driver():
    pass

@pytest.mark.needs("opencl")
def test_with_opencl():
    pass

def test_without_needs():
    pass
"""


def inner_run(tmp_path, ci, workers):
    """A small pytest run of INNER with the suite's conftest as its plugin (on `workers` xdist
    workers, as the suite runs; 0: in its own process), PATH an empty folder (no chromedriver)
    and the OpenCL loader's vendors folder empty (no driver)."""
    for folder in ("bin", "vendors", "run"):
        (tmp_path / folder).mkdir()
    (tmp_path / "run" / "test_inner.py").write_text(INNER)
    (tmp_path / "run" / "pytest.ini").write_text("[pytest]\n")
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env.update(PATH=str(tmp_path / "bin"), OCL_ICD_VENDORS=str(tmp_path / "vendors"),
               PYTHONPATH=os.pathsep.join([str(ROOT_CONFTEST.parent), str(ROOT_CONFTEST.parents[1])]))
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
                           "-n", str(workers), "-c", str(tmp_path / "run" / "pytest.ini"),
                           "--rootdir", str(tmp_path / "run"), "-q", "-rs",
                           str(tmp_path / "run" / "test_inner.py")],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path / "run")


def test_a_missing_program_skips_its_test_and_the_run_ends_with_one_line_naming_it(tmp_path):
    done = inner_run(tmp_path, ci=False, workers=1)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed, 2 skipped" in done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("skipped for lack of")]
    assert lines == ["skipped for lack of an OpenCL driver for KataGo (1 test), chromedriver "
                     "(1 test); install with: apt-get install pocl-opencl-icd chromium-driver"], done.stdout


def test_under_ci_a_missing_program_fails_its_test(tmp_path):
    done = inner_run(tmp_path, ci=True, workers=0)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed, 2 errors" in done.stdout and "skipped" not in done.stdout
    assert "[needs chromedriver] chromedriver is not installed" in done.stdout
    assert "[needs opencl] an OpenCL driver for KataGo is not installed" in done.stdout


def test_the_command_that_adds_what_is_missing(root):
    assert root.install_command(["gnugo", "leelaz", "opencl", "chromium", "chromedriver"]) == (
        "apt-get install gnugo leela-zero pocl-opencl-icd chromium chromium-driver")
    assert root.install_command(["selenium", "gnugo", "katrain"]) == (
        'apt-get install gnugo && pip install -e ".[test]"')
    assert root.missing_line({"gnugo": 3}) == ("skipped for lack of GNU Go (gnugo) (3 tests); "
                                               "install with: apt-get install gnugo")
