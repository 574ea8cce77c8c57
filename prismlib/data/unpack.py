"""From a download to a canonical file: a member of a zip / tar archive, or the
lines of parquet shards that hold one row per line of the original file.

The parquet path is the Hugging Face hub's conversion of text datasets such as
``Salesforce/wikitext``: its ``datasets`` loading script yielded each line of the
original file, line end included, as a row of column ``text``, and a line of only
whitespace as an empty string (huggingface/datasets, ``datasets/wikitext/wikitext.py``,
``_generate_examples``). :func:`lines_from_rows` undoes that, given what an empty
row stood for (``" \\n"`` in WikiText, whose blank lines are a single space).
Reading parquet needs ``pyarrow``, imported only on this path.
"""

from __future__ import annotations

import importlib
import shutil
import tarfile
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from .datadir import ChecksumError

_CHUNK = 1 << 20
PYARROW_HINT = "pip install pyarrow  (or: pip install -e '.[parquet]')"


def copy_member(archive: Path, member: str | None, out: IO[bytes]) -> None:
    """Copy ``member`` of a .zip / .tar(.gz) / .tgz archive into ``out`` (the whole
    file when ``member`` is None).

    Raises:
        ChecksumError: the archive has no such member.
    """
    src: IO[bytes] | None  # a file, a zip member or a tar member (None: not a file)
    if member is None:
        with open(archive, "rb") as src:
            shutil.copyfileobj(src, out, _CHUNK)
        return
    want = member.removeprefix("./")
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            if want in zf.namelist():
                with zf.open(want) as src:
                    shutil.copyfileobj(src, out, _CHUNK)
                return
    else:
        with tarfile.open(archive) as tf:
            for m in tf:
                if m.isfile() and m.name.removeprefix("./") == want:
                    src = tf.extractfile(m)
                    assert src is not None
                    shutil.copyfileobj(src, out, _CHUNK)
                    return
    raise ChecksumError(f"{archive} has no member {member!r}")


def lines_from_rows(rows: Iterable[str | None], empty_row: str) -> Iterator[str]:
    """The original file's lines from its rows: a row is a line with its line end; an
    empty (or null) row stands for ``empty_row``."""
    for row in rows:
        yield row if row else empty_row


def require_pyarrow(what: str) -> None:
    """Raise a clear ImportError, naming ``what`` needs it, when pyarrow is missing."""
    try:
        importlib.import_module("pyarrow.parquet")
    except ImportError as err:
        raise ImportError(f"{what} comes from parquet files, and reading them needs pyarrow: {PYARROW_HINT}") from err


def write_parquet_lines(shards: Sequence[Path], out: IO[bytes], *, column: str, empty_row: str) -> None:
    """Write the lines of ``column`` of every shard, in order, to ``out`` as UTF-8.

    Reads one record batch at a time (WikiText-103 train: 1.8M rows in two shards).

    Raises:
        ImportError: pyarrow is not installed (says how to install it).
        ChecksumError: a shard is not readable parquet or lacks ``column``.
    """
    require_pyarrow(", ".join(p.name for p in shards))
    for shard in shards:
        for rows in _row_batches(shard, column):
            out.write("".join(lines_from_rows(rows, empty_row)).encode("utf-8"))


def _row_batches(shard: Path, column: str) -> Iterator[list[str | None]]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(shard)
        names = parquet.schema_arrow.names
        if column not in names:
            raise ChecksumError(f"{shard} has no column {column!r} (columns: {names})")
        for batch in parquet.iter_batches(columns=[column]):
            yield batch.column(0).to_pylist()
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise ChecksumError(f"{shard} is not a readable parquet file: {err}") from err
