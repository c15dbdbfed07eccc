"""The evaluator's CPU budget (evaluation.budget) with injected clocks: the share used, the wait
that brings it back within the budget, and figures carried over a restart."""
import pytest

from evaluation.budget import CpuBudget, process_cpu_s


class Clock:
    """A settable clock: clock() -> its value in seconds."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self):
        return self.value


def test_share_and_wait():
    cpu, wall = Clock(50.0), Clock(1000.0)          # readings at the start are the zero
    budget = CpuBudget(0.2, cpu_clock=cpu, wall_clock=wall)
    assert budget.used_share() == 0.0 and budget.wait_s() == 0.0   # nothing used yet
    cpu.value, wall.value = 50.0 + 30.0, 1000.0 + 60.0       # 30 s of CPU in 60 s: 0.5
    assert budget.used_share() == pytest.approx(0.5)
    # within 0.2 once 30 / (60 + w) = 0.2: w = 30 / 0.2 - 60 = 90 s
    assert budget.wait_s() == pytest.approx(90.0)
    wall.value += 90.0
    assert budget.wait_s() == 0.0 and budget.used_share() == pytest.approx(0.2)
    wall.value += 100.0                              # idle time is credit: 30 / 250
    assert budget.wait_s() == 0.0 and budget.used_share() == pytest.approx(0.12)
    assert budget.figures() == {"cpu_share": 0.12, "cpu_budget": 0.2, "eval_cpu_s": 30.0,
                                "eval_wall_s": 250.0}


def test_carried_over_a_restart():
    # an earlier life used 100 s of CPU in 400 s; this one 20 s in 100 s: 120 / 500 = 0.24
    cpu, wall = Clock(0.0), Clock(0.0)
    budget = CpuBudget(0.2, cpu_clock=cpu, wall_clock=wall, carried_cpu_s=100.0,
                       carried_wall_s=400.0)
    assert budget.wait_s() == pytest.approx(100.0 / 0.2 - 400.0)      # 100 s
    cpu.value, wall.value = 20.0, 100.0
    assert budget.used_share() == pytest.approx(0.24)
    assert budget.wait_s() == pytest.approx(120.0 / 0.2 - 500.0)      # 100 s
    assert budget.cpu_s() == 120.0 and budget.wall_s() == 500.0
    # clocks never run backwards into negative figures; bad carried figures count as 0
    cpu.value, wall.value = -5.0, -5.0
    assert budget.cpu_s() == 100.0 and budget.wall_s() == 400.0
    assert CpuBudget(1.0, cpu_clock=cpu, wall_clock=wall, carried_cpu_s=-3).cpu_s() == 0.0


def test_share_must_be_positive():
    for share in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="share"):
            CpuBudget(share)


def test_process_cpu_counts_this_process():
    before = process_cpu_s()
    total = 0
    while process_cpu_s() - before < 0.05:       # busy work shows as CPU time
        total += sum(range(1000))
    assert process_cpu_s() > before


def test_a_running_child_is_counted_as_it_goes_and_once_after():
    """A GTP engine's CPU counts while it plays (from /proc), not only once closed, and a
    child waited for is not counted twice."""
    import subprocess
    import sys

    from evaluation.budget import live_children_cpu_s, process_cpu_s

    before = process_cpu_s()
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.6: pass\n"
                              "print('burnt', flush=True)\nsys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "burnt\n"      # the child has burnt its 0.6 s
        assert live_children_cpu_s() >= 0.55
        running = process_cpu_s() - before
        assert running >= 0.55
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    after = process_cpu_s() - before
    assert running - 0.05 <= after <= running + 0.5     # moved to RUSAGE_CHILDREN, not doubled
