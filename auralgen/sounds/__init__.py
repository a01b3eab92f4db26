"""Sound sources: the signals tasks place, grouped in palettes (see :mod:`auralgen.sounds.base`).

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

from auralgen.sounds.base import PALETTES, Palette, SoundSource, palette, register_source

__all__ = ["PALETTES", "Palette", "SoundSource", "palette", "register_source"]
