"""The suite's own set-up (tests/conftest.py, read as pytest loaded it): a backend cache of its
own."""
import os
from pathlib import Path

import pytest

from inference_server.backend_cache import cache_path

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
