"""External GTP engines that misbehave (play.gtp.client): a reply line without end,
an error-output flood, a shell wrapper whose children outlive the engine. Each is bounded in
memory, disk and time, and close() leaves no process of the engine's group behind."""
import os
import sys
import time

import pytest

from play.gtp.client import MAX_LINE_BYTES, MAX_NOISE_LINES, MAX_STDERR_BYTES, GtpClient, GtpConnectionError

PY = sys.executable


def group_gone(pgid, within_s=10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_an_endless_reply_line_is_refused_without_buffering_it():
    # answers every command with 64 MiB and no newline
    engine = [PY, "-c", "import sys\nsys.stdin.readline()\nchunk = b'=' * (1 << 20)\n"
                        "for _ in range(64): sys.stdout.buffer.write(chunk)\nsys.stdout.flush()"]
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    client = GtpClient(engine, timeout=20)
    with pytest.raises(GtpConnectionError, match=f"over {MAX_LINE_BYTES} bytes"):
        client.send("name")
    client.close()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, f"peak RSS grew by {grown_kib} KiB reading a 64 MiB line"


def test_an_error_output_flood_keeps_at_most_the_bound_on_disk(tmp_path):
    engine = [PY, "-c", "import sys\nchunk = b'x' * (1 << 20)\n"
                        "for _ in range(20): sys.stderr.buffer.write(chunk)\n"
                        "sys.stderr.flush()\nline = sys.stdin.readline()\n"
                        "sys.stdout.write('=1 flood\\n\\n'); sys.stdout.flush()\nsys.stdin.readline()"]
    with open(tmp_path / "engine.err", "wb") as sink:
        client = GtpClient(engine, timeout=20, stderr=sink)
        assert client.send("name") == "flood"
        client.close()
    assert (tmp_path / "engine.err").stat().st_size == MAX_STDERR_BYTES
    assert client.stderr_dropped == 20 * (1 << 20) - MAX_STDERR_BYTES


def test_close_ends_a_shell_wrapper_and_everything_it_started():
    # the wrapper's children ignore SIGTERM and keep the pipes open; nothing ever answers
    engine = ["sh", "-c", "trap '' TERM; sleep 300 & sleep 300 & wait"]
    client = GtpClient(engine, timeout=0.5)
    with pytest.raises(GtpConnectionError, match="no answer"):
        client.send("name")
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 15
    assert group_gone(client.process.pid), "a process of the engine's group survived close()"


def test_close_returns_when_a_process_outside_the_group_holds_the_pipes():
    # the engine answers, then a child of it leaves the group (setsid) holding stdout and
    # stderr open: close() must not wait on the pipes for as long as that child lives
    engine = [PY, "-c", "import os, sys, time\n"
                        "child = os.fork()\n"
                        "if child == 0:\n    os.setsid()\n    time.sleep(60)\n    os._exit(0)\n"
                        "for line in sys.stdin:\n"
                        "    n = line.split()[0]\n"
                        "    sys.stdout.write(f'={n} {child}\\n\\n'); sys.stdout.flush()\n"
                        "    if 'quit' in line: break\n"]
    import signal
    import tempfile
    with tempfile.TemporaryFile() as sink:
        client = GtpClient(engine, timeout=10, stderr=sink)
        child = int(client.send("name"))
        try:
            started = time.monotonic()
            client.close()
            assert time.monotonic() - started < 5
        finally:
            os.kill(child, signal.SIGKILL)


def test_lines_before_the_first_answer_are_skipped_and_bounded():
    # a launcher's notice before the engine's first answer (an AppImage without FUSE), then GTP
    notice = ("import sys\nprint('Error: No suitable fusermount binary found on the $PATH')\n"
              "print()\nprint('Cannot mount AppImage')\nsys.stdout.flush()\n"
              "for line in sys.stdin:\n    print('=1 fake\\n', flush=True)\n    break\n"
              "for line in sys.stdin:\n    print('late noise\\n', flush=True)\n")
    with GtpClient([PY, "-c", notice], timeout=20) as client:
        assert client.send("name") == "fake"
        assert client.noise_lines == 2 and client.noise[0].startswith("Error: No suitable")
        with pytest.raises(GtpConnectionError, match="out of protocol: 'late noise'"):
            client.send("name")               # after the first answer every line is GTP
    flood = f"print('x\\n' * {MAX_NOISE_LINES + 1}, flush=True)\nimport time\ntime.sleep(30)"
    with GtpClient([PY, "-c", flood], timeout=20) as client:
        with pytest.raises(GtpConnectionError, match="out of protocol: 'x'"):
            client.send("name")
