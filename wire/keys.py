"""CURVE keys and the ironhouse pattern for every endpoint that leaves the host: key files
(written by `fastgo keys new`), the allow list of client public keys, and the ZAP
authenticator that refuses every other client.

Key files: NAME.key holds the public key, NAME.key_secret both halves (mode 0600), in the text
format of pyzmq's zmq.auth.create_certificates (`public-key = "Z85"`, `secret-key = "Z85"`). A
file whose first line is a bare 40-character Z85 key is read too. A secret key file readable by
group or others is refused.
"""
from __future__ import annotations

import os
import re
import stat
import threading

import zmq
from zmq.utils import z85

from fastgo.files import escaped, read_bounded

MAX_KEY_FILE_BYTES = 4096
MAX_ALLOWED_KEYS = 100_000
_Z85 = re.compile(rb"[0-9a-zA-Z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}")
_FIELD = re.compile(rb'^\s*(public-key|secret-key)\s*=\s*"([^"]*)"\s*$', re.M)


class CurveKeyError(ValueError):
    """A key file or key that cannot be used; the message names it and says why."""


SHOWN_CHARS = 200     # of a path or key named in an error: a 40,000-character one is not repeated


# -- writing --------------------------------------------------------------------------------------

def write_key_pair(directory, name) -> tuple[str, str]:
    """Writes directory/NAME.key (public, 0644) and directory/NAME.key_secret (both halves,
    0600), never overwriting; returns their paths. Raises FileExistsError or OSError."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", name) or name.startswith("."):
        raise ValueError(f"key name {name!r}: letters, digits, '_', '.', '-' only")
    public, secret = zmq.curve_keypair()
    public_path = os.path.join(directory, f"{name}.key")
    secret_path = os.path.join(directory, f"{name}.key_secret")
    for path in (public_path, secret_path):
        if os.path.lexists(path):
            raise FileExistsError(f"{path} exists; not overwritten")
    head = "#   ZeroMQ CURVE {} certificate written by fastgo keys new\n\nmetadata\ncurve\n"
    _write_new(secret_path, (head.format("Secret") + f'    public-key = "{public.decode()}"\n'
                             f'    secret-key = "{secret.decode()}"\n').encode(), 0o600)
    try:
        _write_new(public_path, (head.format("Public") +
                                 f'    public-key = "{public.decode()}"\n').encode(), 0o644)
    except BaseException:
        os.unlink(secret_path)
        raise
    return public_path, secret_path


def _write_new(path, data, mode):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)                   # the umask must not widen or narrow it
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


# -- reading --------------------------------------------------------------------------------------

def _read_small(path) -> bytes:
    try:
        return read_bounded(path, MAX_KEY_FILE_BYTES)
    except OSError as err:
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: cannot read the key file: "
                            f"{err.strerror or err}") from None
    except ValueError:                        # a NUL byte in the path
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: not a usable key file path") from None


def _fields(data) -> dict:
    return {m.group(1).decode(): m.group(2) for m in _FIELD.finditer(data)}


def _z85(key, where) -> bytes:
    """`key` when it is 40 Z85 characters that decode to 32 bytes (a 5-character group can be
    in the alphabet and still exceed 2**32); CurveKeyError naming `where` otherwise."""
    if not _Z85.fullmatch(key):
        raise CurveKeyError(f"{escaped(where, SHOWN_CHARS)}: not a 40-character Z85 CURVE key")
    try:
        decoded = z85.decode(key)
    except Exception:                         # struct.error, ValueError, OverflowError
        decoded = None
    if decoded is None or len(decoded) != 32:
        raise CurveKeyError(f"{escaped(where, SHOWN_CHARS)}: a 40-character Z85 string that is not a "
                            f"CURVE key (it does not decode to 32 bytes)")
    return key


def read_secret_key(path) -> tuple[bytes, bytes]:
    """(public, secret) Z85 keys from a secret key file, which must be a regular file of at most
    MAX_KEY_FILE_BYTES, unreadable by group and others."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: cannot read the key file: "
                            f"{err.strerror or err}") from None
    except ValueError:                        # a NUL byte in the path
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: not a usable key file path") from None
    if stat.S_ISREG(mode) and mode & 0o077:
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: a secret key readable by group or others "
                            f"(mode {stat.S_IMODE(mode):04o}); chmod 600 it")
    data = _read_small(path)
    fields = _fields(data)
    if "secret-key" in fields:
        secret = _z85(fields["secret-key"], path)
    else:
        lines = data.strip().split(b"\n")
        secret = _z85(lines[0].strip() if lines else b"", path)
    try:
        public = zmq.curve_public(secret)
    except zmq.ZMQError as err:
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: not a usable CURVE secret key ({err})") from None
    if "public-key" in fields and fields["public-key"] != public:
        raise CurveKeyError(f"{escaped(path, SHOWN_CHARS)}: the public key does not belong to the secret key")
    return public, secret


def read_public_key(spec) -> bytes:
    """A Z85 public key given inline (40 characters) or by a key file (NAME.key, or a file whose
    first line is the key)."""
    spec = os.fspath(spec)
    raw = spec.encode("utf-8", errors="replace") if isinstance(spec, str) else spec
    if _Z85.fullmatch(raw) and not os.path.exists(spec):
        return _z85(raw, "inline key")
    data = _read_small(spec)
    fields = _fields(data)
    if "secret-key" in fields:             # secret keys stay on their host
        raise CurveKeyError(f"{escaped(spec, SHOWN_CHARS)}: a secret key file; give the public one "
                            f"(NAME.key)")
    if "public-key" in fields:
        return _z85(fields["public-key"], spec)
    lines = data.strip().split(b"\n")
    return _z85(lines[0].strip() if lines else b"", spec)


def allowed_keys(specs) -> set[bytes]:
    """The public keys named by `specs`: key files, folders (every *.key file in them) or Z85
    keys. At most MAX_ALLOWED_KEYS."""
    keys: set[bytes] = set()
    for spec in specs:
        if os.path.isdir(spec):
            names = sorted(n for n in os.listdir(spec) if n.endswith(".key"))
            if len(names) > MAX_ALLOWED_KEYS:
                raise CurveKeyError(f"{escaped(spec, SHOWN_CHARS)}: more than {MAX_ALLOWED_KEYS} key files")
            keys.update(read_public_key(os.path.join(spec, n)) for n in names)
        else:
            keys.add(read_public_key(spec))
        if len(keys) > MAX_ALLOWED_KEYS:
            raise CurveKeyError(f"more than {MAX_ALLOWED_KEYS} allowed keys")
    return keys


# -- sockets --------------------------------------------------------------------------------------

class _AllowList:
    """The ZAP callback: a client is let in when its public key is in `keys` (any key when
    `keys` is None)."""

    def __init__(self, keys):
        self.keys = None if keys is None else frozenset(keys)
        self.denied = 0

    def callback(self, domain, key):
        if self.keys is None or key in self.keys:
            return True
        self.denied += 1
        return False


_authenticators: dict = {}           # id(context) -> (ThreadAuthenticator, [_AllowList])
_auth_lock = threading.Lock()


def make_server(socket, secret_key_file, allowed_specs, *, what="server"):
    """Turns `socket` (not yet bound) into a CURVE server with the key pair in
    `secret_key_file`; clients must hold one of the keys `allowed_specs` names (ZAP denies any
    other; an empty list lets any client key in). Returns an object whose `denied` counts
    refused clients. Raises CurveKeyError."""
    public, secret = read_secret_key(secret_key_file)
    keys = allowed_keys(allowed_specs)
    if allowed_specs and not keys:
        raise CurveKeyError(f"{escaped(what, SHOWN_CHARS)}: curve_allowed names no public key")
    allow = _AllowList(keys if allowed_specs else None)
    domain = f"fastgo-{what}-{id(socket):x}"
    context = socket.context
    with _auth_lock:
        entry = _authenticators.get(id(context))
        if entry is None:
            # lazy: it imports asyncio (0.2 s), and only a server with CURVE keys starts one
            from zmq.auth.thread import ThreadAuthenticator
            auth = ThreadAuthenticator(context)
            auth.start()
            entry = _authenticators[id(context)] = (auth, [])
        auth, lists = entry
        auth.configure_curve_callback(domain=domain, credentials_provider=allow)
        lists.append(allow)
    socket.zap_domain = domain.encode()
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_server = True
    return allow


def make_client(socket, server_public_key, key_pair=None):
    """Makes `socket` (not yet connected) a CURVE client of the server with
    `server_public_key`, with `key_pair` (public, secret) or a fresh one."""
    public, secret = key_pair or zmq.curve_keypair()
    socket.curve_serverkey = server_public_key
    socket.curve_publickey = public
    socket.curve_secretkey = secret


def client_keys(key_file, server_key_spec, what):
    """(server public key or None, own key pair or None) from config values; CurveKeyError
    names `what` (the config keys)."""
    try:
        server = read_public_key(server_key_spec) if server_key_spec else None
        pair = read_secret_key(key_file) if key_file else None
    except CurveKeyError as err:
        raise CurveKeyError(f"{escaped(what, SHOWN_CHARS)}: {err}") from None
    return server, pair
