"""Rows of a frame's column arrays compared and overwritten without touching the arrays handed out.

A column array here is what the device frame is built from: an ``ArrowStringArray``, a masked
(``Int64``, ``boolean``) array, or a numpy array (object or float64). Overwriting returns a new
array and never changes the old one, which frames already handed out may share. A string column
is copied only in the chunks its rows fall into (chunks of at most ``2 * CHUNK_ROWS`` rows, the
rest shared); the other kinds are copied whole (one memcpy: pandas needs them contiguous).

A span is ``(start, new_start, rows)``: rows ``start:start + rows`` of the old array take rows
``new_start:new_start + rows`` of the new one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray
from pandas.core.arrays.masked import BaseMaskedArray

CHUNK_ROWS = 8192

Span = tuple[int, int, int]


def comparable(old: Any, new: Any) -> bool:
    """Whether ``new``'s rows can overwrite ``old``'s as they are (same kind, dtype and Arrow type)."""
    if type(old) is not type(new) or old.dtype != new.dtype:
        return False
    if isinstance(old, ArrowStringArray):
        return old._pa_array.type == new._pa_array.type
    return isinstance(old, (BaseMaskedArray, np.ndarray))


def missing(like: Any, rows: int) -> Any:
    """An array of ``rows`` missing values of ``like``'s kind, dtype and Arrow type; None for float64
    (whose dtype a rebuild may change) and kinds not handled here."""
    if isinstance(like, ArrowStringArray):
        return ArrowStringArray(pa.chunked_array([pa.nulls(rows, like._pa_array.type)]))
    if isinstance(like, BaseMaskedArray):
        return type(like)(np.zeros(rows, dtype=like._data.dtype), np.ones(rows, dtype=bool))
    if isinstance(like, np.ndarray) and like.dtype == object:
        return np.full(rows, None, dtype=object)
    return None


def all_null(array: Any, start: int, rows: int) -> bool:
    """Whether rows ``start:start + rows`` are all missing."""
    if isinstance(array, ArrowStringArray):
        return array._pa_array.slice(start, rows).null_count == rows
    if isinstance(array, BaseMaskedArray):
        return bool(array._mask[start:start + rows].all())
    return bool(pd.isna(array[start:start + rows]).all())


def same_rows(old: Any, new: Any, spans: list[Span]) -> bool:
    """Whether ``old`` already holds ``new``'s rows at every span (``comparable`` arrays)."""
    for start, new_start, rows in spans:
        if isinstance(old, ArrowStringArray):
            if not old._pa_array.slice(start, rows).equals(new._pa_array.slice(new_start, rows)):
                return False
        elif isinstance(old, BaseMaskedArray):
            mask = old._mask[start:start + rows]
            if not np.array_equal(mask, new._mask[new_start:new_start + rows]):
                return False
            if not np.array_equal(old._data[start:start + rows][~mask], new._data[new_start:new_start + rows][~mask]):
                return False
        elif old.dtype == object:
            # Compared as Python values; type(x) is part of it so that True and 1 differ.
            a, b = old[start:start + rows].tolist(), new[new_start:new_start + rows].tolist()
            if a != b or [type(x) for x in a] != [type(x) for x in b]:
                return False
        elif not np.array_equal(old[start:start + rows], new[new_start:new_start + rows], equal_nan=True):
            return False
    return True


def overwritten(old: Any, new: Any, spans: list[Span]) -> Any:
    """A new array: ``old`` with ``new``'s rows at the spans (``comparable`` arrays); ``old`` is unchanged."""
    if isinstance(old, ArrowStringArray):
        return ArrowStringArray(_arrow_overwritten(old._pa_array, new._pa_array, spans))
    if isinstance(old, BaseMaskedArray):
        data, mask = old._data.copy(), old._mask.copy()
        for start, new_start, rows in spans:
            data[start:start + rows] = new._data[new_start:new_start + rows]
            mask[start:start + rows] = new._mask[new_start:new_start + rows]
        return type(old)(data, mask)
    out = old.copy()
    for start, new_start, rows in spans:
        out[start:start + rows] = new[new_start:new_start + rows]
    return out


def _arrow_overwritten(old: pa.ChunkedArray, new: pa.ChunkedArray, spans: list[Span]) -> pa.ChunkedArray:
    chunks = _bounded(old.chunks)
    new_array = new.combine_chunks() if new.num_chunks != 1 else new.chunk(0)
    ends = np.cumsum([len(c) for c in chunks])  # chunk lengths do not change below
    for start, new_start, rows in spans:
        if not rows:
            continue
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(ends, start + rows - 1, side="right"))
        for i in range(first, last + 1):
            chunk = chunks[i]
            chunk_start = int(ends[i]) - len(chunk)
            a, b = max(start, chunk_start), min(start + rows, int(ends[i]))
            chunks[i] = pa.concat_arrays([
                chunk.slice(0, a - chunk_start),
                new_array.slice(new_start + a - start, b - a),
                chunk.slice(b - chunk_start),
            ])
    return pa.chunked_array(chunks, type=old.type)


def _bounded(chunks: list[pa.Array]) -> list[pa.Array]:
    """The chunks with each longer than ``2 * CHUNK_ROWS`` cut (without a copy) into ``CHUNK_ROWS`` pieces."""
    out: list[pa.Array] = []
    for chunk in chunks:
        if len(chunk) <= 2 * CHUNK_ROWS:
            out.append(chunk)
            continue
        out += [chunk.slice(i, CHUNK_ROWS) for i in range(0, len(chunk), CHUNK_ROWS)]
    return out
