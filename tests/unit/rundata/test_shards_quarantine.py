"""Shard file names a careless user or an attacker can make (rundata.shards.quarantine,
fastgo.files.printable): bytes that are not UTF-8 and names at the file-system limit are
quarantined with their reason file, and logging them never fails."""
import logging
import os

import pytest

from fastgo.files import printable
from rundata.shards import MAX_QUARANTINE_NAME, list_shards, quarantine


@pytest.mark.parametrize("raw_name", [b"bad-\xff\xfe.shard", b"x" * 245 + b".shard",
                                      "\u00e9l\u00e8ve.shard".encode()])
def test_a_bad_shard_is_quarantined_with_its_reason_whatever_its_name(tmp_path, raw_name):
    shards, quarantined = tmp_path / "shards", tmp_path / "quarantine"
    shards.mkdir()
    path = os.path.join(os.fsencode(shards), raw_name)
    with open(path, "wb") as handle:
        handle.write(b"not a shard")
    [listed] = list_shards(str(shards))
    target = quarantine(os.path.join(str(shards), listed), str(quarantined),
                        f"{os.path.join(str(shards), listed)}: no trailer")
    assert not os.listdir(shards)
    assert os.path.exists(target) and os.path.exists(target + ".reason")
    assert len(os.fsencode(os.path.basename(target + ".reason"))) <= 255
    reason = open(target + ".reason", encoding="utf-8").read()
    assert "no trailer" in reason
    if len(raw_name) > MAX_QUARANTINE_NAME or b"\xff" in raw_name:
        assert os.path.basename(target).startswith("renamed-")
        assert "original name" in reason
    else:
        assert os.fsencode(os.path.basename(target)) == raw_name


def test_printable_names_can_be_logged_to_a_utf8_file(tmp_path):
    name = os.fsdecode(b"bad-\xff.shard")
    with pytest.raises(UnicodeEncodeError):
        name.encode("utf-8")                           # what made logging fail
    handler = logging.FileHandler(tmp_path / "log", encoding="utf-8")
    logger = logging.getLogger("test-file-names")
    logger.addHandler(handler)
    errors = []
    handler.handleError = lambda record: errors.append(record)
    try:
        logger.warning("quarantined %s", printable(name))
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert not errors
    assert "bad-\\udcff.shard" in (tmp_path / "log").read_text(encoding="utf-8")
