"""`fastgo cluster`'s line of what the server runs and why."""
from types import SimpleNamespace

from supervision.local_launcher import serving_line


def test_auto_names_the_backend_it_measured_and_why():
    line = serving_line(SimpleNamespace(backend="auto"), {"runner": {"backend": "openvino-int8"}})
    assert line.startswith("server backend openvino-int8 (the fastest on this CPU")
    assert "logs/serve.log" in line


def test_a_configured_backend_is_named_as_configured_and_odd_stats_do_not_fail():
    assert "server.backend = 'onnx-fp32'" in serving_line(SimpleNamespace(backend="onnx-fp32"),
                                                          {"runner": {"backend": "onnx-fp32"}})
    assert serving_line(SimpleNamespace(backend="auto"), None).startswith("server backend ? (")
    long = serving_line(SimpleNamespace(backend="auto"), {"runner": {"backend": "x" * 1000}})
    assert "x" * 40 in long and "x" * 41 not in long
