"""Binding the server's ROUTER socket: an endpoint that another live process serves is refused
(a TCP port in use, or an ipc:// socket file that answers a connection) instead of taken over,
and every refusal is one StartupError line naming server.endpoint."""
from __future__ import annotations

import os
import socket as sockets
import stat

import zmq


class StartupError(Exception):
    """The server cannot start as configured; the message names the key and the reason."""


def bind(socket, endpoint: str):
    """Bind `socket` to `endpoint`, refusing one that another process serves: a TCP port in
    use, or an ipc:// path whose socket file answers a connection (libzmq would unlink it and
    take the path from the live server). Raises StartupError with one line saying why."""
    scheme, _, address = endpoint.partition("://")
    if scheme == "ipc":
        path = address
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise StartupError(f"server.endpoint: {endpoint}: folder {directory} does not exist")
        if os.path.lexists(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise StartupError(f"server.endpoint: {endpoint}: {path} exists and is not a socket")
            if _unix_socket_answers(path):
                raise StartupError(f"server.endpoint: {endpoint} is in use by a running server")
    try:
        socket.bind(endpoint)
    except zmq.ZMQError as err:
        if err.errno == zmq.EADDRINUSE:
            raise StartupError(f"server.endpoint: {endpoint} is in use (address already in use)") from None
        raise StartupError(f"server.endpoint: cannot bind {endpoint}: {err}") from None


def _unix_socket_answers(path) -> bool:
    probe = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
        return True
    except OSError:             # ECONNREFUSED: a stale file left by a server that died
        return False
    finally:
        probe.close()
