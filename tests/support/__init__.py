"""Test support (never shipped in the wheel): builders of small runs, the test chat server, the former
binaural render. Tests import it as ``tests.support.<module>``; pytest puts the repository root on
``sys.path`` (``pythonpath`` in pyproject.toml), bench scripts insert it themselves."""
