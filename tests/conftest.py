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


def pytest_terminal_summary(terminalreporter):
    """One line for the peer interop tests skipped because the peers' clones are absent (never a silent skip)."""
    from tests.support.peers import ENV, SKIP_MARK, shown_dir

    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIP_MARK in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(
            f"peer interop: {len(skipped)} tests skipped, the peers' code is not in {shown_dir()}/ "
            f"(run `make peers`, which needs GitHub, or set {ENV}=<folder of clones>)",
            yellow=True,
        )
