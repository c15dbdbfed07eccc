"""The real KataGo for the katago:VISITS system test: the cache of play.katago.locate, filled by
the project's own fetch (play.katago.fetch) where it lacks the program or the network, with the
preset OpenCL tuning where KataGo has no tuning for 9x9 yet (its own takes about 9 minutes of a
2-core CPU)."""
import os
import platform

import pytest


@pytest.fixture(scope="session")
def katago_env():
    """The environment of a process that plays katago:VISITS with the cache's KataGo."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("KataGo's fetched program is for Linux on x86-64")
    from play.katago.fetch import fetch
    from play.katago.locate import CACHE_MODEL, CACHE_PROGRAM, HOME_ENV, cache_dir
    from play.katago.side import tuned

    cache = cache_dir()
    program, model = os.path.join(cache, CACHE_PROGRAM), os.path.join(cache, CACHE_MODEL)
    if not (os.path.isfile(program) and os.path.isfile(model) and tuned(cache, 9)):
        fetch(cache, preset_tuning=not tuned(cache, 9))
    return {**os.environ, HOME_ENV: cache, "FASTGO_KATAGO": program,
            "FASTGO_KATAGO_MODEL": model}
