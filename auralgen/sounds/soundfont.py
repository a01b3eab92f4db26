"""Sampled instruments: notes rendered from a General MIDI SoundFont by FluidSynth (``source=soundfont``).

A SoundFont is a bank of real instrument recordings (one sample per few keys, looped and
enveloped by the synth). ``source=soundfont`` turns one into a labelled corpus: every instrument
(a General MIDI program of bank 0) x note (MIDI key) x velocity of the config is an entry whose
class is the instrument's preset name, so every task that draws a labelled recording
(pitch, loudness, duration, tempo, counting, reorder, spatial, mixture, ...) draws sampled notes
instead, and names the instruments in its options.

Rendering is offline and deterministic: a fresh synth per note (FluidSynth's internal block
position and channel state would otherwise carry over from the previous note), reverb and chorus
off (the rooms add the space), 32-bit float output (no dither), the two channels averaged. A pitch
shift is played, not processed: the note is rendered ``shift_cents`` away by choosing the nearest
key and bending the rest (within +/- 50 cents of the default 2-semitone bend range), so a shifted
note is the instrument's own sample at that pitch. The recipe stores the instrument, program,
note, velocity, the SoundFont's hash and FluidSynth's version; the task measures every label on the
rendered audio as for any recording.

FluidSynth is a system library (Debian ``libfluidsynth3``) reached through ``pyfluidsynth``, and
the default bank is Debian's MIT-licensed Fluid (R3) General MIDI SoundFont (``fluid-soundfont-gm``):
``make soundfont`` installs all three. Without them ``source=soundfont`` ends in one line naming
that command; nothing else needs them.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.constants import SAMPLE_RATES
from auralgen.core.errors import ParameterError

DEFAULT_SF2 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
DEFAULT_LICENSE = "MIT"  # Debian's fluid-soundfont-gm: /usr/share/doc/fluid-soundfont-gm/copyright
DEFAULT_ATTRIBUTION = "Fluid (R3) General MIDI SoundFont by Frank Wen (Debian fluid-soundfont-gm)"
# General MIDI programs (bank 0) of the default corpus: keyboard, mallet, plucked, bowed, brass, reeds, flute
DEFAULT_PROGRAMS = (0, 13, 24, 40, 42, 56, 71, 73)
INSTALL_HINT = (
    "source=soundfont needs FluidSynth and a SoundFont; install them with: make soundfont "
    "(apt-get install libfluidsynth3 fluid-soundfont-gm; pip install 'auralgen[soundfont]')"
)
BLOCK = 64  # FluidSynth renders in blocks of 64 samples
TAIL_S = 0.5  # rendered after the note-off: the release
BEND_RANGE_CENTS = 200.0  # the General MIDI default pitch-bend sensitivity (2 semitones)


def _fluidsynth():
    """The ``fluidsynth`` module (pyfluidsynth) with its library loaded, or the install line."""
    try:
        import fluidsynth
    except (ImportError, OSError):
        raise ParameterError(INSTALL_HINT) from None
    return fluidsynth


def version() -> str:
    """FluidSynth's version string (part of every recipe: another version may render other bytes).

    Returns
    -------
    str
        ``"fluidsynth <version>"``.

    Raises
    ------
    ParameterError
        If pyfluidsynth or the FluidSynth library is missing (the install line).
    """
    fl = _fluidsynth()._fl
    fl.fluid_version_str.restype = ctypes.c_char_p
    return "fluidsynth " + fl.fluid_version_str().decode()


def check_installed(path: str) -> None:
    """FluidSynth importable and ``path`` a readable SoundFont file, or one clear line.

    Parameters
    ----------
    path : str
        The .sf2 file.

    Raises
    ------
    ParameterError
        If ``path`` is not a file or FluidSynth cannot be imported.
    """
    if not Path(path).is_file():
        hint = INSTALL_HINT if path == DEFAULT_SF2 else "allowed: a .sf2 file (source.soundfont=<path>)"
        raise ParameterError(f"source.soundfont={path!r} is not a file; {hint}")
    _fluidsynth()


@functools.lru_cache(maxsize=4)
def file_sha(path: str, size: int, mtime_ns: int) -> str:
    """First 16 hex digits of the file's SHA-256 (cached per path, size and modification time).

    Parameters
    ----------
    path : str
        The file.
    size : int
        Its size, in bytes (part of the cache key).
    mtime_ns : int
        Its modification time, in nanoseconds (part of the cache key).

    Returns
    -------
    str
        16 lower-case hex digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()[:16]


def sha_of(path: str) -> str:
    """First 16 hex digits of the SHA-256 of the file at ``path`` (recomputed when it changes).

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    str
        16 lower-case hex digits.
    """
    st = Path(path).stat()
    return file_sha(path, st.st_size, st.st_mtime_ns)


class _Synth:
    """One FluidSynth instance with the SoundFont loaded, rendering float samples."""

    def __init__(self, path: str, sample_rate: int):
        fs = _fluidsynth()
        opts = {"synth.reverb.active": 0, "synth.chorus.active": 0, "synth.dynamic-sample-loading": 1}
        self.synth = fs.Synth(gain=0.5, samplerate=float(sample_rate), **opts)
        self.sfid = self.synth.sfload(path)
        if self.sfid < 0:
            self.synth.delete()
            raise ParameterError(
                f"source.soundfont={path!r} is not a SoundFont FluidSynth can load; allowed: a .sf2 file"
            )
        write = fs._fl.fluid_synth_write_float
        write.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        write.argtypes += [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self._write = write

    def pull(self, n: int) -> np.ndarray:
        """The next ``n`` samples (mono: the mean of the two channels)."""
        left, right = np.zeros(n, np.float32), np.zeros(n, np.float32)
        if self._write(self.synth.synth, n, left.ctypes.data, 0, 1, right.ctypes.data, 0, 1) != 0:
            raise ParameterError("FluidSynth failed to render; allowed: a working FluidSynth (make soundfont)")
        return (left.astype(np.float64) + right) / 2.0

    def preset_name(self, program: int) -> str | None:
        return self.synth.sfpreset_name(self.sfid, 0, program)

    def close(self) -> None:
        self.synth.delete()


def preset_names(path: str, programs) -> dict[int, str | None]:
    """The SoundFont's preset name of each bank-0 ``program`` (None where it has none).

    Parameters
    ----------
    path : str
        The .sf2 file.
    programs : iterable of int
        General MIDI program numbers, 0..127.

    Returns
    -------
    dict of int to (str or None)
        ``{program: preset name}``.
    """
    s = _Synth(path, SAMPLE_RATES[0])  # any rate: only the names are read
    try:
        return {int(p): s.preset_name(int(p)) for p in programs}
    finally:
        s.close()


def key_and_bend(note: int, shift_cents: float) -> tuple[int, int]:
    """The MIDI key and the 14-bit bend offset (-8192..8191) that play ``note`` moved by ``shift_cents``.

    Parameters
    ----------
    note : int
        MIDI key, 0..127.
    shift_cents : float
        Pitch shift, in cents.

    Returns
    -------
    key : int
        The nearest MIDI key.
    bend : int
        The pitch-bend offset for the remaining cents (of a 2-semitone bend range).

    Raises
    ------
    ParameterError
        If the shifted key leaves 0..127.
    """
    steps = int(round(shift_cents / 100.0))
    key = note + steps
    if not 0 <= key <= 127:
        raise ParameterError(
            f"note {note} shifted by {shift_cents:.0f} cents leaves the MIDI range; allowed: keys 0..127"
        )
    bend = int(round((shift_cents - 100.0 * steps) / BEND_RANGE_CENTS * 8192))
    return key, max(-8192, min(8191, bend))


@functools.lru_cache(maxsize=512)
def render_note(
    path: str, program: int, note: int, velocity: int, hold_s: float, sample_rate: int, shift_cents: float = 0.0
) -> np.ndarray:
    """``note`` of ``program`` held ``hold_s`` then released for :data:`TAIL_S` (cached, read-only).

    Parameters
    ----------
    path : str
        The .sf2 file.
    program : int
        General MIDI program of bank 0.
    note : int
        MIDI key.
    velocity : int
        MIDI velocity, 1..127.
    hold_s : float
        Time between note-on and note-off, in seconds.
    sample_rate : int
        Sampling rate, in Hz.
    shift_cents : float, optional
        Pitch shift, in cents, played by key and pitch bend.

    Returns
    -------
    ndarray, shape (samples,), float64
        Mono (mean of the two channels), ``round(hold_s * sample_rate) + round(TAIL_S * sample_rate)`` samples.
    """
    key, bend = key_and_bend(note, shift_cents)
    s = _Synth(path, sample_rate)
    try:
        s.synth.program_select(0, s.sfid, 0, program)
        s.synth.pitch_bend(0, bend)  # pyfluidsynth centres it (adds 8192)
        s.synth.noteon(0, key, velocity)
        held = s.pull(int(round(hold_s * sample_rate)))
        s.synth.noteoff(0, key)
        x = np.concatenate([held, s.pull(int(round(TAIL_S * sample_rate)))])
    finally:
        s.close()
    x.setflags(write=False)
    return x


def render(spec: dict[str, Any], sample_rate: int, shift_cents: float = 0.0) -> np.ndarray:
    """The whole note of a soundfont recipe (its ``root`` is the SoundFont), checked against its hash.

    Parameters
    ----------
    spec : dict of str to Any
        A soundfont recipe: ``root``, ``sha256``, ``synth``, ``program``, ``note``, ``velocity``, ``hold_s``.
    sample_rate : int
        Sampling rate, in Hz.
    shift_cents : float, optional
        Pitch shift, in cents (played, not processed).

    Returns
    -------
    ndarray, shape (samples,), float64
        The mono note with its release (read-only).

    Raises
    ------
    ParameterError
        If the SoundFont is missing or changed, or another FluidSynth version is installed.
    """
    path = spec["root"]
    if not Path(path).is_file():
        raise ParameterError(f"source.soundfont={path!r} is not a file; {INSTALL_HINT}")
    if sha_of(path) != spec["sha256"]:
        raise ParameterError(
            f"source file {path!r} changed since the item was drawn (sha256 {sha_of(path)} != {spec['sha256']}); "
            "allowed: the SoundFont the recipe names"
        )
    if spec.get("synth", version()) != version():
        raise ParameterError(
            f"the item was rendered by {spec['synth']}, this is {version()}; "
            "allowed: the FluidSynth version the recipe names"
        )
    hold = float(spec["hold_s"])
    return render_note(
        path, int(spec["program"]), int(spec["note"]), int(spec["velocity"]), hold, sample_rate, shift_cents
    )


def label_of(preset: str) -> str:
    """The class label of a preset name: ``Nylon String Guitar`` -> ``nylon_string_guitar``.

    Parameters
    ----------
    preset : str
        A SoundFont preset name.

    Returns
    -------
    str
        The label: lower case, words joined by ``_``.
    """
    return "_".join(preset.lower().replace("-", " ").split())


def note_entries(cfg, path: str) -> list[dict[str, Any]]:
    """The fields of one corpus entry (:class:`auralgen.sounds.corpus.Entry`) per program x note x velocity.

    A program the SoundFont lacks, a key or velocity outside MIDI's range, a non-positive ``note_s`` or a
    user's SoundFont without ``source.license`` is refused (ParameterError).

    Parameters
    ----------
    cfg : SourceConfig
        A ``source=soundfont`` config (``programs``, ``notes``, ``velocities``, ``note_s`` in seconds, ``license``).
    path : str
        The .sf2 file.

    Returns
    -------
    list of dict of str to Any
        Keyword arguments of an ``Entry``; ``duration_s`` is the hold plus :data:`TAIL_S`, in seconds.
    """
    programs = DEFAULT_PROGRAMS if cfg.programs is None else cfg.programs
    for name, values, lo in (("programs", programs, 0), ("notes", cfg.notes, 0), ("velocities", cfg.velocities, 1)):
        if not values or any(not lo <= v <= 127 for v in values):
            raise ParameterError(f"source.{name}={list(values)!r} is invalid; allowed: a non-empty list of {lo}..127")
    if not cfg.note_s > 0:
        raise ParameterError(f"source.note_s={cfg.note_s!r} is invalid; allowed: > 0 s")
    lic = cfg.license or (DEFAULT_LICENSE if path == DEFAULT_SF2 else None)
    if lic is None:
        raise ParameterError(
            f"source.soundfont={path!r} has no stated license; allowed: source.license=<name> (the SoundFont's license)"
        )
    names = preset_names(path, programs)
    missing = [p for p, n in names.items() if n is None]
    if missing:
        raise ParameterError(
            f"source.programs names {missing}, which {path!r} has no bank-0 preset for; allowed: its programs"
        )
    labels = {p: label_of(n) for p, n in names.items()}
    attribution = DEFAULT_ATTRIBUTION if path == DEFAULT_SF2 else f"SoundFont {Path(path).name}"
    sha, synth = sha_of(path), version()
    return [
        dict(
            file=f"program {p} note {k} velocity {v}",
            label=labels[p],
            license=str(lic),
            attribution=attribution,
            sha256=sha,
            duration_s=float(cfg.note_s) + TAIL_S,
            extra=(
                ("instrument", names[p]),
                ("program", p),
                ("note", k),
                ("velocity", v),
                ("hold_s", float(cfg.note_s)),
                ("synth", synth),
            ),
        )
        for p in programs
        for k in cfg.notes
        for v in cfg.velocities
    ]
