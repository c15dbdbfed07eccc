"""A command that is not a role and meets a full disk says so in one line (the condition and the
file) with the disk-full exit status, instead of a traceback; other errors still propagate."""
from __future__ import annotations

import errno
import importlib

import pytest

from fastgo.diskfull import EXIT_STATUS
from fastgo_cli.main import main


@pytest.mark.parametrize("command,module", [(["curve", "r1"], "fastgo_cli.curve_cmd"),
                                            (["bench", "board"], "fastgo_cli.bench.board")])
def test_a_full_disk_is_one_line(monkeypatch, capsys, command, module):
    target = importlib.import_module(module)

    def full(args):
        try:
            raise OSError(errno.ENOSPC, "No space left on device", "/data/run/curve\nx.png")
        except OSError as err:         # as torch does: a RuntimeError raised from the OSError
            raise RuntimeError("write failed") from err

    monkeypatch.setattr(target, "run", full)
    assert main(command) == EXIT_STATUS
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"fastgo {' '.join(command[:2]) if command[0] == 'bench' else command[0]}: "
                          "disk full (No space left on device) writing /data/run/curve\\nx.png")


def test_other_errors_still_propagate(monkeypatch):
    target = importlib.import_module("fastgo_cli.curve_cmd")

    def broken(args):
        raise OSError(errno.EACCES, "Permission denied", "/x")

    monkeypatch.setattr(target, "run", broken)
    with pytest.raises(OSError):
        main(["curve", "r1"])
