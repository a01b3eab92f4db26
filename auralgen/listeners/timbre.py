"""Reference listeners of the timbre tasks: mel cepstra (MFCCs) of the notes, read from the audio.

The listener sees the question, the option texts and the clip, never ``params``: it finds the
notes (:func:`auralgen.measure.timbre.note_spans`), measures their mel cepstra and answers from
the timbre distance: *different* when two notes are more than :data:`SAME_BOUND_DB` apart
(relative), or the family whose template cepstrum is nearest (absolute).
"""

from __future__ import annotations

from collections.abc import Sequence

from auralgen.listeners.common import NO_ANSWER, listener_doc, mono, option_index
from auralgen.measure.timbre import mel_cepstrum, nearest, note_spans, timbre_distance_db
from auralgen.synth.instruments import FAMILIES, FAMILY_LABELS

# decision bound (dB of mel-cepstral distance): above the distance the natural roving gives two
# notes of one instrument (~0.3 dB) and below the hardest non-zero level of timbre_relative (1 dB)
SAME_BOUND_DB = 0.8


@listener_doc("the first holds the two notes")
def timbre_relative(question, options: Sequence[str], clips, sample_rate) -> int:
    """ "Same" or "different" instrument from the two notes' timbre distance."""
    x = mono(clips[0])
    spans = note_spans(x, sample_rate, want=2)
    if len(spans) < 2:
        return NO_ANSWER
    d = timbre_distance_db(x[slice(*spans[0])], x[slice(*spans[1])], sample_rate)
    return option_index(options, "different" if d > SAME_BOUND_DB else "same")


@listener_doc()
def timbre_absolute(question, options: Sequence[str], clips, sample_rate) -> int:
    """The family whose template cepstrum is nearest to the note's."""
    x = mono(clips[0])
    spans = note_spans(x, sample_rate, want=1)
    if not spans:
        return NO_ANSWER
    k, _ = nearest(mel_cepstrum(x[slice(*spans[0])], sample_rate), [FAMILIES[f] for f in FAMILIES])
    return option_index(options, FAMILY_LABELS[list(FAMILIES)[k]].lower())
