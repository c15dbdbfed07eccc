"""Config files and text into a validated `Config`: bounded reads, a nesting check before
tomllib, `--set section.key=value` overrides applied to the table before the schema check, and
the shipped configs found by name (`quickstart`, `9x9_cpu`, ...)."""
from __future__ import annotations

import dataclasses
import os
import re
import sys
import tomllib
import typing

import fastgo
from fastgo.files import read_bounded, reason
from rundata.config.fields import ConfigError, parse_section
from rundata.config.schema import Config

MAX_CONFIG_BYTES = 1 << 20     # a config file larger than this is refused unread
MAX_TOML_DEPTH = 32            # arrays and tables nested deeper are refused before parsing
OVERRIDE_SOURCE = "--set"      # errors about an overridden key name this as their source
_CONFIG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_OVERRIDE_KEY = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+")


def shipped_config_dirs() -> list[str]:
    """Folders that may hold the shipped configs, in search order: the installed package data
    (fastgo/configs/), then the source tree's configs/ beside the fastgo package."""
    package = os.path.dirname(os.path.abspath(fastgo.__file__))
    return [os.path.join(package, "configs"), os.path.join(os.path.dirname(package), "configs")]


def shipped_configs() -> dict[str, str]:
    """name -> path of every shipped config (NAME.toml); the first folder holding a name wins."""
    found = {}
    for directory in shipped_config_dirs():
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if name.endswith(".toml") and name[:-5] not in found and os.path.isfile(path):
                found[name[:-5]] = path
    return found


def resolve_config(name_or_path) -> str:
    """The config file `name_or_path` names: a path that exists, as given; else a bare name
    (letters, digits, '_', '.', '-'; '.toml' optional) of a shipped config, its path. Anything
    else is returned as given, for load_config to report. Raises ConfigError for a bare name
    that is not shipped, listing the shipped names."""
    text = os.fspath(name_or_path)
    if os.path.exists(text) or not _CONFIG_NAME.fullmatch(text):
        return text
    shipped = shipped_configs()
    name = text.removesuffix(".toml")
    if name in shipped:
        return shipped[name]
    names = sorted(shipped, key=lambda n: (n != "quickstart", n))
    listing = ", ".join(names) if names else "none found"
    raise ConfigError(f"unknown config {text!r} (shipped: {listing})")


_SPECIAL = re.compile(r"[#\"']")
_BRACKET = re.compile(r"[\[\]{}]")
# a decimal integer token of TOML (not part of a float, a date or a bare key)
_DECIMAL = re.compile(r"(?<![\w.:+-])[+-]?[0-9](?:_?[0-9])*(?![\w.:-])")
_MARK = "\x00fastgo-digits:"     # stands in for an integer tomllib cannot convert


def _code_spans(text: str):
    """(start, end) of each stretch of TOML `text` outside strings and comments, in order; an
    unclosed string ends the text. Linear."""
    i, start, n = 0, 0, len(text)
    while True:
        found = _SPECIAL.search(text, i)
        if found is None:
            yield start, n
            return
        i = found.start()
        yield start, i
        if text[i] == "#":
            end = text.find("\n", i)
            i = start = n if end < 0 else end
            continue
        quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else text[i]
        j = i + len(quote)
        while True:
            j = text.find(quote, j)
            if j < 0:
                return                   # unclosed string: tomllib reports it
            if quote[0] == '"' and _escaped(text, j):
                j += 1
                continue
            break
        i = start = j + len(quote)


def _toml_depth_ok(text: str, limit: int) -> bool:
    """False when brackets or braces outside strings and comments nest deeper than `limit`
    (tomllib recurses once per level: a few thousand levels end in RecursionError). Linear."""
    depth = 0
    for start, end in _code_spans(text):
        for bracket in _BRACKET.finditer(text, start, end):
            if bracket.group() in "[{":
                depth += 1
                if depth > limit:
                    return False
            else:
                depth = max(0, depth - 1)
    return True


def _escaped(text, at):
    backslashes = 0
    while at - backslashes - 1 >= 0 and text[at - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


class _HugeInteger(Exception):
    """An integer in TOML text with more digits than Python converts (sys.int_info's
    str_digits_check_threshold, 4300 by default): `key` (dotted, '' when not found), `digits`."""

    def __init__(self, key, digits):
        super().__init__(key)
        self.key = key
        self.digits = digits


def _toml_loads(text: str) -> dict:
    """tomllib.loads(text); an integer of too many digits to convert (a plain ValueError inside
    tomllib) raises _HugeInteger naming its key: the text is parsed again with each such
    integer outside strings and comments replaced by a marked string, which is then looked for."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except ValueError:
        pass
    limit = max(1, sys.get_int_max_str_digits() or 1)
    parts, last = [], 0
    for start, end in _code_spans(text):
        for token in _DECIMAL.finditer(text, start, end):
            digits = sum(c.isdigit() for c in token.group())
            if digits > limit:
                parts += [text[last:token.start()], f'"\\u0000fastgo-digits:{digits}"']
                last = token.end()
    try:
        table = tomllib.loads("".join(parts) + text[last:])
    except ValueError:
        table = {}
    stack = [("", table)]
    while stack:                         # depth first, in document order
        key, node = stack.pop()
        if isinstance(node, str) and node.startswith(_MARK):
            raise _HugeInteger(key, int(node[len(_MARK):]))
        items = (node.items() if isinstance(node, dict)
                 else ((f"[{i}]", v) for i, v in enumerate(node)) if isinstance(node, list) else ())
        children = [(f"{key}.{k}" if key and not k.startswith("[") else f"{key}{k}", v)
                    for k, v in items]
        stack.extend(reversed(children))
    raise _HugeInteger("", limit + 1)


def _huge_text(err: _HugeInteger) -> str:
    return f"an integer of {err.digits} digits is out of range"


def load_config(path, cls=Config, overrides=()):
    """Read a TOML file into `cls` (a frozen dataclass of sections), with `overrides` (see
    apply_overrides) applied first. The file must be a regular file of UTF-8 text, at most
    MAX_CONFIG_BYTES, nested at most MAX_TOML_DEPTH deep; anything else is a ConfigError naming
    the file. Time linear in the file."""
    path = str(path)
    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config: {reason(err)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start})") from None
    return loads_config(text, cls, source=path, overrides=overrides)


def loads_config(text: str, cls=Config, source="<string>", overrides=()):
    """A config from TOML text; the same limits and overrides as load_config (size in
    characters)."""
    table = _parse_toml(text, source)
    origins = apply_overrides(table, overrides)
    return parse_section(cls, table, source=source, origins=origins)


def apply_overrides(table: dict, overrides) -> dict:
    """Sets each "section.key=value" of `overrides` in the parsed TOML `table` (in place, in
    order; a deeper key such as server.checkpoints.current sets inside a table). The value is
    read as a TOML value (64, 0.5, true, "x", [8, 16], {a = 1}); text that is not a TOML value
    is taken as a string (cuda, tcp://127.0.0.1:5555). Returns {dotted key: OVERRIDE_SOURCE}
    for every key set or table made, so that errors about them name --set. Raises ConfigError
    for a malformed override or a key that goes through a value that is not a table."""
    origins: dict[str, str] = {}
    for item in overrides:
        key, sep, raw = str(item).partition("=")
        key = key.strip()
        if not sep or not _OVERRIDE_KEY.fullmatch(key):
            raise ConfigError(f"{OVERRIDE_SOURCE} {str(item)[:80]!r}: expected section.key=value")
        parts = key.split(".")
        node = table
        for depth, part in enumerate(parts[:-1], start=1):
            if part not in node:
                node[part] = {}
                origins.setdefault(".".join(parts[:depth]), OVERRIDE_SOURCE)
            node = node[part]
            if not isinstance(node, dict):
                raise ConfigError(f"{OVERRIDE_SOURCE} {key}: {'.'.join(parts[:depth])} is not a "
                                  f"table")
        node[parts[-1]] = _override_value(raw.strip(), key)
        origins[key] = OVERRIDE_SOURCE
    return origins


def _override_value(raw: str, key: str):
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{OVERRIDE_SOURCE} {key}: value longer than {MAX_CONFIG_BYTES} characters")
    if not _toml_depth_ok(raw, MAX_TOML_DEPTH):
        raise ConfigError(f"{OVERRIDE_SOURCE} {key}: arrays or tables nested deeper than "
                          f"{MAX_TOML_DEPTH}")
    try:
        parsed = _toml_loads("value = " + raw)
    except (tomllib.TOMLDecodeError, RecursionError):
        return raw
    except _HugeInteger as err:
        inner = err.key.partition("value")[2] if err.key.startswith("value") else ""
        raise ConfigError(f"{OVERRIDE_SOURCE} {key}{inner}: {_huge_text(err)}") from None
    return parsed["value"] if list(parsed) == ["value"] else raw


def _parse_toml(text: str, source: str) -> dict:
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: config larger than {MAX_CONFIG_BYTES} characters")
    if not _toml_depth_ok(text, MAX_TOML_DEPTH):
        raise ConfigError(f"{source}: arrays or tables nested deeper than {MAX_TOML_DEPTH}")
    try:
        return _toml_loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not valid TOML: {err}") from None
    except _HugeInteger as err:
        raise ConfigError(f"{source}: {err.key + ': ' if err.key else ''}{_huge_text(err)}") from None
    except RecursionError:
        raise ConfigError(f"{source}: arrays or tables nested too deep") from None


def setting_bounds(key: str):
    """(min, max) of config key 'SECTION.NAME' as the schema declares them (None
    where a side is open); KeyError for an unknown key."""
    section, _, name = key.partition(".")
    cls = typing.get_type_hints(Config)[section]
    meta = {f.name: f.metadata for f in dataclasses.fields(cls)}[name]
    return meta.get("min"), meta.get("max")


def check_setting_flag(flag: str, value, key: str):
    """ConfigError `FLAG: must be in MIN..MAX, got V` when `value` (an option that overrides
    config key `key`) lies outside that key's bounds in the schema; None passes."""
    if value is None:
        return
    low, high = setting_bounds(key)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{flag}: must be in {low}..{high} (as {key}), got {value}")
