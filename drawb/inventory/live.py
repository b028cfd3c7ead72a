"""A device frame kept current under ResourceSlice add/update/delete events without full rebuilds.

Rows are grouped by slice in the order the slices were added. An event re-reads only the slices
whose rows change (the slice itself, plus the other slices of its pool when the pool's newest
generation or completeness changes). When their row counts stay (the common update), only the
columns whose values changed (or that the update brings) are overwritten at those rows (``_overwrite``: copy-on-write, the
frames handed out keep theirs); otherwise their rows are spliced in, column by column. The
pandas frame is built on the next read, not per event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from drawb.inventory._frame import (
    Allocations,
    build_arrays,
    frame_attrs,
    object_array,
    quantity_values,
    string_array,
)
from drawb.inventory._overwrite import Span, all_null, comparable, missing, overwritten, same_rows
from drawb.inventory._read import (
    SliceHeader,
    device_list,
    list_items,
    read_columns,
    read_header,
    slice_name,
)
from drawb.inventory.join import allocation_columns, allocation_values
from drawb.inventory.pools import pool_states
from drawb.inventory.schema import (
    IDENTITY,
    TRAILING,
    VALUE_SUFFIX,
    capacity_column,
    capacity_name,
    capacity_value_column,
    is_capacity_column,
)

# pandas 3 always copies on write, and takes blocks as they are (pandas.api.internals). pandas 2.2 and 2.3 (no
# copy-on-write by default, no pandas.api.internals) build the frame from the columns and hand out deep copies.
PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3
if PANDAS_3:
    from pandas.api.internals import create_dataframe_from_blocks

_MAX_CHUNKS = 16


def _owner(problem: str) -> str:
    """The slice name a problem message starts with (``ResourceSlice '<name>' ...``)."""
    return problem.split("'", 2)[1]


class DeviceInventory:
    """The device frame of a changing set of ResourceSlices, fed by list + watch events.

    ``frame`` equals ``device_frame(inventory.slices())``, with one exception: when two slices
    publish one attribute with different types, the type seen first is kept. Given an allocation
    table (``drawb.inventory.claims.allocations``, or a live ``AllocationTable.table``), rows read
    from slices get their allocation columns from it, and ``reallocate`` re-joins rows after the
    table changed: the frame then equals ``join_allocations(device_frame(slices), table)``.
    """

    def __init__(self, slices: Any = (), allocations: Allocations | None = None) -> None:
        self.allocations = allocations  # kept current by the caller: see ``reallocate``
        self._objects: dict[str, dict] = {}
        self._headers: dict[str, SliceHeader] = {}
        self._pools: dict[tuple[str, str], set[str]] = {}
        self._rows: dict[str, int] = {}  # visible rows per slice, in frame order
        self._positions: dict[str, int] | None = None  # slice -> its place in self._rows (None: to recount)
        self._ends: np.ndarray | None = None  # cumulative rows per slice in self._rows order (None: to recount)
        self._visible: dict[str, bool] = {}
        self._complete: dict[str, bool] = {}
        self._header_problems: dict[str, list[str]] = {}
        self._device_problems: dict[str, list[str]] = {}
        self._types: dict[str, str] = {}
        self._lists: dict[str, str] = {}
        self._capacities: set[str] = set()
        self._arrays: dict[str, Any] = {}
        for obj in list_items(slices):
            self._remember(slice_name(obj, len(self._objects)), obj)
        self._frame: pd.DataFrame | None = self._build_all()

    @property
    def frame(self) -> pd.DataFrame:
        """The current device frame; changing the returned frame copies it (copy-on-write; a deep copy
        before pandas 3) and leaves the inventory alone."""
        if self._frame is None:
            self._frame = self._make_frame()
        return self._frame.copy(deep=not PANDAS_3)

    def slices(self) -> list[dict]:
        """The ResourceSlices held now, in frame order."""
        return list(self._objects.values())

    def problems(self) -> list[str]:
        """Every problem of the slices held now."""
        out: list[str] = []
        for table in (self._header_problems, self._device_problems):
            for problems in table.values():
                out += problems
        return out

    def apply(self, event_type: str, obj: dict) -> None:
        """Apply one watch event: ADDED or MODIFIED upserts, DELETED deletes, others are ignored."""
        if event_type in ("ADDED", "MODIFIED"):
            self.upsert(obj)
        elif event_type == "DELETED":
            self.delete(slice_name(obj, 0))

    def upsert(self, obj: dict) -> None:
        """Add or replace one ResourceSlice."""
        name = slice_name(obj, len(self._objects))
        pools = self._forget_header(name) | self._remember(name, obj)
        self._refresh(name, pools)

    def delete(self, name: str) -> None:
        """Remove one ResourceSlice by name (an unknown name is ignored)."""
        if name not in self._objects:
            return
        pools = self._forget_header(name)
        del self._objects[name]
        self._header_problems.pop(name, None)
        self._refresh(name, pools)
        del self._rows[name]
        self._positions = self._ends = None
        for table in (self._visible, self._complete, self._device_problems):
            table.pop(name, None)

    def reallocate(self, devices: Iterable[tuple[str, str, str]]) -> None:
        """Re-join the allocation columns of these (driver, pool, device) rows from ``allocations``,
        which changed for them; the other rows are left as they are."""
        wanted = set(devices)
        if not wanted or not self._arrays or not len(self._arrays["device"]):
            return
        # The rows of the devices' pools are those of the pools' visible slices: few, and found by offset.
        names = {n for driver, pool, _ in wanted for n in self._pools.get((driver, pool), ()) if self._visible.get(n)}
        table = self.allocations or {}
        rows, values = [], []
        devices_now = self._arrays["device"]._pa_array
        for name, start, stop in self._spans(names)[0]:
            header = self._headers[name]
            for row, device in enumerate(devices_now.slice(start, stop - start).to_pylist(), start):
                key = (header.driver, header.pool, device)
                if key in wanted:
                    rows.append(row)
                    values.append(allocation_values(table.get(key)))
        if not rows:
            return
        spans = [(row, i, 1) for i, row in enumerate(rows)]
        joined = {"claim": string_array([v[0] for v in values]), "request": string_array([v[1] for v in values]),
                  "reserved_for": object_array([v[2] for v in values])}
        for column, new in joined.items():
            if not same_rows(self._arrays[column], new, spans):
                self._arrays[column] = overwritten(self._arrays[column], new, spans)
        self._frame = None

    # -- bookkeeping -------------------------------------------------------------------------

    def _remember(self, name: str, obj: dict) -> set[tuple[str, str]]:
        problems: list[str] = []
        header = read_header(obj, len(self._objects), problems)
        self._objects[name] = obj
        if name not in self._rows:
            self._rows[name] = 0
            self._positions = self._ends = None
        self._header_problems.pop(name, None)
        if problems:
            self._header_problems[name] = problems
        if header is None:
            return set()
        self._headers[name] = header
        key = (header.driver, header.pool)
        self._pools.setdefault(key, set()).add(name)
        return {key}

    def _forget_header(self, name: str) -> set[tuple[str, str]]:
        header = self._headers.pop(name, None)
        if header is None:
            return set()
        key = (header.driver, header.pool)
        self._pools[key].discard(name)
        if not self._pools[key]:
            del self._pools[key]
        return {key}

    def _read(self, names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Column arrays and attrs of the given visible slices; records their rows and device problems."""
        problems: list[str] = []
        lists = [(self._headers[n], device_list(self._objects[n], self._headers[n], problems)) for n in names]
        columns = read_columns(lists, problems)
        for problem in problems:
            self._device_problems.setdefault(_owner(problem), []).append(problem)
        for name, header in zip(names, columns.headers):
            self._rows[name] = header.rows
        data, info = build_arrays(columns, [self._complete[n] for n in names], problems)
        if self.allocations:
            data.update(allocation_columns(data["driver"], data["pool"], data["device"], self.allocations))
        return data, info

    def _build_all(self) -> pd.DataFrame:
        states = pool_states(self._headers.values())
        for name, header in self._headers.items():
            state = states[(header.driver, header.pool)]
            self._visible[name] = header.generation == state.generation
            self._complete[name] = state.complete
        self._arrays, info = self._read([n for n in self._headers if self._visible[n]])
        self._types = dict(info["attributes"])
        self._lists = dict(info["lists"])
        self._capacities = set(info["capacities"])
        return self._make_frame()

    def _make_frame(self) -> pd.DataFrame:
        frame = _frame_of(self._arrays)
        types = {c: self._types[c] for c in sorted(self._types)}
        frame.attrs["drawb"] = frame_attrs(types, dict(self._lists), sorted(self._capacities), self.problems())
        return frame

    # -- one event ---------------------------------------------------------------------------

    def _refresh(self, name: str, pools: set[tuple[str, str]]) -> None:
        """Re-read the slices whose rows change after an event on `name` and splice them in."""
        changed = {name}
        for key in pools:
            members = self._pools.get(key, set())
            if not members:
                continue
            state = pool_states(self._headers[m] for m in members)[key]
            for member in members:
                visible = self._headers[member].generation == state.generation
                if visible != self._visible.get(member) or (visible and state.complete != self._complete.get(member)):
                    changed.add(member)
                self._visible[member] = visible
                self._complete[member] = state.complete
        if name not in self._headers:
            self._visible[name] = False
        old_spans, total = self._spans(changed)
        for member in changed:
            self._rows[member] = 0
            self._device_problems.pop(member, None)
        readable = [m for m, _, _ in old_spans if self._visible.get(m) and m in self._headers]
        data, info = self._read(readable) if readable else ({}, {"attributes": {}, "lists": {}, "capacities": []})
        data = self._drop_type_conflicts(data, info)
        arrays = None
        if all(self._rows.get(member, 0) == stop - start for member, start, stop in old_spans):
            arrays = self._overwrite(old_spans, data, info)
        if arrays is None:
            arrays = self._splice(old_spans, data, info, total)
            self._ends = None
        self._arrays = arrays
        self._frame = None

    def _spans(self, names: set[str]) -> tuple[list[tuple[str, int, int]], int]:
        """(slice, start, stop) of the slices' rows now, in frame order; and the frame's rows."""
        if self._positions is None:
            self._positions = {n: i for i, n in enumerate(self._rows)}
            self._ends = None
        if self._ends is None:
            self._ends = np.cumsum(np.fromiter(self._rows.values(), dtype=np.int64, count=len(self._rows)))
        ends = self._ends
        places = sorted((self._positions[n], n) for n in names)
        spans = [(n, int(ends[i - 1]) if i else 0, int(ends[i])) for i, n in places]
        return spans, int(ends[-1]) if len(ends) else 0

    def _overwrite(self, old_spans: list[tuple[str, int, int]], data: dict[str, Any],
                   info: dict[str, Any]) -> dict[str, Any] | None:
        """The column arrays with the changed slices' rows overwritten by the block's, which has as many
        rows per slice (a column the block brings starts all missing); None where that is not the whole
        change (a column may go, a dtype changes, a float64 column may need retyping): then the rows
        are spliced instead."""
        if not self._arrays:
            return None
        old = dict(self._arrays)
        added = data.keys() - old.keys()
        for column in added:
            empty = missing(data[column], len(old["device"]))
            if empty is None:
                return None
            old[column] = empty
        spans: list[Span] = []
        new_start = 0
        for _, start, stop in old_spans:
            if stop > start:
                spans.append((start, new_start, stop - start))
                new_start += stop - start
        out = dict(old)
        for column, array in old.items():
            new = data.get(column)
            if new is None:  # the block has no value here: unchanged if the old rows had none either
                if not all(all_null(array, start, rows) for start, _, rows in spans):
                    return None
                continue
            if not comparable(array, new):
                return None
            if same_rows(array, new, spans):
                continue
            if array.dtype == np.dtype("float64"):
                return None
            out[column] = overwritten(array, new, spans)
        if added:
            self._capacities.update(info["capacities"])
            order = self._column_order()
            if set(order) != out.keys():
                return None
            out = {column: out[column] for column in order}
        return out

    def _column_order(self) -> list[str]:
        """The frame's columns, as a rebuild orders them."""
        return IDENTITY + sorted(self._types) + [
            c for qn in sorted(self._capacities) for c in (capacity_column(qn), capacity_value_column(qn))
        ] + TRAILING

    def _splice(self, old_spans: list[tuple[str, int, int]], data: dict[str, Any], info: dict[str, Any],
                total: int) -> dict[str, Any]:
        """The column arrays with the rows of the changed slices replaced by the block's rows."""
        old = self._arrays
        pieces: list[tuple[str, int, int]] = []  # ("old" | "new", start, stop)
        cursor = new_start = 0
        removed_values: set[str] = set()
        value_columns = {c for c in old if c not in IDENTITY and c not in TRAILING and not c.endswith(VALUE_SUFFIX)}
        for member, start, stop in old_spans:
            if start > cursor:
                pieces.append(("old", cursor, start))
            for column in value_columns if stop > start else ():
                if not pd.isna(old[column][start:stop]).all():
                    removed_values.add(column)
            rows = self._rows.get(member, 0)
            if rows:
                pieces.append(("new", new_start, new_start + rows))
                new_start += rows
            cursor = stop
        if total > cursor:
            pieces.append(("old", cursor, total))

        self._capacities.update(info["capacities"])
        columns = self._column_order()
        # When no row moves, a column the changed slices had no value in and still have none in is unchanged.
        in_place = all(self._rows.get(member, 0) == stop - start for member, start, stop in old_spans)
        out: dict[str, Any] = {}
        for column in columns:
            source_old, source_new = old.get(column), data.get(column)
            base = column.removesuffix(VALUE_SUFFIX)
            if in_place and source_old is not None and base in value_columns and base not in removed_values \
                    and base not in data:
                out[column] = source_old
                continue
            dtype = _target_dtype(source_old, source_new)
            parts = []
            for which, start, stop in pieces:
                source = source_old if which == "old" else source_new
                parts.append((_nulls(dtype, stop - start), 0, stop - start) if source is None else (source, start, stop))
            out[column] = _concat(parts, dtype)

        # An attribute or capacity that no row has any more goes away, as in a rebuild.
        for column in sorted(removed_values - set(data)):
            if pd.isna(out[column]).all():
                del out[column]
                if is_capacity_column(column):
                    del out[capacity_value_column(capacity_name(column))]
                    self._capacities.discard(capacity_name(column))
                else:
                    self._types.pop(column, None)
                    self._lists.pop(column, None)
        # A float64 value column whose fractional values may have been replaced or removed is retyped
        # from its strings, as a rebuild would (Int64 when every value is integral again).
        for column in (removed_values | set(data)) & set(out):
            value_column = column + VALUE_SUFFIX
            if is_capacity_column(column) and value_column in out and out[value_column].dtype == "float64":
                out[value_column] = quantity_values(out[column]._pa_array)
        return out

    def _drop_type_conflicts(self, data: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        """Register the block's attribute types; leave out (and report) values typed unlike the frame's."""
        conflicts = []
        for column, kind_type in info["attributes"].items():
            known = self._types.setdefault(column, kind_type)
            if column in info["lists"]:
                self._lists.setdefault(column, info["lists"][column])
            if known != kind_type or self._lists.get(column) != info["lists"].get(column):
                conflicts.append(column)
                present = ~np.asarray(pd.isna(data[column]), dtype=bool)
                for slice_, device in zip(np.asarray(data["slice"], dtype=object)[present],
                                          np.asarray(data["device"], dtype=object)[present]):
                    self._device_problems.setdefault(slice_, []).append(
                        f"ResourceSlice '{slice_}' device {device!r}: {column} is {kind_type} here but {known} on "
                        "other devices; value left out")
        return {c: a for c, a in data.items() if c not in conflicts}


def _frame_of(arrays: dict[str, Any]) -> pd.DataFrame:
    """A DataFrame over already typed, equally long arrays: one block per column, nothing copied or inferred
    (before pandas 3: built from the columns)."""
    index = pd.RangeIndex(len(arrays["device"]))
    if not PANDAS_3:
        return pd.DataFrame(arrays, index=index)
    blocks = [
        (a.reshape(1, -1) if isinstance(a, np.ndarray) else a, np.array([i]))
        for i, a in enumerate(arrays.values())
    ]
    return create_dataframe_from_blocks(blocks, index=index, columns=pd.Index(list(arrays)))


def _target_dtype(old: Any, new: Any) -> Any:
    dtypes = [a.dtype for a in (old, new) if a is not None]
    if len(dtypes) == 2 and dtypes[0] != dtypes[1] and {str(d) for d in dtypes} <= {"Int64", "float64"}:
        return np.dtype("float64")
    return dtypes[0] if dtypes else np.dtype(object)


def _nulls(dtype: Any, n: int) -> Any:
    if dtype == np.dtype(object):
        return np.full(n, None, dtype=object)
    if dtype == np.dtype("float64"):
        return np.full(n, np.nan)
    if isinstance(dtype, pd.StringDtype):
        return pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()))
    return pd.array([None] * n, dtype=dtype)


def _concat(parts: list[tuple[Any, int, int]], dtype: Any) -> Any:
    """Concatenate ``array[start:stop]`` pieces into one array of `dtype`."""
    if not parts:
        return _nulls(dtype, 0)
    if isinstance(dtype, np.dtype):
        arrays = []
        for array, start, stop in parts:
            if dtype == np.dtype("float64") and not isinstance(array, np.ndarray):
                array = array.to_numpy(dtype="float64", na_value=np.nan)
            arrays.append(np.asarray(array, dtype=dtype)[start:stop])
        return np.concatenate(arrays)
    first = parts[0][0]
    if isinstance(first, pd.arrays.ArrowStringArray):
        # Slice the Arrow data directly: pandas' per-slice wrapping costs more than the slicing.
        chunks = [c for array, start, stop in parts for c in array._pa_array.slice(start, stop - start).chunks]
        chunked = pa.chunked_array(chunks, type=first._pa_array.type)
        if chunked.num_chunks > _MAX_CHUNKS:
            chunked = chunked.combine_chunks()
        return type(first)(chunked)
    return type(first)._concat_same_type([array[start:stop] for array, start, stop in parts])
