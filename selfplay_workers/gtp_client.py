"""Drives an external GTP engine (GNU Go, another fastgo, KataGo ...) as a subprocess.

A reader thread drains the engine's stdout into a queue, so commands can be pipelined
(`send_many` writes a batch before reading its answers) without either pipe filling up, and every
wait is bounded by `timeout`. Commands carry ids; each answer is checked against its id.
"""
import queue
import subprocess
import threading
import time

from fastgo.gtp import GtpError, format_command, parse_response

DEFAULT_TIMEOUT = 60.0     # seconds to wait for one response
CLOSE_TIMEOUT = 5.0        # seconds for quit, then terminate, then kill


class GtpConnectionError(GtpError):
    """The engine exited, closed its output, answered out of protocol, or did not answer in time."""


class GtpClient:
    """One engine process. `send("play b d4")` returns the response text or raises GtpError
    (the engine answered '?') / GtpConnectionError. Use as a context manager or call close()."""

    def __init__(self, argv, *, timeout=DEFAULT_TIMEOUT, stderr=subprocess.DEVNULL, cwd=None, env=None):
        self.argv = list(argv)
        self.timeout = timeout
        self._next_id = 1
        self._lines = queue.Queue()
        self._closed = False
        self._broken = False     # a connection error left the stream out of step
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
            cwd=cwd, env=env, text=True, encoding="utf-8", errors="replace", bufsize=1)
        self._reader = threading.Thread(target=self._read_stdout, name="gtp-client-reader", daemon=True)
        self._reader.start()

    def _read_stdout(self):
        try:
            for line in self.process.stdout:
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)     # end of output

    def _next_line(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GtpConnectionError(f"no answer from {self.argv[0]} within {self.timeout:g} s")
        try:
            line = self._lines.get(timeout=remaining)
        except queue.Empty:
            raise GtpConnectionError(
                f"no answer from {self.argv[0]} within {self.timeout:g} s") from None
        if line is None:
            self._lines.put(None)     # stays at end of output for later reads
            raise GtpConnectionError(
                f"{self.argv[0]} closed its output (exit code {self.process.poll()})")
        return line

    def _read_response(self, deadline):
        """(ok, id, text) of the next response: lines up to an empty line, stray blank lines skipped."""
        lines = []
        while True:
            line = self._next_line(deadline).rstrip("\r\n")
            if not lines:
                if not line.strip():
                    continue
                if line[0] not in "=?":
                    raise GtpConnectionError(f"{self.argv[0]} answered out of protocol: {line[:80]!r}")
            elif not line.strip():
                break
            lines.append(line)
        return parse_response("\n".join(lines))

    def _write(self, text):
        if self._closed:
            raise GtpConnectionError("the client is closed")
        if self._broken:
            raise GtpConnectionError(f"the connection to {self.argv[0]} failed earlier")
        try:
            self.process.stdin.write(text)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise GtpConnectionError(f"cannot write to {self.argv[0]}: {exc}") from None

    def send_many(self, commands, *, check=True):
        """Sends all command lines, then reads their answers in order. Returns a list of
        (ok, text); with check=True the first failed answer raises GtpError instead (the
        remaining answers are still read). A GtpConnectionError leaves the client unusable."""
        try:
            return self._send_many(commands, check)
        except GtpConnectionError:
            self._broken = True
            raise

    def _send_many(self, commands, check):
        ids = []
        lines = []
        for command in commands:
            words = command.split()
            if not words:
                raise ValueError("empty GTP command")
            ids.append(self._next_id)
            lines.append(format_command(*words, command_id=self._next_id))
            self._next_id += 1
        self._write("".join(lines))
        deadline = time.monotonic() + self.timeout * max(1, len(ids) / 100)
        results = []
        failure = None
        for command, expected in zip(commands, ids):
            ok, got, text = self._read_response(deadline)
            if got != expected:
                raise GtpConnectionError(f"{self.argv[0]} answered id {got} for command id {expected}")
            if not ok and failure is None:
                failure = GtpError(f"{command!r}: {text}")
            results.append((ok, text))
        if check and failure is not None:
            raise failure
        return results

    def send(self, command):
        """One command; its response text, or GtpError with the engine's message."""
        return self.send_many([command])[0][1]

    def close(self):
        """quit (when the engine still answers), then end of input, terminate, kill: returns
        within about 4 x CLOSE_TIMEOUT, the exit code of the engine."""
        if self._closed:
            return self.process.returncode
        answered = False
        if not self._broken and self.process.poll() is None:
            old_timeout, self.timeout = self.timeout, CLOSE_TIMEOUT
            try:
                self.send("quit")
                answered = True
            except GtpError:
                pass
            finally:
                self.timeout = old_timeout
        self._closed = True
        try:
            self.process.stdin.close()
        except OSError:
            pass
        grace = CLOSE_TIMEOUT if answered else 1.0
        for stop in (None, self.process.terminate, self.process.kill):
            if stop is not None and self.process.poll() is None:
                stop()
            try:
                self.process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                grace = CLOSE_TIMEOUT
        self._reader.join(timeout=CLOSE_TIMEOUT)
        try:
            self.process.stdout.close()
        except OSError:
            pass
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if not self._closed and self.process.poll() is None:
                self.process.kill()
        except Exception:
            pass
