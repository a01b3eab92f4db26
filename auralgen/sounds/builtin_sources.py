"""The source kinds auralgen ships (``source=procedural|folder|hf|clips|soundfont``).

=============  ==================================================  =======================
kind           reads                                               entries are labelled
=============  ==================================================  =======================
procedural     nothing: the tasks synthesize their sounds          --
folder         ``source.dir``: an ``audiofolder``-style corpus     yes (column or folder)
hf             ``source.path``: a local Hugging Face dataset       yes (``label_column``)
clips          ``source.dir``: a user's recordings                 no
soundfont      ``source.soundfont``: notes of a General MIDI bank  yes (the instrument)
=============  ==================================================  =======================
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.sounds.corpus_files import decoded, file_entries, folder_items, hf_items
from auralgen.sounds.source_kind import Entry, SourceConfig, SourceKind, register_source_kind

INSTALL_HINT = "source=clips needs librosa (pitch shift, time stretch); install it with: pip install 'auralgen[clips]'"
_COMMON = ("license", "classes", "min_duration_s")  # what every recorded kind reads
_FILE_FIELDS = ("label_column", "license_column", "attribution_column", "on_bad", *_COMMON)


@register_source_kind
class Procedural(SourceKind):
    """Synthesized sounds: no corpus, nothing read."""

    name = "procedural"
    recorded = False


class FileSource(SourceKind):
    """A corpus of audio files whose recipes name a file (or an HF row) and its hash."""

    root_field = "dir"

    def check(self, cfg: SourceConfig) -> None:
        if getattr(cfg, self.root_field) is None:
            key = self.root_key
            raise ParameterError(f"{key} is missing; allowed: {key}=<folder> with source={cfg.kind}")

    def root(self, cfg: SourceConfig) -> Path:
        return Path(getattr(cfg, self.root_field))

    def entries(self, cfg: SourceConfig, root: Path) -> tuple[list[Entry], list[tuple[str, str]]]:
        return file_entries(cfg, folder_items(cfg, root), self.root_key, labelled=self.labelled)

    def read(self, spec: dict[str, Any], sample_rate: int, shift_cents: float) -> np.ndarray:
        return decoded(spec["root"], spec["file"], spec["sha256"], sample_rate, spec.get("audio_column", "audio"))


@register_source_kind
class Folder(FileSource):
    """An ``audiofolder``-style labelled corpus (``source.dir``)."""

    name = "folder"
    labelled = True
    fields = ("dir", *_FILE_FIELDS)


@register_source_kind
class Clips(FileSource):
    """A user's recordings (``source.dir``), labels not needed; moved in pitch and time by librosa."""

    name = "clips"
    fields = ("dir", *_FILE_FIELDS)

    def check(self, cfg: SourceConfig) -> None:
        super().check(cfg)
        if importlib.util.find_spec("librosa") is None:
            raise ParameterError(INSTALL_HINT)


@register_source_kind
class HFDataset(FileSource):
    """A local Hugging Face dataset (``source.path``: a ``save_to_disk`` folder or parquet files);
    the recipe names the audio column, from which the row is decoded again."""

    name = "hf"
    labelled = True
    fields = ("path", "audio_column", *_FILE_FIELDS)
    root_field = "path"
    root_key = "source.path"

    def entries(self, cfg: SourceConfig, root: Path) -> tuple[list[Entry], list[tuple[str, str]]]:
        extra = (("audio_column", cfg.audio_column),)
        return file_entries(cfg, hf_items(cfg, root), self.root_key, labelled=True, extra=extra)


@register_source_kind
class SoundFont(SourceKind):
    """Notes of a General MIDI SoundFont rendered by FluidSynth (:mod:`auralgen.sounds.soundfont`),
    labelled by instrument; a note is read from its onset and played at a shifted pitch."""

    name = "soundfont"
    labelled = True
    from_start = True
    plays_shifted = True
    fields = ("soundfont", "programs", "notes", "velocities", "note_s", *_COMMON)
    root_key = "source.soundfont"

    def check(self, cfg: SourceConfig) -> None:
        from auralgen.sounds import soundfont

        soundfont.check_installed(str(self.root(cfg)))

    def root(self, cfg: SourceConfig) -> Path:
        from auralgen.sounds.soundfont import DEFAULT_SF2

        return Path(cfg.soundfont or DEFAULT_SF2)

    def entries(self, cfg: SourceConfig, root: Path) -> tuple[list[Entry], list[tuple[str, str]]]:
        from auralgen.sounds.soundfont import note_entries

        return [Entry(**e) for e in note_entries(cfg, str(root))], []

    def read(self, spec: dict[str, Any], sample_rate: int, shift_cents: float) -> np.ndarray:
        from auralgen.sounds.soundfont import render

        return render(spec, sample_rate, shift_cents)
