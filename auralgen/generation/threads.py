"""Native thread pools of a generation process: one core per worker."""

from __future__ import annotations

import os

BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # a user's choice of BLAS threads


def one_blas_thread() -> bool:
    """Have the BLAS libraries numpy and scipy loaded run one thread in this process, unless the
    environment sets their thread count (:data:`BLAS_THREAD_VARS`). A generation worker is one core:
    its items make many tiny matrix products (a 33 x 129 phase matrix per ITD window), and OpenBLAS's
    default of one thread per core wakes and joins its threads for each, which costs milliseconds a
    product when the other cores are busy (every worker of a run): GCC-PHAT's ITD of an 8 ms window took
    5-15 ms with two threads on a loaded 2-core machine, 0.01 ms with one. Values are unchanged (the
    products are the same BLAS routine, one thread or several).

    Returns
    -------
    bool
        Whether the limit was set (False when the environment names a thread count).
    """
    if any(os.environ.get(v) for v in BLAS_THREAD_VARS):
        return False
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return True
