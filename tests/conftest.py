import os
import signal

os.environ.setdefault("PRA_NUM_THREADS", "1")


def pytest_configure(config):
    """A harness that starts the tests in the background without job control (``make test &`` in a script)
    leaves SIGINT ignored, and an ignored signal stays ignored in every child process: the Ctrl-C tests
    would fail for the harness's sake (their programs never see the signal). Restore Python's own handler,
    which an interactive start has; a handler, unlike SIG_IGN, is reset to the default in an exec'd child."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
