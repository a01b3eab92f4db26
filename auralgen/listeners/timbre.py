"""Reference listeners of the timbre tasks: mel cepstra (MFCCs) of the notes, read from the audio.

The listener sees the question, the option texts and the clip, never ``params``: it finds the
notes (:func:`auralgen.measure.timbre.note_spans`), measures their mel cepstra and answers from
the timbre distance: *different* when two notes are more than :data:`SAME_BOUND_DB` apart
(relative), or the family whose template cepstrum is nearest (absolute).
"""

from __future__ import annotations

from collections.abc import Sequence

from auralgen.listeners.common import mono
from auralgen.listeners.tempo import NO_ANSWER, find_option
from auralgen.measure.timbre import mel_cepstrum, nearest, note_spans, timbre_distance_db
from auralgen.synth.instruments import FAMILIES, FAMILY_LABELS

# decision bound (dB of mel-cepstral distance): above the distance the natural roving gives two
# notes of one instrument (~0.3 dB) and below the hardest non-zero level of timbre_relative (1 dB)
SAME_BOUND_DB = 0.8


def timbre_relative(question, options: Sequence[str], clips, sample_rate) -> int:
    """ "Same" or "different" instrument from the two notes' timbre distance.

    Parameters
    ----------
    question : str
        The item's question text (not read).
    options : list of str
        The option texts, in canonical order.
    clips : list of ndarray, each shape (channels, samples)
        The item's decoded clips; the first holds the two notes.
    sample_rate : int
        Sampling rate of the clips (Hz).

    Returns
    -------
    int
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when the audio gives nothing to measure.
    """
    x = mono(clips[0])
    spans = note_spans(x, sample_rate, want=2)
    if len(spans) < 2:
        return NO_ANSWER
    d = timbre_distance_db(x[slice(*spans[0])], x[slice(*spans[1])], sample_rate)
    return find_option(options, "different" if d > SAME_BOUND_DB else "same")


def timbre_absolute(question, options: Sequence[str], clips, sample_rate) -> int:
    """The family whose template cepstrum is nearest to the note's.

    Parameters
    ----------
    question : str
        The item's question text (not read).
    options : list of str
        The option texts, in canonical order.
    clips : list of ndarray, each shape (channels, samples)
        The item's decoded clips; the first is measured.
    sample_rate : int
        Sampling rate of the clips (Hz).

    Returns
    -------
    int
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when the audio gives nothing to measure.
    """
    x = mono(clips[0])
    spans = note_spans(x, sample_rate, want=1)
    if not spans:
        return NO_ANSWER
    k, _ = nearest(mel_cepstrum(x[slice(*spans[0])], sample_rate), [FAMILIES[f] for f in FAMILIES])
    return find_option(options, FAMILY_LABELS[list(FAMILIES)[k]].lower())
