"""auralgen: regenerable fine-grained audio-perception benchmarks."""

from auralgen.core.numba_cache import use_shared_cache

use_shared_cache()  # before any kernel compiles: make, generate.py and auralgen share one numba cache

__version__ = "0.2.3"
