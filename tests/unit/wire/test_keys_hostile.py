"""CURVE key inputs that look right and are not (wire.keys): 40 characters of the Z85
alphabet that do not decode to a key, inline or in a file, and NUL bytes in key paths. Each is a
CurveKeyError naming the input (the roles print it as one line), never another exception."""
import os

import pytest
import zmq

from wire.keys import CurveKeyError, allowed_keys, read_public_key, read_secret_key

UNDECODABLE = "#" * 40        # every 5-character group is above 2**32 - 1


def test_a_good_key_still_reads_inline_and_from_files(tmp_path):
    public, secret = zmq.curve_keypair()
    assert read_public_key(public.decode()) == public
    (tmp_path / "a.key").write_bytes(b'curve\n    public-key = "' + public + b'"\n')
    path = tmp_path / "a.key_secret"
    path.write_bytes(b'curve\n    public-key = "' + public + b'"\n    secret-key = "' + secret + b'"\n')
    os.chmod(path, 0o600)
    assert read_public_key(tmp_path / "a.key") == public
    assert read_secret_key(path) == (public, secret)
    assert allowed_keys([str(tmp_path)]) == {public}


def test_undecodable_keys_are_refused_inline_and_in_files(tmp_path):
    with pytest.raises(CurveKeyError, match="does not decode"):
        read_public_key(UNDECODABLE)
    (tmp_path / "bad.key").write_text(f'curve\n    public-key = "{UNDECODABLE}"\n')
    with pytest.raises(CurveKeyError, match="bad.key.*does not decode"):
        read_public_key(tmp_path / "bad.key")
    with pytest.raises(CurveKeyError, match="does not decode"):
        allowed_keys([str(tmp_path)])
    secret = tmp_path / "bad.key_secret"
    secret.write_text(f'curve\n    secret-key = "{UNDECODABLE}"\n')
    os.chmod(secret, 0o600)
    with pytest.raises(CurveKeyError, match="does not decode"):
        read_secret_key(secret)


@pytest.mark.parametrize("reader", [read_public_key, read_secret_key,
                                    lambda p: allowed_keys([p])])
def test_a_nul_byte_in_a_key_path_is_a_key_error(tmp_path, reader):
    with pytest.raises(CurveKeyError, match="not a usable key file path"):
        reader(str(tmp_path / "a\x00b.key"))


@pytest.mark.parametrize("reader", [read_public_key, read_secret_key, allowed_keys])
@pytest.mark.parametrize("spec", ["#" * 40000, "k" * 5000 + ".key", "line\nbreak\x1b[2J.key"],
                         ids=["inline-40000", "name-5000", "control-characters"])
def test_an_error_names_a_long_or_unprintable_input_in_one_short_printable_line(tmp_path, reader,
                                                                                spec):
    given = spec if spec.startswith("#") else str(tmp_path / spec)
    with pytest.raises(CurveKeyError) as caught:
        reader([given]) if reader is allowed_keys else reader(given)
    message = str(caught.value)
    assert len(message) < 500 and message.isprintable(), message
    if len(spec) > 1000:
        assert "characters)" in message          # says how long the input was
