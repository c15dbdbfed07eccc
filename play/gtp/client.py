"""Drives an external GTP engine (GNU Go, another fastgo, KataGo ...) as a subprocess.

A reader thread drains the engine's stdout into a queue, so commands can be pipelined
(`send_many` writes a batch before reading its answers) without either pipe filling up, and every
wait is bounded by `timeout`. Commands carry ids; each answer is checked against its id.

Lines before the engine's first answer that are not GTP (a launcher's notice such as an
AppImage's "Error: No suitable fusermount binary found") are skipped, at most MAX_NOISE_LINES;
after the first answer every line must be GTP.

Bounds: a line is at most MAX_LINE_BYTES and a response at most MAX_RESPONSE_BYTES (beyond:
GtpConnectionError, the engine is ended); at most MAX_QUEUED_LINES wait unread (then the engine
blocks on its pipe); at most MAX_STDERR_BYTES of its error output are kept, the rest counted and
dropped. The engine runs in a process group of its own, and close() ends the whole group, so a
shell wrapper (`sh -c '...'`) cannot leave the engine running or the pipes open.
"""
import os
import queue
import signal
import subprocess
import threading
import time

from fastgo.gtp import GtpError, format_command, parse_response

DEFAULT_TIMEOUT = 60.0     # seconds to wait for one response
CLOSE_TIMEOUT = 5.0        # seconds for quit, then terminate, then kill
READER_GRACE = 1.0         # seconds close() waits for the pipe readers once the engine is gone
MAX_LINE_BYTES = 1 << 16
MAX_RESPONSE_BYTES = 1 << 20
MAX_QUEUED_LINES = 4096
MAX_STDERR_BYTES = 1 << 20
MAX_NOISE_LINES = 1000     # lines that are not GTP skipped before the first answer
_TOO_LONG = object()       # queued by the reader for a line over MAX_LINE_BYTES


class GtpConnectionError(GtpError):
    """The engine exited, closed its output, answered out of protocol, or did not answer in time."""


class GtpClient:
    """One engine process. `send("play b d4")` returns the response text or raises GtpError
    (the engine answered '?') / GtpConnectionError. Use as a context manager or call close()."""

    def __init__(self, argv, *, timeout=DEFAULT_TIMEOUT, stderr=subprocess.DEVNULL, cwd=None, env=None):
        self.argv = list(argv)
        self.timeout = timeout
        self._next_id = 1
        self._lines = queue.Queue(maxsize=MAX_QUEUED_LINES)
        self._closed = False
        self._broken = False     # a connection error left the stream out of step
        self._answered = False   # a first answer was read: no line before it is skipped again
        self.noise = []          # the first 20 lines skipped before the first answer
        self.noise_lines = 0     # how many were skipped
        self.stderr_dropped = 0  # bytes of error output beyond MAX_STDERR_BYTES
        sink = stderr if hasattr(stderr, "write") else None
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if sink is not None else stderr, cwd=cwd, env=env,
            start_new_session=True)
        self._reader = threading.Thread(target=self._read_stdout, name="gtp-client-reader", daemon=True)
        self._reader.start()
        self._stderr_reader = None
        if sink is not None:
            self._stderr_reader = threading.Thread(target=self._drain_stderr, args=(sink,),
                                                   name="gtp-client-stderr", daemon=True)
            self._stderr_reader.start()

    def _read_stdout(self):
        stdout = self.process.stdout
        try:
            while True:
                raw = stdout.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE_BYTES:
                    self._put(_TOO_LONG)
                    return
                if not self._put(raw.decode("utf-8", errors="replace")):
                    return
        except (OSError, ValueError):
            pass
        finally:
            self._put(None)           # end of output

    def _put(self, item) -> bool:
        """Queues a line, waiting while the queue is full; False once the client is closed."""
        while True:
            try:
                self._lines.put(item, timeout=0.2)
                return True
            except queue.Full:
                if self._closed:
                    return False

    def _drain_stderr(self, sink):
        kept = 0
        try:
            while True:
                chunk = self.process.stderr.read1(1 << 16)
                if not chunk:
                    break
                room = max(0, MAX_STDERR_BYTES - kept)
                if room:
                    sink.write(chunk[:room])
                    sink.flush()
                    kept += min(room, len(chunk))
                self.stderr_dropped += max(0, len(chunk) - room)
        except (OSError, ValueError):
            pass

    def stderr_settled(self, timeout_s=0.5):
        """Waits (at most `timeout_s`) until what the engine wrote to stderr has reached the
        sink: once the process has exited, its reader ends at the end of the pipe. True when it
        has (or nothing is captured)."""
        if self._stderr_reader is None:
            return True
        self._stderr_reader.join(timeout=timeout_s)
        return not self._stderr_reader.is_alive()

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
            try:
                self._lines.put_nowait(None)     # stays at the end of output for later reads
            except queue.Full:
                pass
            raise GtpConnectionError(
                f"{self.argv[0]} closed its output (exit code {self.process.poll()})")
        if line is _TOO_LONG:
            raise GtpConnectionError(f"{self.argv[0]} wrote a line over {MAX_LINE_BYTES} bytes")
        return line

    def _read_response(self, deadline):
        """(ok, id, text) of the next response: lines up to an empty line, stray blank lines skipped."""
        lines = []
        size = 0
        while True:
            line = self._next_line(deadline).rstrip("\r\n")
            size += len(line) + 1
            if size > MAX_RESPONSE_BYTES:
                raise GtpConnectionError(f"{self.argv[0]} answered over {MAX_RESPONSE_BYTES} bytes")
            if not lines:
                if not line.strip():
                    continue
                if line[0] not in "=?":
                    if not self._answered and self.noise_lines < MAX_NOISE_LINES:
                        self.noise_lines += 1
                        if len(self.noise) < 20:
                            self.noise.append(line[:200])
                        size = 0
                        continue
                    raise GtpConnectionError(f"{self.argv[0]} answered out of protocol: {line[:80]!r}")
                self._answered = True
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
            self.process.stdin.write(text.encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise GtpConnectionError(f"cannot write to {self.argv[0]}: {exc}") from None

    def send_many(self, commands, *, check=True):
        """Sends all command lines, then reads their answers in order. Returns a list of
        (ok, text); with check=True the first failed answer raises GtpError instead (the
        remaining answers are still read). A GtpConnectionError leaves the client unusable."""
        try:
            return self._send_many(commands, check)
        except (GtpConnectionError, KeyboardInterrupt, SystemExit):
            self._broken = True          # answers left unread: out of step with the engine
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
        within about 3 x CLOSE_TIMEOUT + READER_GRACE, the exit code of the engine, even when a
        process the engine started outside its group keeps the pipes open."""
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
        for number in (None, signal.SIGTERM, signal.SIGKILL):
            if number is not None and self.process.poll() is None:
                self._signal_group(number)
            try:
                self.process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                grace = CLOSE_TIMEOUT
        self._signal_group(signal.SIGKILL)     # whatever the engine left behind in its group
        # A process that left the group (setsid, a daemon) may still hold the pipes open: the
        # readers then stay blocked in a read, and closing a pipe under a blocked read waits
        # for that read. They are daemon threads: after a short wait they are left behind and
        # their pipes with them (closed when the process that holds the other end exits).
        readers = [(self._reader, self.process.stdout)]
        if self._stderr_reader is not None:
            readers.append((self._stderr_reader, self.process.stderr))
        until = time.monotonic() + READER_GRACE
        for thread, pipe in readers:
            thread.join(timeout=max(0.0, until - time.monotonic()))
            if not thread.is_alive():
                try:
                    pipe.close()
                except OSError:
                    pass
        return self.process.returncode

    def _signal_group(self, number):
        """Signals the engine's whole process group (it leads it: start_new_session)."""
        try:
            os.killpg(self.process.pid, number)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if not self._closed:
                self._signal_group(signal.SIGKILL)
        except Exception:
            pass
