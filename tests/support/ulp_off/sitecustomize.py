"""Another CPU's rounding, for a test: on this directory's ``PYTHONPATH`` every float64 result of numpy's
transcendental functions (as called from Python: ``np.sin``, ``np.log10``, ...) moves up by one unit in
the last place, as the SIMD kernels numpy dispatches to on an AVX-512 CPU may round differently from
the ones used here. ``NPY_DISABLE_CPU_FEATURES`` can only switch kernels off, so it cannot reach that
code path on a CPU without AVX-512; this moves the results instead. Whole-number results (sin 0,
cos 0, exp 0, 2**3) stay: every implementation returns them exactly. Compiled code (numba, scipy)
is untouched."""

import numpy as np

NAMES = (
    "log10",
    "log",
    "log2",
    "exp",
    "exp2",
    "power",
    "sin",
    "cos",
    "tan",
    "tanh",
    "arctan2",
    "expm1",
    "log1p",
    "cbrt",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
)


def _one_ulp_up(name: str):
    ufunc = getattr(np, name)

    def moved(*args, **kwargs):
        r = ufunc(*args, **kwargs)
        if isinstance(r, np.ndarray) and r.dtype == np.float64:
            return np.where(r == np.round(r), r, np.nextafter(r, np.inf))
        if isinstance(r, (float, np.floating)) and np.asarray(r).dtype == np.float64:
            return np.float64(r if r == np.round(r) else np.nextafter(r, np.inf))
        return r

    moved.__name__ = name
    for attr in ("reduce", "accumulate", "outer", "at", "nin", "nout", "types", "identity"):
        setattr(moved, attr, getattr(ufunc, attr))
    return moved


for _name in NAMES:
    setattr(np, _name, _one_ulp_up(_name))
