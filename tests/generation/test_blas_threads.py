"""Generation processes run one BLAS thread (generation/threads.py::one_blas_thread) unless the environment
names a thread count."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import numpy, threadpoolctl
from auralgen.generation.threads import one_blas_thread
took = one_blas_thread()
print(took, sorted({p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}))
"""


def _child(**env_vars) -> str:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    env.update(PYTHONPATH=str(ROOT), **env_vars)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_one_blas_thread_limits_every_blas_library_to_one_thread():
    assert _child() == "True [1]"


@pytest.mark.parametrize("var", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"])
def test_a_thread_count_set_in_the_environment_is_left_alone(var):
    took, threads = _child(**{var: "3"}).split(" ", 1)
    assert took == "False" and threads != "[1]"  # the library runs what the environment asked for (up to its cores)
