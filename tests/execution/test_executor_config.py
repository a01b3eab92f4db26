"""The `executor` config group: local (default) or ray, chosen on the command line, left out of the fingerprint."""

from __future__ import annotations

import importlib.util

import pytest

from auralgen.config import config_record, validate
from auralgen.core.errors import ParameterError
from auralgen.execution import LocalPoolExecutor, SerialExecutor
from auralgen.generation.run import default_executor
from tests.support.builders import small_run


def test_local_is_the_default_and_ray_is_one_override():
    local = small_run("task=pitch_relative", workers=2)
    assert local.executor.kind == "local" and local.executor.address is None
    assert isinstance(default_executor(local, 100), LocalPoolExecutor)
    assert isinstance(default_executor(local, 1), SerialExecutor)  # one item: no pool
    overrides = ("task=pitch_relative", "executor=ray", "executor.address=auto")
    if importlib.util.find_spec("ray") is None:  # make test: ray is the optional extra `auralgen[ray]`
        with pytest.raises(
            ParameterError, match=r"^executor=ray needs the optional dependency: pip install 'auralgen\[ray\]'$"
        ):
            small_run(*overrides, workers=2)
        return
    ray = small_run(*overrides, workers=2)  # make test-slow installs the ray extra
    assert (ray.executor.kind, ray.executor.address) == ("ray", "auto")
    assert config_record(ray) == config_record(local)  # where items render never changes what they hold


@pytest.mark.parametrize(
    ("executor", "message"),
    [
        ({"kind": "dask"}, "executor.kind='dask' is unsupported; allowed: local, ray"),
        ({"kind": "ray", "nodes": 3}, "executor.nodes: unknown key"),
    ],
)
def test_a_bad_executor_is_one_line(executor, message):
    with pytest.raises(ParameterError, match=message):
        validate({"task": {"name": "pitch_relative"}, "executor": executor})


@pytest.mark.parametrize("workers", [0, -2, 1.5, True, "2"])
def test_a_pool_of_no_workers_is_refused_in_one_line(workers):
    """Built directly (the CLI sends workers <= 1 to the serial executor): 0 workers waited on nothing."""
    with pytest.raises(ParameterError, match=r"workers=.* is invalid; allowed: an integer >= 1"):
        LocalPoolExecutor(workers)
    assert LocalPoolExecutor(2).workers == 2
