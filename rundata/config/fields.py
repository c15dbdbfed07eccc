"""How a config section is declared and checked: `setting(...)` fields on frozen dataclasses,
`parse_section` that builds one from a TOML table (keys, types, bounds, an Enum's values, then
the section's own `check()`), `to_dict` back to plain TOML data. Every refusal is a
`ConfigError` naming the key.
"""
from __future__ import annotations

import dataclasses
import enum
import math
import re
import types
import typing
from dataclasses import field
from typing import Any, Literal


class ConfigError(ValueError):
    """A config that cannot be used; the message names the source and the key."""


# an integer setting without bounds of its own still lies in these (what 64 bits hold)
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1


def setting(default, *, min=None, max=None, pattern=None, doc=""):
    """A dataclass field with a default and the bounds the loader enforces.

    min/max bound numbers (inclusive; each element of a tuple); pattern is a regular
    expression a string must match in full. Whatever the bounds, an integer lies in
    INT_MIN..INT_MAX and a float is finite.
    """
    metadata = {"min": min, "max": max, "pattern": pattern, "doc": doc}
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple or a default_factory for mutable defaults")
    return field(default=default, metadata=metadata)


def mapping_setting(default=None, *, doc=""):
    """A dataclass field holding a str -> value table (a TOML table)."""
    default = dict(default or {})
    return field(default_factory=lambda: dict(default), metadata={"doc": doc})


def parse_section(cls, table, *, source="<dict>", prefix="", origins=None):
    """Build dataclass `cls` from a dict, checking keys, types and bounds; `prefix` names the
    section in messages (e.g. 'server'). A key in `cls.RENAMED_KEYS` (old name -> what replaced
    it) is refused with its replacement named. `origins` maps dotted keys to the source named in
    errors about them and everything below them (e.g. {"server.max_batch": "--set"}); other
    keys are blamed on `source`."""
    def where(key):
        return f"{prefix}.{key}" if prefix else key

    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {prefix or 'config'}: expected a table, got {_kind(table)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(table) - set(fields))
    renamed = getattr(cls, "RENAMED_KEYS", {})
    for name in unknown:
        if name in renamed:
            key = where(name)
            raise ConfigError(f"{_origin(key, source, origins)}: {shown(key)} is no longer a "
                              f"key: use {renamed[name]}")
    if unknown:
        key = where(unknown[0])
        raise ConfigError(f"{_origin(key, source, origins)}: unknown key {shown(key)} "
                          f"(known: {', '.join(sorted(fields))}); a typo?")
    values = {}
    for name, value in table.items():
        values[name] = _convert(hints[name], value, fields[name], source, where(name), origins)
    try:
        obj = cls(**values)
        check = getattr(obj, "check", None)
        if check is not None:
            check()
    except ConfigError as err:
        # a check's message starts with the key it is about: blame that key's origin
        named = str(err).split(":", 1)[0]
        blame = (_origin(where(named), source, origins)
                 if re.split(r"[.\[]", named, maxsplit=1)[0] in fields else source)
        raise ConfigError(f"{blame}: {prefix + '.' if prefix else ''}{err}") from None
    return obj


def to_dict(obj) -> dict:
    """A config dataclass as plain TOML-able data (tuples become lists)."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            value = to_dict(value)
        elif isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, dict):
            value = dict(value)
        out[f.name] = value
    return out


def _kind(value):
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def shown(value, limit: int = 100) -> str:
    """`value` as an error message shows it: its repr, at most `limit` characters; an integer
    too long to print (Python's int-string limit) by its number of digits."""
    if _huge(value):
        return (f"{'a negative' if value < 0 else 'an'} integer of about "
                f"{int(value.bit_length() * 0.30103)} digits")
    try:
        text = repr(value)
    except ValueError:                  # a container holding such an integer
        return f"{_kind(value)} holding a number too large to show"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _huge(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000


def _origin(key, source, origins):
    """The source to blame for `key`: the origin of `key` or of a key above it, else `source`."""
    for prefix, origin in (origins or {}).items():
        if key == prefix or key.startswith((prefix + ".", prefix + "[")):
            return origin
    return source


def _convert(hint, value, fld, source, key, origins=None):
    source = _origin(key, source, origins)

    def fail(expected):
        got = shown(value) if _huge(value) else f"{_kind(value)} {shown(value)}"
        raise ConfigError(f"{source}: {key}: expected {expected}, got {got}")

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return parse_section(hint, value, source=source, prefix=key, origins=origins)
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{source}: {key}: must be one of {list(args)}, got {shown(value)}")
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):     # a variant (fastgo.variants)
        names = [member.value for member in hint]
        if not isinstance(value, str) or value not in names:
            raise ConfigError(f"{source}: {key}: must be one of {names}, got {shown(value)}")
        return hint(value)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        for option in options:
            try:
                return _convert(option, value, fld, source, key, origins)
            except ConfigError:
                continue
        fail(" or ".join(getattr(o, "__name__", str(o)) for o in options))
    if origin is tuple:
        if not isinstance(value, list):
            fail("an array")
        inner = args[0] if args else Any
        return tuple(_convert(inner, item, fld, source, f"{key}[{i}]", origins)
                     for i, item in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            fail("a table")
        inner = args[1] if len(args) == 2 else Any
        return {k: _convert(inner, v, fld, source, f"{key}.{k}", origins) for k, v in value.items()}
    if hint is Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            fail("true or false")
    elif hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail("an integer")
    elif hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("a number")
        try:
            value = float(value)
        except OverflowError:           # an integer beyond float's range
            fail("a finite number")
        if value != value:
            fail("a number, not nan")
        if math.isinf(value):
            fail("a finite number")
    elif hint is str:
        if not isinstance(value, str):
            fail("a string")
    else:
        raise TypeError(f"config type {hint!r} of {key} is not supported by the loader")
    meta = fld.metadata or {}
    low, high, pattern = meta.get("min"), meta.get("max"), meta.get("pattern")
    if hint is int:
        low = INT_MIN if low is None else low
        high = INT_MAX if high is None else high
    if low is not None and value < low:
        raise ConfigError(f"{source}: {key}: must be >= {low}, got {shown(value)}")
    if high is not None and value > high:
        raise ConfigError(f"{source}: {key}: must be <= {high}, got {shown(value)}")
    if pattern is not None and not re.fullmatch(pattern, value):
        raise ConfigError(f"{source}: {key}: {shown(value)} does not match {pattern!r}")
    return value
