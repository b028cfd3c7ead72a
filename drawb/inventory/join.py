"""The one join of claim allocations onto a device frame, for frames built from lists and live ones alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from drawb.inventory._frame import Allocations, object_array, string_array

ALLOCATION_COLUMNS = ("claim", "request", "reserved_for")

# Up to this many rows, look every row up in the table; above it, only the rows whose device name
# is allocated somewhere (one vectorized membership test first).
_ROW_BY_ROW = 4096


def allocation_values(entry: tuple[list[str], list[str], list[str]] | None) -> tuple[Any, Any, Any]:
    """The ``claim``, ``request`` and ``reserved_for`` values of one device's allocation entry."""
    if not entry:
        return None, None, None
    return ", ".join(entry[0]), ", ".join(entry[1]), list(entry[2])


def allocation_columns(drivers: Any, pools: Any, devices: Any, table: Allocations) -> dict[str, Any]:
    """The allocation columns of rows given by their ``driver``, ``pool`` and ``device`` string arrays."""
    n = len(devices)
    claim: list = [None] * n
    request: list = [None] * n
    reserved: list = [None] * n
    if table:
        if n <= _ROW_BY_ROW:
            rows: Any = range(n)
        else:
            names = pa.array({device for _, _, device in table}, type=pa.large_string())
            rows = rows_in(devices, names)
        for row, key in zip(rows, _keys(drivers, pools, devices, rows)):
            claim[row], request[row], reserved[row] = allocation_values(table.get(key))
    return {"claim": string_array(claim), "request": string_array(request), "reserved_for": object_array(reserved)}


def rows_in(values: Any, names: Any) -> np.ndarray:
    """Positions of the rows of a string column whose value is one of ``names`` (an Arrow array)."""
    found = pc.is_in(_arrow(values), value_set=names)
    return np.flatnonzero(np.asarray(pc.fill_null(found, False), dtype=bool))


def _arrow(values: Any) -> Any:
    """The Arrow data of a string column (a Series, a pandas Arrow array, or Arrow already)."""
    if isinstance(values, pd.Series):
        values = values.array
    return values._pa_array if isinstance(values, pd.arrays.ArrowStringArray) else pa.array(values)


def _keys(drivers: Any, pools: Any, devices: Any, rows: Any) -> list[tuple[str, str, str]]:
    """(driver, pool, device) of the given rows."""
    if isinstance(rows, range) and len(rows) == len(devices):
        columns = [_arrow(c).to_pylist() for c in (drivers, pools, devices)]
    else:
        index = pa.array(np.asarray(rows, dtype=np.int64))
        columns = [_arrow(c).take(index).to_pylist() for c in (drivers, pools, devices)]
    return list(zip(*columns))


def join_allocations(frame: pd.DataFrame, table: Allocations, problems: list[str] = ()) -> pd.DataFrame:
    """A copy of ``frame`` whose ``claim``, ``request`` and ``reserved_for`` come from ``table``
    (``drawb.inventory.claims.allocations``); a device absent from it is free. ``problems`` found
    while reading the claims are added to the frame's."""
    out = frame.copy(deep=False)
    for column, values in allocation_columns(frame["driver"], frame["pool"], frame["device"], table).items():
        out[column] = values
    if problems:
        info = frame.attrs["drawb"]
        out.attrs = {**frame.attrs, "drawb": {**info, "problems": [*info["problems"], *problems]}}
    return out
