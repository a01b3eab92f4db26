"""Ctrl-C during a run is never lost: a KeyboardInterrupt that lands in a finalizer (where Python prints
"Exception ignored" and carries on, e.g. a ParquetWriter closing as a shard ends) is raised again at the
next batch (seen once on the Ray Ctrl-C test: the run went on to exit 0)."""

import os
import signal

import pytest

from auralgen.generation.run import Interrupts


class _SignalsInFinalizer:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs inside __del__: its exception is ignored


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the ignored exception, on purpose
def test_an_interrupt_swallowed_by_a_finalizer_is_raised_at_the_next_batch():
    before = signal.getsignal(signal.SIGINT)
    with Interrupts() as interrupts:
        batches = interrupts.checked(iter([1, 2, 3]))
        assert next(batches) == 1
        obj = _SignalsInFinalizer()
        del obj  # "Exception ignored in ... KeyboardInterrupt": Python carries on
        assert interrupts.seen
        with pytest.raises(KeyboardInterrupt):
            next(batches)
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_an_ignored_sigint_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Interrupts() as interrupts:
            os.kill(os.getpid(), signal.SIGINT)
            assert not interrupts.seen and list(interrupts.checked(iter([1, 2]))) == [1, 2]
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
