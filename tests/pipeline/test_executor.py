"""The local executor: results in input order, bounded look-ahead, errors back within seconds,
a dead worker is an error (never a wait), and cancel leaves no process behind."""

import os
import time

import pytest

from auralgen.execution import LocalPoolExecutor, SerialExecutor


def slow_square(x):
    time.sleep(0.05 * (x % 3))
    return x * x


def fail_at_5(x):
    if x == 0:
        time.sleep(300)  # the head of the queue never finishes in time
    if x == 5:
        raise ValueError("unit 5 is bad")
    return x


def die_at_3(x):
    if x == 3:
        os._exit(9)
    return x


@pytest.mark.parametrize("executor", [SerialExecutor(), LocalPoolExecutor(2)], ids=["serial", "pool"])
def test_results_come_in_input_order(executor):
    try:
        assert list(executor.map_ordered(slow_square, range(20), max_ahead=4)) == [x * x for x in range(20)]
    finally:
        executor.close()


def test_a_worker_error_is_raised_within_seconds_and_cancel_kills_the_workers():
    ex = LocalPoolExecutor(2)
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="unit 5 is bad"):
        list(ex.map_ordered(fail_at_5, range(10), max_ahead=8))
    assert time.monotonic() - t0 < 30  # a hang guard: GRACE_S after the error, not the head unit's 300 s
    procs = list(ex._procs)
    ex.close(cancel=True)
    assert procs and not any(p.is_alive() for p in procs)


def test_a_dead_worker_is_an_error_not_a_wait():
    ex = LocalPoolExecutor(2)
    try:
        with pytest.raises(RuntimeError, match=r"worker process died \(exit code 9\)"):
            list(ex.map_ordered(die_at_3, range(10), max_ahead=4))
    finally:
        ex.close(cancel=True)


def slow_first(x):
    time.sleep(1.5 if x == 0 else 0.02)
    return os.getpid()


def test_a_slow_unit_does_not_hold_back_the_units_queued_behind_it():
    """Units go to a worker with fewer than DEPTH outstanding: while one worker renders the slow unit 0,
    the other takes the rest of the window. Queued at send time (the old dispatch), the slow worker held
    half the window (8 of 16) and the other one idled once its half was done."""
    ex = LocalPoolExecutor(2)
    try:
        pids = list(ex.map_ordered(slow_first, range(16), max_ahead=16))
    finally:
        ex.close()
    # the slow worker took one more unit (DEPTH 2) before unit 0 ended; the other rendered the rest of the window
    assert sum(p == pids[0] for p in pids[1:14]) <= 1, pids
