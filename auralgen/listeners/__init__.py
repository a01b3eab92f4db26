"""Reference DSP listeners: answer an item from its audio alone (never from ``params``).

One module per family of tasks (:mod:`.tones`, :mod:`.spatial`, :mod:`.temporal`,
:mod:`.mixture`) and the option-text helpers they share (:mod:`.common`). A listener is a
plain function ``fn(question, options, clips, sample_rate[, layout=None]) -> option index``;
each task binds its own as the class attribute ``listener`` (``auralgen.tasks``), and
:func:`auralgen.validation.listener.answer` calls it. This package imports only
:mod:`auralgen.core`, :mod:`auralgen.measure` and :mod:`auralgen.synth`: geometry a listener
needs (a microphone array's offsets) comes in as an argument bound by the task.
"""
