"""auralgen: regenerable fine-grained audio-perception benchmarks."""

__version__ = "0.2.1"
