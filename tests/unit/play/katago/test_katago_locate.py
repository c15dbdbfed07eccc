"""play.katago.locate: the order in which KataGo's program and network are found (spec,
environment, cache, PATH), the one-line errors when one is missing, and what KataGo's last
words on stderr mean."""
import os

import pytest

from play.katago.locate import (
    CACHE_MODEL,
    CACHE_PROGRAM,
    KataGoMissing,
    cache_dir,
    explain,
    find_model,
    find_program,
    is_appimage,
    locate,
)


def executable(path, data=b"#!/bin/sh\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755)
    return str(path)


def test_cache_folder_order(tmp_path):
    home = os.path.expanduser("~")
    assert cache_dir({}) == os.path.join(home, ".cache", "fastgo", "katago")
    assert cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/fastgo/katago"
    assert cache_dir({"XDG_CACHE_HOME": "/x", "FASTGO_KATAGO_HOME": "/k"}) == "/k"


def test_program_environment_then_cache_then_path(tmp_path):
    cache, bin_dir = tmp_path / "cache", tmp_path / "bin"
    on_path = executable(bin_dir / "katago")
    env = {"FASTGO_KATAGO_HOME": str(cache), "PATH": str(bin_dir)}
    assert find_program(env) == (on_path, "PATH")
    cached = executable(cache / CACHE_PROGRAM)
    assert find_program(env) == (cached, "the cache")
    given = executable(tmp_path / "mine" / "katago")
    assert find_program({**env, "FASTGO_KATAGO": given}) == (given, "$FASTGO_KATAGO")


def test_network_spec_then_environment_then_cache(tmp_path):
    cache = tmp_path / "cache"
    env = {"FASTGO_KATAGO_HOME": str(cache)}
    cache.mkdir()
    (cache / CACHE_MODEL).write_bytes(b"net")
    (tmp_path / "env.bin.gz").write_bytes(b"net")
    (tmp_path / "spec.bin.gz").write_bytes(b"net")
    assert find_model(None, env) == (str(cache / CACHE_MODEL), "the cache")
    env["FASTGO_KATAGO_MODEL"] = str(tmp_path / "env.bin.gz")
    assert find_model(None, env) == (str(tmp_path / "env.bin.gz"), "$FASTGO_KATAGO_MODEL")
    assert find_model(str(tmp_path / "spec.bin.gz"), env)[1] == "the player spec"


def test_missing_program_or_network_is_one_line_naming_the_fetch_command(tmp_path):
    env = {"FASTGO_KATAGO_HOME": str(tmp_path / "empty"), "PATH": str(tmp_path)}
    with pytest.raises(KataGoMissing) as missing:
        locate(None, env)
    assert "program not found" in str(missing.value)
    assert "fastgo katago fetch" in str(missing.value) and "\n" not in str(missing.value)
    env["FASTGO_KATAGO"] = executable(tmp_path / "katago")
    with pytest.raises(KataGoMissing, match="network not found.*fastgo katago fetch"):
        locate(None, env)
    with pytest.raises(KataGoMissing, match="no such file"):
        locate(str(tmp_path / "nothing.bin.gz"), env)
    with pytest.raises(KataGoMissing, match="not an executable file"):
        find_program({"FASTGO_KATAGO": str(tmp_path / "nothing")})


def test_an_appimage_is_recognised(tmp_path):
    image = executable(tmp_path / "katago", b"\x7fELF\x02\x01\x01\x00AI\x02\x00\x00\x00\x00")
    plain = executable(tmp_path / "plain", b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00")
    assert is_appimage(image) and not is_appimage(plain)
    assert not is_appimage(str(tmp_path / "absent"))


@pytest.mark.parametrize("said, words", [
    ("what():  OpenCL error at x.cpp, func err, line 308, error CL_PLATFORM_NOT_FOUND_KHR",
     "no OpenCL device"),
    ("error while loading shared libraries: libOpenCL.so.1: cannot open shared object file",
     "OpenCL loader is missing"),
    ("Error: No suitable fusermount binary found on the $PATH", "no FUSE"),
    ("what():  Could not find key 'resignThreshold' in config file gtp.cfg",
     "refused its config"),
    ("Error loading or parsing model file model.bin.gz", "could not load its network"),
    ("something else entirely", ""),
])
def test_katago_last_words_explained(said, words):
    assert (words in explain(said)) if words else explain(said) == ""
