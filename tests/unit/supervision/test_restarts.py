"""The restart policy both backends share: back-off doubling to its cap, giving up after
max_restarts within the window, the reset after a healthy minute, the startup grace of the stuck
rule, the bound on a role that says it is busy."""
from types import SimpleNamespace

from supervision.restarts import HEALTHY_S, STARTUP_S, Backoff, RestartPolicy

CC = SimpleNamespace(restart_window_s=100.0, max_restarts=3, backoff_s=0.5, backoff_max_s=1.5,
                     stuck_seconds=10.0, busy_limit_s=900.0, on_disk_full="wait")


def role():
    return SimpleNamespace(role="selfplay-w0", backoff=Backoff(), log_path="L.log", out_path="L.out")


def test_backoff_doubles_to_its_cap_and_the_fourth_restart_in_the_window_stops_the_cluster():
    lines = []
    policy, w0 = RestartPolicy(CC, lines.append), role()
    delays = []
    for now in (0.0, 1.0, 2.0):
        assert policy.restart(w0, "exited with status 1", now=now) is None
        delays.append((w0.backoff.delay, w0.backoff.next_start))
    # 0.5, then 2 x 0.5 = 1.0, then min(1.5, 2 x 1.0) = 1.5; each start after now + delay
    assert delays == [(0.5, 0.5), (1.0, 2.0), (1.5, 3.5)]
    assert w0.backoff.count == 3 and lines[-1] == ("selfplay-w0 exited with status 1; restart 3 "
                                                   "in 1.5 s (log L.log)")
    failed = policy.restart(w0, "exited with status 1", now=3.0)
    assert failed == ("selfplay-w0 keeps failing (exited with status 1; 4 times within 100 s): "
                      "see L.log and L.out")
    assert w0.backoff.count == 3 and len(lines) == 3          # not counted, not logged
    # at 101.5 the restarts at 0 and 1 are over 100 s old: one recent one left, so it restarts,
    # still at the capped back-off
    assert policy.restart(w0, "exited with status 1", now=101.5) is None
    assert w0.backoff.count == 4 and list(w0.backoff.recent) == [2.0, 101.5]
    assert (w0.backoff.delay, w0.backoff.next_start) == (1.5, 103.0)


def test_a_healthy_minute_resets_the_backoff():
    policy, w0 = RestartPolicy(CC, lambda line: None), role()
    policy.restart(w0, "stuck", now=0.0)
    policy.healthy(w0.backoff, started=0.5, now=0.5 + HEALTHY_S)       # not over the minute yet
    assert w0.backoff.delay == 0.5
    policy.healthy(w0.backoff, started=0.5, now=0.6 + HEALTHY_S)
    assert w0.backoff.delay == 0.0
    policy.restart(w0, "stuck", now=200.0)
    assert w0.backoff.delay == CC.backoff_s                            # starts over at backoff_s


def test_stuck_rule_gives_a_role_before_its_first_heartbeat_the_startup_grace():
    policy = RestartPolicy(CC, lambda line: None)
    assert policy.stuck(10.1, beaten=True) and not policy.stuck(10.0, beaten=True)
    assert not policy.stuck(STARTUP_S, beaten=False) and policy.stuck(STARTUP_S + 0.1, beaten=False)


def test_a_role_busy_past_the_bound_is_restarted_with_a_line_naming_it_and_the_setting():
    lines = []
    policy, train = RestartPolicy(CC, lines.append), role()
    train.role = "train"
    # first seen busy at 100 (start token 1): within the bound up to 100 + 900 = 1000
    assert policy.busy_past(train, "compiling the training step", 1, now=100.0) is None
    assert policy.busy_past(train, "compiling the training step", 1, now=1000.0) is None
    why = policy.busy_past(train, "compiling the training step", 1, now=1000.5)
    assert why == ("said it was busy (compiling the training step) for 900 s, past "
                   "cluster.busy_limit_s = 900 s; killed")
    assert policy.restart(train, why, now=1000.5) is None
    assert lines == ["train said it was busy (compiling the training step) for 900 s, past "
                     "cluster.busy_limit_s = 900 s; killed; restart 1 in 0.5 s (log L.log)"]
    # the restart starts the count over: the next start busy at 1001 is within its bound
    assert policy.busy_past(train, "compiling the training step", 2, now=1001.0) is None
    assert policy.busy_past(train, "compiling the training step", 2, now=1900.0) is None


def test_a_busy_spell_ends_when_the_role_is_not_busy_and_spans_a_change_of_what_it_does():
    policy, serve = RestartPolicy(CC, lambda line: None), role()
    assert policy.busy_past(serve, "timing fp32", 7, now=0.0) is None
    assert policy.busy_past(serve, None, 7, now=800.0) is None           # its step ended
    assert policy.busy_past(serve, "timing fp32", 7, now=850.0) is None  # a new spell at 850
    assert policy.busy_past(serve, "timing int8", 7, now=1750.0) is None  # 900 s: not over
    assert policy.busy_past(serve, "timing int8", 7, now=1751.0) is not None
    # a new start (another token) without a restart counted, e.g. one the launcher did not
    # see end: its spell starts at its first sight
    assert policy.busy_past(serve, "timing int8", 8, now=1752.0) is None


def test_counts_and_the_refusal_message():
    a, b = role(), role()
    b.role, b.backoff.count = "train", 2
    assert RestartPolicy.counts([a, b]) == {"train": 2}
    assert RestartPolicy.refused(a, "bad key", " on node 10.0.0.2") == \
        "selfplay-w0 refused to run (exit status 2): bad key (see L.out on node 10.0.0.2)"
