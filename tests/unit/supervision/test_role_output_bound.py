"""A child's output file (RUN/logs/ROLE.out) stays bounded over restarts: past
supervision.role_process.MAX_OUT_BYTES at a start it becomes ROLE.out.1 and a new one begins."""
from supervision import role_process
from supervision.role_process import RoleProcess

MODULE = "this_module_does_not_exist_here"     # python -m of it: one line on stderr, exit 1


def _start(out):
    child = RoleProcess([], out, module=MODULE).start()
    assert child.wait(30.0) is not None
    return child


def test_a_child_output_past_its_bound_is_moved_aside_at_the_next_start(tmp_path, monkeypatch):
    monkeypatch.setattr(role_process, "MAX_OUT_BYTES", 1000)
    out = tmp_path / "train.out"
    out.write_bytes(b"an earlier start\n" * 50)                 # 850 bytes: under the bound
    _start(out)
    grown = out.read_bytes()
    assert grown.startswith(b"an earlier start\n") and MODULE.encode() in grown[850:]
    assert not (tmp_path / "train.out.1").exists()
    out.write_bytes(b"#" * 1500)                                 # over the bound
    _start(out)
    assert (tmp_path / "train.out.1").read_bytes() == b"#" * 1500
    fresh = out.read_bytes()
    assert MODULE.encode() in fresh and b"#" not in fresh and len(fresh) < 1000
