"""Head-related impulse responses: the MIT KEMAR set, loaded without importing slab.

Data, licence and citation
--------------------------
The HRIRs are the MIT KEMAR measurements, "normal pinna" set (710 directions,
elevations -40..+90 deg, 512 taps at 44.1 kHz, loudspeaker at 1.4 m):

    Gardner, W. G. and Martin, K. D. (1994). HRTF Measurements of a KEMAR
    Dummy-Head Microphone. MIT Media Lab Perceptual Computing Technical Report #280.
    (Also: Gardner & Martin (1995), J. Acoust. Soc. Am. 97(6), 3907-3908.)

The data's own terms (MIT archive README): "This data is Copyright 1994 by the MIT Media
Laboratory. It is provided free with no restrictions on use, provided the authors are cited
when the data is used in any research or commercial application."

auralgen does not redistribute the file: :func:`fetch` takes it from the ``slab`` wheel on
PyPI (slab by Marc Schoenwiesner, MIT licence per the wheel's metadata and LICENSE file,
https://github.com/DrMarc/slab; its JOSS paper is doi:10.21105/joss.03284), which ships the
KEMAR data, converted to SOFA and then pickled, as ``slab/data/mit_kemar_normal_pinna.bz2``.
The wheel version and the file's SHA-256 are pinned, so every machine renders with the same
HRIRs. In the "normal pinna" set both ears use the DB-061 pinna (the set is left/right
symmetric: the right ear at azimuth ``a`` is the left ear at ``-a``).

Obtaining the file (needs PyPI access once)::

    python -m auralgen.rooms.hrtf fetch

File format
-----------
A bz2-compressed pickle of a ``slab.hrtf.HRTF`` whose state is ``samplerate`` (44100.0),
``data`` (710 ``slab.filter.Filter`` objects, each ``data`` float64 ``[512, 2]``, columns
left, right), ``sources`` (float64 ``[710, 3]``: azimuth deg in [0, 360), elevation deg,
distance 1.4 m; slab's vertical-polar convention, azimuth counter-clockwise seen from above,
i.e. +90 = left, the same sense as :mod:`auralgen.measure.geometry`) and ``listener``.
Importing slab needs the PortAudio system library, so the pickle is read by a restricted
unpickler that maps slab's two classes to plain state holders and allows nothing else
besides numpy's array reconstruction.
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import io
import os
import pickle
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path

import numpy as np
import scipy.signal
import scipy.spatial
from numba import njit

from auralgen.core.errors import AuralgenError, ParameterError
from auralgen.measure.geometry import az_el_to_unit, wrap_azimuth_deg

SLAB_VERSION = "1.8.2"
KEMAR_MEMBER = "slab/data/mit_kemar_normal_pinna.bz2"
KEMAR_FILENAME = "mit_kemar_normal_pinna.bz2"
KEMAR_SHA256 = "61f562a68284ba40899fd66b9d9e976351a41def04e3e826ae4cb3d5c3a7d975"
FETCH_COMMAND = "python -m auralgen.rooms.hrtf fetch"

__all__ = ["Hrtf", "HrtfMissingError", "default_kemar_path", "fetch", "load_kemar", "main"]


class HrtfMissingError(AuralgenError, FileNotFoundError):
    """The HRTF data file is not on disk (run the fetch command)."""


@dataclass(frozen=True, eq=False)
class Hrtf:
    """A set of head-related impulse responses on measured directions.

    Parameters
    ----------
    directions_deg : np.ndarray [shape=(n, 2)]
        ``(azimuth, elevation)`` of each measurement in the auralgen convention
        (azimuth 0 = ahead, +90 = left, in [-180, 180); elevation +90 = above).
    hrirs : np.ndarray [shape=(n, 2, taps)]
        Impulse responses, ear axis ordered (left, right).
    sample_rate : int > 0
        Sampling rate of ``hrirs`` in Hz.
    name : str
        Identifier of the set.

    Examples
    --------
    >>> h = Hrtf(np.array([[90.0, 0.0], [-90.0, 0.0]]), np.zeros((2, 2, 8)), 44100)
    >>> int(h.nearest(80.0, 10.0))
    0
    """

    directions_deg: np.ndarray
    hrirs: np.ndarray
    sample_rate: int
    name: str = "hrtf"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        d = np.asarray(self.directions_deg, dtype=float)
        h = np.asarray(self.hrirs, dtype=float)
        if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] == 0:
            raise ParameterError(f"hrtf.directions_deg shape={d.shape}; allowed: (n, 2) with n >= 1")
        if h.ndim != 3 or h.shape[0] != d.shape[0] or h.shape[1] != 2:
            raise ParameterError(f"hrtf.hrirs shape={h.shape}; allowed: ({d.shape[0]}, 2, taps)")
        if int(self.sample_rate) <= 0:
            raise ParameterError(f"hrtf.sample_rate={self.sample_rate!r}; allowed: > 0")
        d = np.stack([wrap_azimuth_deg(d[:, 0]), d[:, 1]], axis=1)
        d.flags.writeable = False
        h = h.copy()
        h.flags.writeable = False
        object.__setattr__(self, "directions_deg", d)
        object.__setattr__(self, "hrirs", h)
        object.__setattr__(self, "sample_rate", int(self.sample_rate))

    @property
    def num_directions(self) -> int:
        return int(self.directions_deg.shape[0])

    @property
    def num_taps(self) -> int:
        return int(self.hrirs.shape[2])

    def resampled(self, sample_rate: int) -> Hrtf:
        """This set at ``sample_rate`` (``scipy.signal.resample_poly``), cached per rate.

        The tap count becomes ``ceil(taps * sample_rate / self.sample_rate)``.

        Parameters
        ----------
        sample_rate : int
            The new sample rate in Hz; > 0.

        Returns
        -------
        Hrtf
            The resampled set (``self`` when the rate is already ``sample_rate``).
        """
        sample_rate = int(sample_rate)
        if sample_rate <= 0:
            raise ParameterError(f"sample_rate={sample_rate!r}; allowed: > 0")
        if sample_rate == self.sample_rate:
            return self
        key = ("resampled", sample_rate)
        if key not in self._cache:
            g = gcd(sample_rate, self.sample_rate)
            up, down = sample_rate // g, self.sample_rate // g
            out = scipy.signal.resample_poly(self.hrirs, up, down, axis=-1)
            self._cache[key] = Hrtf(self.directions_deg, out, sample_rate, self.name)
        return self._cache[key]

    def nearest(self, az_deg, el_deg) -> np.ndarray:
        """Index of the measured direction nearest (great circle) to each ``(az, el)``.

        Vectorised over broadcastable ``az_deg`` / ``el_deg``; returns an int array of their
        broadcast shape (a 0-d array for scalars).

        Parameters
        ----------
        az_deg : float or array_like
            Azimuth(s) in degrees, counter-clockwise from the front (+90 = left).
        el_deg : float or array_like
            Elevation(s) in degrees, positive up; broadcast against ``az_deg``.

        Returns
        -------
        ndarray of intp
            Row indices into :attr:`directions_deg` and :attr:`hrirs`.
        """
        if "tree" not in self._cache:
            units = np.ascontiguousarray(az_el_to_unit(*self.directions_deg.T))
            self._cache["tree"], self._cache["units"] = scipy.spatial.cKDTree(units), units
            self._cache["neighbours"] = _hull_neighbours(units)
        az, el = np.broadcast_arrays(np.asarray(az_deg, float), np.asarray(el_deg, float))
        # On the unit sphere the Euclidean nearest neighbour is the great-circle nearest.
        queries = np.ascontiguousarray(az_el_to_unit(az.ravel(), el.ravel())).reshape(-1, 3)
        idx = _certified_nearest(queries, self._cache["units"], *self._cache["neighbours"])
        rest = idx < 0
        if np.any(rest):
            idx[rest] = self._cache["tree"].query(queries[rest])[1]
        return np.asarray(idx, dtype=np.intp).reshape(az.shape)


def _hull_neighbours(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(start [n + 1], index)``: the directions adjacent to each on the convex hull of the unit vectors
    ``units [n, 3]`` (those of ``d`` are ``index[start[d] : start[d + 1]]``), whose dot products bound the
    region where ``d`` is the nearest; no neighbours at all (so nothing certified) unless every direction
    is a vertex of a hull around the centre."""
    none = (np.zeros(units.shape[0] + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    try:
        hull = scipy.spatial.ConvexHull(units)
    except scipy.spatial.QhullError:
        return none
    if hull.vertices.size != units.shape[0] or np.any(hull.equations[:, -1] >= 0.0):  # centre inside
        return none
    pairs = np.unique(np.concatenate([hull.simplices[:, [a, b]] for a in range(3) for b in range(3) if a != b]), axis=0)
    start = np.searchsorted(pairs[:, 0], np.arange(units.shape[0] + 1)).astype(np.int64)
    return start, np.ascontiguousarray(pairs[:, 1], dtype=np.int64)


@njit(cache=True)
def _certified_nearest(queries, units, start, index):
    """The nearest of ``units [n, 3]`` (by dot product, unit vectors) to each of ``queries [m, 3]`` where it is
    certain, else -1.

    The unit ``d`` is the nearest of ``q`` when ``q . u_d`` exceeds ``q . u_e`` for each hull neighbour ``e``
    of ``d`` (:func:`_hull_neighbours`; the region where a vertex maximises the dot product is bounded by its
    edges); required here by a margin of 1e-12, far above rounding. The unit tried for each query is the
    nearest of the previous one (queries along a path move little), by brute force after a query not certain."""
    out = np.full(queries.shape[0], -1, dtype=np.int64)
    cand = -1
    for q in range(queries.shape[0]):
        x, y, z = queries[q, 0], queries[q, 1], queries[q, 2]
        for attempt in range(2):
            if attempt == 1 or cand < 0:  # the nearest by brute force (then certified or not)
                best = -np.inf
                for u in range(units.shape[0]):
                    dot = x * units[u, 0] + y * units[u, 1] + z * units[u, 2]
                    if dot > best:
                        best, cand = dot, u
            own = x * units[cand, 0] + y * units[cand, 1] + z * units[cand, 2]
            sure = start[cand + 1] > start[cand]
            for k in range(start[cand], start[cand + 1]):
                e = index[k]
                sure = sure and own - (x * units[e, 0] + y * units[e, 1] + z * units[e, 2]) > 1e-12
            if sure:
                out[q] = cand
                break
    return out


# ----------------------------------------------------------------------------- loading


class _SlabState:
    """Stand-in for a slab object: holds its pickled ``__dict__`` state, nothing else."""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(f"unexpected state of type {type(state).__name__} for {type(self).__name__}")
        self.state = state


class _SlabHRTF(_SlabState):
    pass


class _SlabFilter(_SlabState):
    pass


def _numpy_reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


_ALLOWED = {
    ("slab.hrtf", "HRTF"): lambda: _SlabHRTF,
    ("slab.filter", "Filter"): lambda: _SlabFilter,
    ("numpy.core.multiarray", "_reconstruct"): _numpy_reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _numpy_reconstruct,
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that only resolves slab's HRTF/Filter (to stand-ins) and numpy arrays."""

    def find_class(self, module, name):
        make = _ALLOWED.get((module, name))
        if make is None:
            allowed = ", ".join(f"{m}.{n}" for m, n in _ALLOWED)
            raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}; allowed: {allowed}")
        return make()


def _cache_dir() -> Path:
    if os.environ.get("AURALGEN_CACHE_DIR"):
        return Path(os.environ["AURALGEN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "auralgen"


def default_kemar_path() -> Path:
    """Where :func:`fetch` puts the KEMAR file and :func:`load_kemar` looks for it.

    ``$AURALGEN_CACHE_DIR/hrtf/`` if that variable is set, else
    ``${XDG_CACHE_HOME:-~/.cache}/auralgen/hrtf/``.

    Returns
    -------
    Path
        The KEMAR file's path (it need not exist).
    """
    return _cache_dir() / "hrtf" / KEMAR_FILENAME


def _field(state: dict, key: str, path) -> object:
    if key not in state:
        raise ParameterError(f"hrtf file {path}: field {key!r} missing; found: {sorted(state)}")
    return state[key]


def _hrtf_from_slab(obj, path) -> Hrtf:
    if not isinstance(obj, _SlabHRTF):
        raise ParameterError(f"hrtf file {path}: top-level object is {type(obj).__name__}; allowed: slab.hrtf.HRTF")
    sources = np.asarray(_field(obj.state, "sources", path), dtype=float)
    filters = _field(obj.state, "data", path)
    rate = float(_field(obj.state, "samplerate", path))
    if sources.ndim != 2 or sources.shape[1] != 3:
        raise ParameterError(f"hrtf file {path}: sources shape={sources.shape}; allowed: (n, 3)")
    if not isinstance(filters, list) or not all(isinstance(f, _SlabFilter) for f in filters):
        raise ParameterError(f"hrtf file {path}: data is not a list of slab.filter.Filter")
    irs = [np.asarray(_field(f.state, "data", path), dtype=float) for f in filters]
    if len(irs) != len(sources) or any(ir.shape != irs[0].shape or ir.ndim != 2 or ir.shape[1] != 2 for ir in irs):
        raise ParameterError(f"hrtf file {path}: {len(irs)} filters for {len(sources)} sources, each must be (taps, 2)")
    if rate != round(rate):
        raise ParameterError(f"hrtf file {path}: samplerate={rate!r}; allowed: an integer rate")
    hrirs = np.stack(irs).transpose(0, 2, 1)  # [n, taps, ear] -> [n, ear, taps]; ear 0 = left
    directions = np.stack([wrap_azimuth_deg(sources[:, 0]), sources[:, 1]], axis=1)
    return Hrtf(directions, hrirs, int(round(rate)), Path(str(path)).name.removesuffix(".bz2"))


def load_kemar(path=None) -> Hrtf:
    """Load the MIT KEMAR (normal pinna) HRIRs from slab's bz2 pickle, without slab.

    Parameters
    ----------
    path : str or Path, optional
        The ``.bz2`` file; default :func:`default_kemar_path` (whose SHA-256 is checked).

    Returns
    -------
    Hrtf
        710 directions, ``hrirs`` [710, 2, 512], 44100 Hz.

    Raises
    ------
    HrtfMissingError
        The file is absent; the message names the fetch command.
    pickle.UnpicklingError
        The pickle references a class other than slab's HRTF/Filter or numpy arrays.

    Examples
    --------
    >>> h = load_kemar()  # doctest: +SKIP
    >>> h.hrirs.shape, h.sample_rate  # doctest: +SKIP
    ((710, 2, 512), 44100)
    """
    default = path is None
    path = Path(default_kemar_path() if default else path)
    if not path.is_file():
        raise HrtfMissingError(f"KEMAR HRTF file not found at {path}; run `{FETCH_COMMAND}` (needs PyPI access once)")
    raw = path.read_bytes()
    if default and hashlib.sha256(raw).hexdigest() != KEMAR_SHA256:
        raise ParameterError(
            f"hrtf file {path}: sha256={hashlib.sha256(raw).hexdigest()}; allowed: {KEMAR_SHA256} "
            f"(delete it and run `{FETCH_COMMAND}`)"
        )
    obj = _RestrictedUnpickler(io.BytesIO(bz2.decompress(raw))).load()
    return _hrtf_from_slab(obj, path)


# ----------------------------------------------------------------------------- fetching


def fetch(dest=None, *, force: bool = False, quiet: bool = True) -> Path:
    """Download the slab wheel (pinned version, no dependencies) and extract the KEMAR file.

    Runs ``python -m pip download slab==<SLAB_VERSION> --no-deps --only-binary=:all:`` into a
    temporary directory, reads ``slab/data/mit_kemar_normal_pinna.bz2`` from the wheel,
    checks its SHA-256 and writes it atomically to ``dest`` (default
    :func:`default_kemar_path`). Nothing from slab is installed or imported.

    Parameters
    ----------
    dest : str or Path, optional
        The output file; default :func:`default_kemar_path`.
    force : bool, optional
        Download even when ``dest`` already holds the right file.
    quiet : bool, optional
        Capture pip's output (its last error line goes into the error message).

    Returns
    -------
    Path
        The destination path (returned at once when it already holds the right file).

    Raises
    ------
    AuralgenError
        If pip fails, yields no slab wheel, or the extracted file's SHA-256 is not the pinned one.
    """
    dest = Path(default_kemar_path() if dest is None else dest)
    if not force and dest.is_file() and hashlib.sha256(dest.read_bytes()).hexdigest() == KEMAR_SHA256:
        return dest
    with tempfile.TemporaryDirectory(prefix="auralgen-slab-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", f"slab=={SLAB_VERSION}", "--no-deps"]
        cmd += ["--only-binary=:all:", "--disable-pip-version-check", "-d", tmp] + (["-q"] if quiet else [])
        proc = subprocess.run(cmd, capture_output=quiet, text=True)
        if proc.returncode != 0:
            detail = (proc.stderr or "").strip().splitlines()[-1:] if quiet else []
            raise AuralgenError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}) {' '.join(detail)}".strip())
        wheels = sorted(Path(tmp).glob("slab-*.whl"))
        if not wheels:
            raise AuralgenError(f"pip download produced no slab wheel in {tmp}")
        with zipfile.ZipFile(wheels[0]) as zf:
            data = zf.read(KEMAR_MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    if digest != KEMAR_SHA256:
        raise AuralgenError(f"{KEMAR_MEMBER} in slab=={SLAB_VERSION} has sha256={digest}; expected {KEMAR_SHA256}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + f".part{os.getpid()}")
    part.write_bytes(data)
    os.replace(part, dest)
    return dest


def main(argv=None) -> int:
    """CLI: ``python -m auralgen.rooms.hrtf fetch [--dest PATH] [--force]``.

    Parameters
    ----------
    argv : list of str or None, optional
        The command-line arguments; ``None`` reads ``sys.argv``.

    Returns
    -------
    int
        Exit status: 0 on success (the path is printed), 1 when the fetch failed.
    """
    parser = argparse.ArgumentParser(prog="python -m auralgen.rooms.hrtf", description="HRTF data management")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fetch", help="download the MIT KEMAR HRIRs (from the slab wheel on PyPI)")
    p.add_argument("--dest", default=None, help=f"output file (default: {default_kemar_path()})")
    p.add_argument("--force", action="store_true", help="download even if a valid file is present")
    args = parser.parse_args(argv)
    try:
        path = fetch(args.dest, force=args.force)
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
