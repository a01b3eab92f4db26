"""Sound kinds: the signals tasks place, grouped in palettes (see :mod:`auralgen.sounds.base`);
where a run's sounds come from is its source (:mod:`auralgen.sounds.source_kind`).

========  ====================================  ==========================================
palette   kinds                                 module
========  ====================================  ==========================================
tones     pure, harmonic, noise                 :mod:`auralgen.sounds.tones`
events    harmonic, noise, sweep, clicks,       :mod:`auralgen.sounds.events`
          knocks
spatial   noise, harmonic, chirp, clicks, file  :mod:`auralgen.sounds.spatial`, ``files``
reorder   sweep, filling, approaching,          :mod:`auralgen.sounds.processes`
          bouncing, scale
========  ====================================  ==========================================
"""

from auralgen.sounds.base import PALETTES, Palette, SoundKind, palette, register_sound_kind

__all__ = ["PALETTES", "Palette", "SoundKind", "palette", "register_sound_kind"]
