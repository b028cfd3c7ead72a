"""Slice blocks to one typed device DataFrame, column by column (no per-row pandas work)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from drawb.inventory._quantity import quantity_value
from drawb.inventory._read import DeviceColumns
from drawb.inventory.schema import ALLOW_MULTIPLE, ATTRIBUTE_TYPES, capacity_column, capacity_value_column

MAX_PROBLEMS_IN_ATTRS = 100

_STRING = pd.StringDtype()
_INT64 = pd.Int64Dtype()
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

# (driver, pool, device) -> (claims "ns/name", requests, reserved-for pod names)
Allocations = dict[tuple[str, str, str], tuple[list[str], list[str], list[str]]]


def string_array(values: Iterable[Any] | np.ndarray) -> pd.api.extensions.ExtensionArray:
    """A pandas string (pd.NA) array from str/None values, converted in C by pyarrow."""
    return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string()))


def int_array(values: list[int | None]) -> pd.api.extensions.ExtensionArray:
    """A pandas Int64 array from int/None values."""
    return pa.array(values, type=pa.int64()).to_pandas(types_mapper={pa.int64(): _INT64}.get).array


def bool_array(values: list[bool | None]) -> pd.api.extensions.ExtensionArray:
    """A pandas boolean array from bool/None values."""
    if None not in values:
        return pd.arrays.BooleanArray(np.array(values, dtype=bool), np.zeros(len(values), dtype=bool))
    return pd.array(values, dtype="boolean")


def object_array(values: list[Any]) -> np.ndarray:
    """A 1-D object array that keeps lists and dicts as items."""
    return np.fromiter(values, dtype=object, count=len(values))


def sparse_object_array(values: dict[int, Any], n: int) -> np.ndarray:
    """An object array of `n` Nones with the given rows set (lists and dicts kept as items)."""
    out = np.full(n, None, dtype=object)
    for row, value in values.items():
        out[row] = value
    return out


def quantity_values(texts: Any, table: dict | None = None) -> Any:
    """Exact values of quantity strings: Int64 when all are integral and fit int64, else float64.

    `texts` is a list of str/None or an Arrow string array; `table` may hold the strings' values
    already. The distinct strings are few, so the values go through Arrow's dictionary encoding.
    """
    strings = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, type=pa.large_string())
    encoded = strings.dictionary_encode()
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    distinct = encoded.dictionary.to_pylist()
    if table is None:
        table = {}
    exact = [table[t] if t in table else quantity_value(t) for t in distinct]
    if all(type(v) is int and _INT64_MIN <= v <= _INT64_MAX for v in exact):
        values = pa.array(exact, type=pa.int64()).take(encoded.indices)
        return values.to_pandas(types_mapper={pa.int64(): _INT64}.get).array
    floats = pa.array([np.nan if v is None else float(v) for v in exact], type=pa.float64())
    return floats.take(encoded.indices).to_numpy(zero_copy_only=False)


def build_frame(
    columns: DeviceColumns,
    complete: list[bool],
    problems: list[str],
) -> pd.DataFrame:
    """The device frame of finished columns (slices already filtered to current pool generations), every
    device free (``join_allocations`` fills the allocation columns)."""
    data, info = build_arrays(columns, complete, problems)
    frame = pd.DataFrame(data, copy=False)
    frame.attrs["drawb"] = info
    return frame


def build_arrays(
    columns: DeviceColumns,
    complete: list[bool],
    problems: list[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The device frame's column arrays by name, and its ``attrs["drawb"]``."""
    headers = columns.headers
    counts = np.fromiter((h.rows for h in headers), dtype=np.int64, count=len(headers))
    n = columns.n
    data: dict[str, Any] = {}
    # Per-slice values repeated per row: convert the few distinct strings, then take in C.
    slice_of_row = pa.array(np.repeat(np.arange(len(headers)), counts))
    for name, attr in (("node", "node"), ("driver", "driver"), ("pool", "pool"), ("slice", "name")):
        if name == "node" and columns.node_of_row:
            data[name] = string_array(columns.nodes())
            continue
        per_slice = pa.array([getattr(h, attr) for h in headers], type=pa.large_string())
        data[name] = pd.arrays.ArrowStringArray(per_slice.take(slice_of_row))
    data["device"] = string_array(columns.devices)

    attribute_types: dict[str, str] = {}
    list_kinds: dict[str, str] = {}
    for column in sorted(columns.attrs):
        kind, values = columns.attrs[column]
        kind_type = ATTRIBUTE_TYPES[kind]
        attribute_types[column] = kind_type
        if kind_type in ("string", "version"):
            data[column] = string_array(values)
        elif kind_type == "int":
            data[column] = int_array(values)
        elif kind_type == "bool":
            data[column] = bool_array(values)
        else:
            list_kinds[column] = kind
            data[column] = object_array(values)

    capacities = sorted(columns.caps)
    for qualified in capacities:
        texts = columns.caps[qualified]
        strings = string_array(texts)
        data[capacity_column(qualified)] = strings
        data[capacity_value_column(qualified)] = quantity_values(
            strings._pa_array, columns.cap_values.get(qualified)
        )

    allow, invalid = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    for row, value in columns.allow_multi.items():
        if value is None:
            invalid[row] = True
        else:
            allow[row] = value
    data[ALLOW_MULTIPLE] = pd.arrays.BooleanArray(allow, invalid)
    data["taints"] = sparse_object_array(columns.taints, n)
    data["consumes_counters"] = sparse_object_array(columns.consumes, n)
    data["request_policy"] = sparse_object_array(columns.policies, n)
    flags = np.repeat(np.array(complete, dtype=bool), counts)
    data["pool_complete"] = pd.arrays.BooleanArray(flags, np.zeros(n, dtype=bool))
    data["claim"] = pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()))
    data["request"] = pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()))
    data["reserved_for"] = np.full(n, None, dtype=object)

    return data, frame_attrs(attribute_types, list_kinds, capacities, problems)


def frame_attrs(
    attribute_types: dict[str, str], list_kinds: dict[str, str], capacities: list[str], problems: list[str]
) -> dict[str, Any]:
    """The frame's ``attrs["drawb"]``, kept small (pandas deep-copies attrs)."""
    shown = list(problems[:MAX_PROBLEMS_IN_ATTRS])
    if len(problems) > MAX_PROBLEMS_IN_ATTRS:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS_IN_ATTRS} more problems")
    return {
        "attributes": dict(attribute_types),
        "lists": dict(list_kinds),
        "capacities": list(capacities),
        "problems": shown,
    }
