"""Binding the server's socket: a live endpoint is refused, never taken over; a stale ipc socket
file is; every refusal is a StartupError naming server.endpoint."""
import socket

import pytest
import zmq

from inference_server.binding import StartupError, bind


@pytest.fixture
def sockets():
    made = []

    def make():
        sock = zmq.Context.instance().socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        made.append(sock)
        return sock
    yield make
    for sock in made:
        sock.close(0)


def test_a_taken_tcp_port_is_refused(sockets):
    first = sockets()
    bind(first, "tcp://127.0.0.1:*")
    endpoint = first.getsockopt_string(zmq.LAST_ENDPOINT)
    with pytest.raises(StartupError, match=r"^server\.endpoint: .* is in use \(address already in use\)"):
        bind(sockets(), endpoint)


def test_a_live_ipc_path_is_refused_and_a_stale_one_taken(sockets, tmp_path):
    endpoint = f"ipc://{tmp_path}/s.sock"
    bind(sockets(), endpoint)
    with pytest.raises(StartupError, match="is in use by a running server"):
        bind(sockets(), endpoint)
    stale = tmp_path / "stale.sock"
    probe = socket.socket(socket.AF_UNIX)
    probe.bind(str(stale))                 # a socket file nobody listens on
    probe.close()
    taker = sockets()
    bind(taker, f"ipc://{stale}")
    assert taker.getsockopt_string(zmq.LAST_ENDPOINT) == f"ipc://{stale}"


def test_ipc_paths_that_cannot_be_a_socket_are_refused(sockets, tmp_path):
    with pytest.raises(StartupError, match="folder .* does not exist"):
        bind(sockets(), f"ipc://{tmp_path}/none/s.sock")
    (tmp_path / "file").write_text("x")
    with pytest.raises(StartupError, match="exists and is not a socket"):
        bind(sockets(), f"ipc://{tmp_path}/file")
    assert (tmp_path / "file").read_text() == "x"          # left alone
