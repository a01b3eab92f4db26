"""executor=ray without a cluster: the missing optional dependency and bad settings are one line each.
(The cluster behaviour is tested in test_ray_cluster.py, marked slow.)"""

import sys

import pytest

from auralgen.core.errors import ParameterError
from auralgen.execution import ray as ray_executor


def test_without_ray_installed_the_error_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ParameterError) as err:
        ray_executor.RayExecutor()
    assert str(err.value) == "executor=ray needs the optional dependency: pip install 'auralgen[ray]'"


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"num_cpus_per_task": 0}, r"^executor.num_cpus_per_task=0; allowed: a number > 0$"),
        ({"max_retries": -1}, r"^executor.max_retries=-1; allowed: an integer >= 0$"),
    ],
)
def test_bad_settings_are_refused_before_ray_is_imported(monkeypatch, kw, message):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ParameterError, match=message):
        ray_executor.RayExecutor(**kw)


def test_workers_get_one_thread_and_the_callers_numba_cache(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/shared/numba")
    assert ray_executor.worker_env() == {"PRA_NUM_THREADS": "1", "NUMBA_CACHE_DIR": "/shared/numba"}
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert ray_executor.worker_env()["NUMBA_CACHE_DIR"].endswith("auralgen-numba")
