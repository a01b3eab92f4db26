"""Generation processes tune glibc's allocator (generation/run.py::tune_allocator): the settings take."""

import importlib
import platform


def test_allocator_settings_take_on_glibc():
    run = importlib.import_module("auralgen.generation.run")
    took = run.tune_allocator()
    assert took is (platform.libc_ver()[0] == "glibc")  # glibc accepts both; elsewhere nothing is changed
