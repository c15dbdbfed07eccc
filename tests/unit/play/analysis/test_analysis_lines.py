"""The analysis input's nesting bound: fastgo.bounded_json.nesting_depth and nesting agree with the
depth of the parsed value on any JSON text (hypothesis), strings with brackets and escapes inside
count for nothing, and the top-level id and the deep field are found without parsing."""
import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastgo.bounded_json import nesting_depth
from play.analysis.lines import nesting


def depth(value):
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


TEXT = st.text(alphabet='ab"\\[]{}:,\u00e9', max_size=8)
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(TEXT, inner, max_size=3), max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(VALUES)
@example({"a": "[[[[", "b": ["]]]\\"]})
@example(["\"[{", {"\\": []}])
def test_depth_of_any_json_text(value):
    text = json.dumps(value, ensure_ascii=False)
    assert nesting_depth(text) == depth(value)
    assert nesting(text, 100)[0] == depth(value)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60), TEXT, st.booleans())
def test_deep_field_and_id_are_named(levels, ident, id_first):
    deep = "[" * levels + "]" * levels
    parts = [f'"id":{json.dumps(ident)}', f'"moves":{deep}']
    text = "{" + ",".join(parts if id_first else parts[::-1]) + "}"
    deepest, field, found = nesting(text, limit=8)
    assert deepest == levels + 1
    if levels + 1 > 8:
        assert field == "moves" and found == ident
    else:
        assert field is None and found is None
