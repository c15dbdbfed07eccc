"""Fuzzing the backend cache's reader (hypothesis, bounded): any bytes, any JSON, and valid
caches with one value replaced. parse_cache either refuses with CacheInvalid (a ValueError) or
returns entries every consumer can use: a choice this install runs, rows that are errors or
carry a finite speed, so that ranking and picking never fail."""
import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from network.backend_cache import CacheInvalid, parse_cache
from network.backend_choice import pick, ranked
from network.backend_support import ALL_BACKENDS, TORCH_FP32, available_backends

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))

ROW = {"evals_per_s": 10.0, "ok": True, "top1": 1.0, "value_mae": 0.0, "policy_kl": 0.0,
       "max_logit_err": 0.0, "checks": {"reference": {"top1": 1.0, "value_mae": 0.0}}}
VALID = {"k": {"choice": TORCH_FP32, "time": 1.0,
               "table": {TORCH_FP32: ROW, "onnx-int8": {"error": "RuntimeError: x", "ok": False}}}}
# every place in VALID a value can be replaced: paths of keys
PLACES = [("k",), ("k", "choice"), ("k", "time"), ("k", "table"), ("k", "table", TORCH_FP32),
          ("k", "table", TORCH_FP32, "evals_per_s"), ("k", "table", TORCH_FP32, "ok"),
          ("k", "table", TORCH_FP32, "top1"), ("k", "table", TORCH_FP32, "checks"),
          ("k", "table", TORCH_FP32, "checks", "reference"),
          ("k", "table", TORCH_FP32, "checks", "reference", "top1"),
          ("k", "table", "onnx-int8", "error"), ("k", "table", "onnx-int8", "ok")]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
    | st.sampled_from(list(ALL_BACKENDS)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=8) | st.sampled_from(list(ALL_BACKENDS)), inner, max_size=4),
    max_leaves=12)


def check_usable(entries):
    here = set(available_backends())
    for key, entry in entries.items():
        assert isinstance(key, str) and entry["choice"] in here
        table = entry["table"]
        for name, row in table.items():
            assert name in ALL_BACKENDS and isinstance(row["ok"], bool)
            if "error" not in row:
                assert 0.0 <= row["evals_per_s"] < float("inf")
        names = ranked(table)
        assert names[-1] == TORCH_FP32 or TORCH_FP32 not in names
        pick(table)


def parse(data: bytes):
    try:
        entries = parse_cache(data)
    except CacheInvalid:
        return
    check_usable(entries)


@FUZZ
@given(data=st.binary(max_size=200))
@example(data=b"[" * 200_000)
@example(data=b"\xff\xfe{}")
@example(data=b'{"k": {"choice": "torch-fp32", "table": {"torch-fp32": {"ok": true, '
               b'"evals_per_s": ' + b"9" * 5000 + b"}}}}")
def test_fuzz_cache_bytes(data):
    parse(data)


@FUZZ
@given(doc=JSON_VALUES)
@example(doc=[])
@example(doc={"k": {"choice": TORCH_FP32, "table": []}})
@example(doc={"k": {"choice": TORCH_FP32, "table": None}})
@example(doc={"k": {"choice": TORCH_FP32, "table": {TORCH_FP32: "fast"}}})
def test_fuzz_cache_documents(doc):
    parse(json.dumps(doc).encode())


@FUZZ
@given(place=st.sampled_from(PLACES), value=JSON_VALUES)
@example(place=("k", "table", TORCH_FP32, "evals_per_s"), value="fast")
@example(place=("k", "table", TORCH_FP32, "evals_per_s"), value=float("inf"))
@example(place=("k", "table"), value=[])
def test_fuzz_one_value_of_a_valid_cache(place, value):
    doc = json.loads(json.dumps(VALID))
    node = doc
    for part in place[:-1]:
        node = node[part]
    node[place[-1]] = value
    parse(json.dumps(doc).encode())


def test_the_depth_bound_counts_only_brackets_outside_strings():
    """MAX_CACHE_DEPTH (8) levels are parsed (then refused as not an object), 9 are refused
    unparsed; brackets inside strings do not count."""
    cases = {"[" * 8 + "]" * 8: True, "[" * 9 + "]" * 9: False,
             '["' + "[" * 20 + '"]': True, '{"a": "\\"' + "[" * 20 + '"}': True,
             '[[[[[[[["\\\\"[' + "]" * 9: False}
    for text, parsed in cases.items():
        try:
            parse_cache(text.encode())
        except CacheInvalid as err:
            assert ("nested deeper than 8" not in str(err)) is parsed, (text, err)
