"""The public export: ``<out>/public/``, a dataset directory holding only what a model may see.

Its shards keep the public columns of :mod:`auralgen.core.schema` (``public=True``: id, task,
question, options, audio, sample rate, channels, layout, split ...), with each shard's rows in id
order (the full export is in plan order, which follows the difficulty level); its card lists the
columns that must never reach a model (the answer and everything that states or predicts it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auralgen.core.schema import columns, public_columns
from auralgen.export.parquet import FEATURES, SCHEMA, sha256_file

PUBLIC_DIR = "public"
CARD = "README.md"
PUBLIC = public_columns()
PUBLIC_SCHEMA = pa.schema(
    [SCHEMA.field(name) for name in PUBLIC],
    metadata={"huggingface": json.dumps({"info": {"features": {n: FEATURES[n] for n in PUBLIC}}})},
)


def public_files(shard_paths: list[str]) -> list[str]:
    """The files the public export writes (relative to ``out``), for the run's record of its files.

    Parameters
    ----------
    shard_paths : list of str
        The full export's shard paths, relative to ``out``.

    Returns
    -------
    list of str
        Each shard path under ``public/``, then the public card ``public/README.md``.

    Examples
    --------
    >>> public_files(["data/pitch_relative/test-00000-of-00001.parquet"])
    ['public/data/pitch_relative/test-00000-of-00001.parquet', 'public/README.md']
    """
    return [f"{PUBLIC_DIR}/{p}" for p in shard_paths] + [f"{PUBLIC_DIR}/{CARD}"]


def write_public_shard(out: Path, path: str) -> dict[str, Any]:
    """Shard ``path`` of ``out`` without its non-public columns, rows sorted by id, written under ``out/public``.

    Parameters
    ----------
    out : Path
        The local dataset folder.
    path : str
        The full shard's path relative to ``out``.

    Returns
    -------
    dict of str to Any
        The public shard's record: ``path`` (relative to ``out``), ``rows`` and ``sha256`` (hex).
    """
    src, dst = out / path, out / PUBLIC_DIR / path
    table = pq.read_table(src, columns=list(PUBLIC)).sort_by("id")
    table = pa.Table.from_arrays(table.columns, schema=PUBLIC_SCHEMA)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd", use_dictionary=False, write_statistics=False)
    tmp.replace(dst)
    return {"path": f"{PUBLIC_DIR}/{path}", "rows": table.num_rows, "sha256": sha256_file(dst)}


def card_text(pretty_name: str) -> str:
    """The public card: what the shards hold and which columns must never reach a model.

    Parameters
    ----------
    pretty_name : str
        The dataset's display name, used in the title.

    Returns
    -------
    str
        The card's markdown.
    """
    kept = [c for c in columns() if c.public]
    withheld = [c for c in columns() if not c.public]
    lines = [
        f"# {pretty_name} (public export)",
        "",
        "The items a model may see: no answer, no recipe, no measurement, no difficulty level. Rows are in",
        "id order. Score a model's replies against the full export (the parent directory), by `id`.",
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        *(f"| `{c.name}` | {c.doc.split(':')[0] if c.arrow == 'list<audio>' else c.doc} |" for c in kept),
        "",
        "## Columns that must never reach a model",
        "",
        "These columns of the full export state or predict the answer; they are left out here and must",
        "not be shown to a model under evaluation:",
        "",
        *(f"- `{c.name}`: {c.doc.split(';')[0].split(':')[0]}" for c in withheld),
        "",
    ]
    return "\n".join(lines)


def write_public(out: Path, shard_paths: list[str], pretty_name: str) -> list[dict[str, Any]]:
    """Write ``out/public/``: one public shard per full shard and the public card; returns the shard records.

    Parameters
    ----------
    out : Path
        The local dataset folder holding the full shards.
    shard_paths : list of str
        The full shards' paths relative to ``out``.
    pretty_name : str
        The dataset's display name, for the card's title.

    Returns
    -------
    list of dict of str to Any
        One record per public shard, as :func:`write_public_shard` returns, in ``shard_paths`` order.
    """
    records = [write_public_shard(out, p) for p in shard_paths]
    (out / PUBLIC_DIR / CARD).write_text(card_text(pretty_name), encoding="utf-8")
    return records
