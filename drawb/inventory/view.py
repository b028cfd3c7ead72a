"""The device frame as a person reads it first, shared by ``%dra devices``, ``drawb devices`` and the widgets."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from drawb.inventory.schema import capacity_column, qualify


def per_driver(frame: pd.DataFrame, attribute: str, capacity: bool = False) -> pd.Series:
    """Per row, the row's driver's own attribute (or capacity) ``name`` (NA where it has none)."""
    out = pd.Series(pd.NA, index=frame.index, dtype="object")
    for driver in frame["driver"].dropna().unique():
        column = capacity_column(qualify(attribute, driver)) if capacity else qualify(attribute, driver)
        if column in frame:
            rows = frame["driver"] == driver
            out[rows] = frame.loc[rows, column].astype("object")
    return out


def summary_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns a person reads first: where, what, how big, and who has it."""
    view = pd.DataFrame(
        {
            "node": frame["node"],
            "driver": frame["driver"],
            "device": frame["device"],
            "type": _per_driver_text(frame, "type"),  # <NA>, never nan, where a driver has none
            "product": _per_driver_text(frame, "productName"),
            "memory": _per_driver_text(frame, "memory", capacity=True),
            "profile": _per_driver_text(frame, "profile"),
        },
        index=frame.index,
    )
    if "claim" in frame:
        view["claim"] = frame["claim"]
    if "reserved_for" in frame:
        pods = frame["reserved_for"].to_numpy(dtype=object)
        texts: list = [None] * len(pods)
        for row in np.flatnonzero(np.not_equal(pods, None)):
            texts[row] = ", ".join(pods[row]) or None
        view["reserved_for"] = pd.array(texts, dtype="string")
    order = np.lexsort((_ranks(view["device"], lambda name: _natural(_text(name))), _ranks(view["node"], _text)))
    view = view.take(order).dropna(axis="columns", how="all").reset_index(drop=True)
    view.attrs = frame.attrs
    return view


def _arrow(values: pd.Series) -> pa.ChunkedArray:
    """A string column's Arrow data."""
    return pa.chunked_array([pa.array(values.astype("string").array, type=pa.large_string())]) \
        if not isinstance(values.array, pd.arrays.ArrowStringArray) else values.array._pa_array


def _per_driver_text(frame: pd.DataFrame, attribute: str, capacity: bool = False) -> pd.Series:
    """``per_driver`` as strings, column by column in Arrow (no per-row Python)."""
    drivers = _arrow(frame["driver"])
    out: pa.ChunkedArray | pa.Array = pa.nulls(len(frame), pa.large_string())
    for driver in pc.unique(drivers).to_pylist():
        if driver is None:
            continue
        column = capacity_column(qualify(attribute, driver)) if capacity else qualify(attribute, driver)
        if column in frame:
            rows = pc.fill_null(pc.equal(drivers, driver), False)
            out = pc.if_else(rows, _arrow(frame[column]), out)
    return pd.Series(pd.arrays.ArrowStringArray(out if isinstance(out, pa.ChunkedArray) else pa.chunked_array([out])),
                     index=frame.index)


def _ranks(values: pd.Series, key) -> np.ndarray:
    """Per row, the rank of ``key(value)`` among the column's distinct values (equal keys, equal ranks):
    the few distinct names are sorted in Python, the rows ranked in C."""
    encoded = pc.dictionary_encode(_arrow(values)).combine_chunks()
    keys = [key(v) for v in encoded.dictionary.to_pylist()]
    missing = key(pd.NA)
    ranked = {k: i for i, k in enumerate(sorted({*keys, missing}))}
    table = np.array([ranked[k] for k in keys] + [ranked[missing]], dtype=np.int64)
    indices = pc.fill_null(encoded.indices, len(keys)).to_numpy(zero_copy_only=False)
    return table[indices]


def _text(value: object) -> str:
    """A name for sorting; a missing one (NA) sorts first."""
    return value if isinstance(value, str) else ""


@lru_cache(maxsize=4096)  # device names repeat from node to node (gpu-0, gpu-1, ...)
def _natural(name: str) -> tuple:
    """Sort key that puts ``gpu-2`` before ``gpu-10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
