"""ZeroMQ endpoint policy: what a usable bind address looks like, which addresses are loopback,
and the CURVE settings a bind beyond this host needs (ironhouse: a secret key and a list of
allowed client keys)."""
from __future__ import annotations

import re

from rundata.config.fields import ConfigError


def endpoint_problem(endpoint: str) -> str:
    """What is wrong with a ZeroMQ bind address, or "" when it is usable: tcp://HOST:PORT
    (PORT 1..65535 or *), ipc://PATH, inproc://NAME."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep or scheme not in ("tcp", "ipc", "inproc"):
        return "expected tcp://HOST:PORT, ipc://PATH or inproc://NAME"
    if scheme != "tcp":
        if not rest or "\x00" in rest:
            return f"{scheme}:// needs a name"
        if scheme == "ipc" and len(rest.encode()) > 107:
            return "ipc path longer than 107 bytes (the limit of a Unix socket address)"
        return ""
    host, sep, port = rest.rpartition(":")
    if not sep or not host:
        return "expected tcp://HOST:PORT (a port number, or * for any free port)"
    if port != "*" and not (port.isascii() and port.isdigit() and len(port) <= 5
                            and 1 <= int(port) <= 65535):
        return f"port {port[:20]!r} is not in 1..65535 (or *)"
    if host.startswith("["):
        if not host.endswith("]") or len(host) < 3:
            return f"IPv6 host {host[:60]!r} needs its closing ']'"
    elif not re.fullmatch(r"[A-Za-z0-9_.*-]{1,253}", host):
        return f"host {host[:60]!r} is not a host name or address"
    return ""


def check_bind(section):
    """A bind endpoint with its CURVE settings (the server's, the recorder's): ConfigError
    naming the key when the address is malformed or a non-loopback bind lacks keys."""
    problem = endpoint_problem(section.endpoint)
    if problem:
        raise ConfigError(f"endpoint: {section.endpoint!r}: {problem}")
    curve_problem = remote_curve_problem(section.endpoint, section.curve_secret_key_file,
                                         section.curve_allowed, section.allow_insecure_remote)
    if curve_problem:
        raise ConfigError(curve_problem)


def remote_curve_problem(endpoint, secret_key_file, allowed, allow_insecure) -> str:
    """What a bind endpoint's CURVE settings lack, or "": a non-loopback endpoint needs a secret
    key and a list of allowed client keys (ironhouse), unless allow_insecure_remote is set."""
    if is_loopback(endpoint) or allow_insecure:
        return ""
    if not secret_key_file:
        return (f"endpoint: {endpoint!r} is not loopback; set curve_secret_key_file (CURVE) "
                f"(or allow_insecure_remote = true on a trusted network)")
    if not allowed:
        return (f"curve_allowed: endpoint {endpoint!r} is not loopback; list the client public "
                f"keys (files, folders of *.key files or Z85 keys) allowed to connect")
    return ""


def is_loopback(endpoint: str) -> bool:
    """True for ipc://, inproc:// and tcp:// on 127.x, localhost or ::1."""
    scheme, _, rest = endpoint.partition("://")
    if scheme != "tcp":
        return True
    host = rest.rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")
