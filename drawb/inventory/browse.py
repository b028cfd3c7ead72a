"""The device browser's table: the device frame with facets, search, sort and paging, all in pandas.

`DeviceTable` is built once per device frame (one pass: the browser's columns, the facets and the
searched columns as categoricals, sort ranks made on first use) so that every query after it (facet
masks over codes, a substring search over each column's distinct values, a stable sort over ranks,
one page) touches arrays only.
The widget (`drawb.notebook.browser`) keeps the query state; this module has no widgets and no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from drawb.inventory.schema import capacity_value_column, qualify

NONE = "(none)"  # the facet value of a device that has none (no MIG profile, no claim)
FACETS = ("node", "product", "type", "profile", "state", "claim")
COLUMNS = ["node", "device", "type", "product", "profile", "memory", "state", "claim", "pod", "driver", "pool"]
SEARCHED = ("node", "device", "type", "product", "profile", "claim", "pod")
CATEGORICAL = FACETS + ("device", "pod")  # few distinct values each: facets and search work on codes


@dataclass(frozen=True)
class Query:
    """What the browser shows: facet filters (facet -> allowed values), a search text and a sort."""

    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    search: str = ""
    sort: str = ""  # a column of COLUMNS; "" keeps node, then device, order
    descending: bool = False


class FacetError(ValueError):
    """A filter on a facet or value the table does not have."""


class DeviceTable:
    """The browser's rows of one device frame, and fast queries over them.

    Row positions are those of the device frame; with no sort, rows come by node, then device name.
    """

    def __init__(self, devices: pd.DataFrame):
        self.devices = devices
        self.frame = browse_frame(devices)
        self._codes = {c: self.frame[c].cat.codes.to_numpy() for c in CATEGORICAL}
        self._order = np.lexsort((_natural_codes(self.frame["device"]), _natural_codes(self.frame["node"])))
        self._ranks: dict[str, np.ndarray] = {}
        self._missing_rank: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.frame)

    def facet_values(self, facet: str) -> list[tuple[str, int]]:
        """The values of ``facet`` with their device counts (NONE for devices without one), in natural order."""
        column = self._column(facet)
        counts = np.bincount(self._codes[facet] + 1, minlength=len(column.cat.categories) + 1)
        values = [(NONE, int(counts[0]))] if counts[0] else []
        values += [(str(c), int(n)) for c, n in zip(column.cat.categories, counts[1:]) if n]
        return values

    def mask(self, filters: Mapping[str, Iterable[str]]) -> np.ndarray:
        """Rows whose every filtered facet has one of the allowed values."""
        keep = np.ones(len(self.frame), dtype=bool)
        for facet, values in filters.items():
            column = self._column(facet)
            codes, wanted = self._codes[facet], []
            for value in values:
                if value == NONE:
                    wanted.append(-1)
                elif value in column.cat.categories:
                    wanted.append(column.cat.categories.get_loc(value))
                else:
                    known = ", ".join(v for v, _ in self.facet_values(facet)) or "none"
                    raise FacetError(f"no device has {facet} {value!r}; values: {known}")
            keep &= np.isin(codes, wanted)
        return keep

    def rows(self, query: Query) -> np.ndarray:
        """Positions of the rows ``query`` keeps, in its order."""
        keep = self.mask(query.filters)
        if query.search.strip():
            keep &= self._found(query.search.strip().lower())
        rows = self._order[keep[self._order]]
        if query.sort:
            ranks = self._rank(query.sort)[rows]
            if query.descending:  # the largest first; devices without a value stay last
                top = ranks.max(initial=0) + 1
                ranks = np.where(ranks >= self._missing_rank[query.sort], top, top - 1 - ranks)
            rows = rows[np.argsort(ranks, kind="stable")]
        elif query.descending:
            rows = rows[::-1]
        return rows

    def _found(self, text: str) -> np.ndarray:
        """Rows where some searched column contains ``text`` (lower case): matched on each column's distinct
        values, then spread to the rows by their codes."""
        found = np.zeros(len(self.frame), dtype=bool)
        for column in SEARCHED:
            categories = self.frame[column].cat.categories
            if not len(categories):
                continue
            hits = np.flatnonzero(pc.match_substring(pc.utf8_lower(pa.array(list(categories), pa.string())), text)
                                  .to_numpy(zero_copy_only=False))
            if len(hits):
                found |= np.isin(self._codes[column], hits)
        return found

    def page(self, rows: np.ndarray, page: int, size: int) -> pd.DataFrame:
        """Page ``page`` (from 0) of ``size`` rows of ``rows``, with the browser's columns ("" where none)."""
        chosen = self.frame.iloc[rows[page * size:(page + 1) * size]][COLUMNS].astype(object)
        return chosen.where(chosen.notna(), "")

    def _column(self, facet: str) -> pd.Series:
        if facet not in FACETS:
            raise FacetError(f"no facet {facet!r}; facets: {', '.join(FACETS)}")
        return self.frame[facet]

    def _rank(self, column: str) -> np.ndarray:
        """Each row's place in ``column``'s order (numbers by value, names naturally), missing values last
        (at ``_missing_rank[column]``)."""
        if column not in COLUMNS:
            raise FacetError(f"cannot sort by {column!r}; columns: {', '.join(COLUMNS)}")
        if column not in self._ranks:
            source = self.frame["memory_value"] if column == "memory" else self.frame[column]
            if column == "memory":
                codes, uniques = pd.factorize(source, sort=True, use_na_sentinel=True)
                place = np.append(np.arange(len(uniques)), len(uniques))
                ranks = place[codes]
            else:
                ranks = _natural_codes(source, missing_last=True)
            self._ranks[column] = ranks
            self._missing_rank[column] = len(pd.unique(ranks[source.notna().to_numpy()])) if len(ranks) else 0
        return self._ranks[column]


def browse_frame(devices: pd.DataFrame) -> pd.DataFrame:
    """The browser's columns of a device frame, row for row; facets are categoricals, the rest strings."""
    n = len(devices)
    empty = _nulls(n, devices.index)
    claims = devices["claim"].astype("string") if "claim" in devices else empty
    tainted = np.zeros(n, dtype=bool)
    if "taints" in devices:
        taints = devices["taints"]
        present = np.flatnonzero(taints.notna().to_numpy())
        tainted[present] = [bool(taints.iat[i]) for i in present]
    pods = empty.copy()
    if "reserved_for" in devices:
        reserved = devices["reserved_for"]
        present = np.flatnonzero(reserved.notna().to_numpy())
        pods.iloc[present] = [", ".join(reserved.iat[i]) or None for i in present]
    claimed = claims.notna().to_numpy()
    state = np.where(claimed, "allocated", np.where(tainted, "tainted", "free"))
    frame = pd.DataFrame({
        "node": devices["node"].astype("string").array,
        "device": devices["device"].astype("string").array,
        "type": _per_driver(devices, "type").array,
        "product": _per_driver(devices, "productName").array,
        "profile": _per_driver(devices, "profile").array,
        "memory": _per_driver(devices, "memory", capacity=True).array,
        "memory_value": _per_driver(devices, "memory", capacity=True, value=True).array,
        "state": state,
        "claim": claims.array,
        "pod": pods.array,
        "driver": devices["driver"].astype("string").array,
        "pool": devices["pool"].astype("string").array,
    })
    for column in CATEGORICAL:
        frame[column] = _categorical(frame[column])
    return frame


def _per_driver(devices: pd.DataFrame, name: str, *, capacity: bool = False, value: bool = False) -> pd.Series:
    """Per row, its driver's own attribute or capacity ``name`` (missing where it has none); picked in
    Arrow (strings) or numpy (values), without Python objects."""
    n = len(devices)
    drivers = _arrow(devices["driver"])
    out_values = np.full(n, np.nan)
    out_strings = pa.nulls(n, pa.large_string())
    for driver in pc.unique(drivers).to_pylist():
        if driver is None:
            continue
        qualified = qualify(name, driver)
        column = (capacity_value_column(qualified) if value else f"capacity:{qualified}") if capacity else qualified
        if column not in devices:
            continue
        rows = pc.fill_null(pc.equal(drivers, driver), False)
        if value:
            picked = devices[column].to_numpy(dtype="float64", na_value=np.nan)
            out_values = np.where(rows.to_numpy(zero_copy_only=False), picked, out_values)
        else:
            out_strings = pc.if_else(rows, _arrow(devices[column]), out_strings)
    if value:
        return pd.Series(out_values, index=devices.index)
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([out_strings]) if isinstance(out_strings, pa.Array)
                                                else out_strings), index=devices.index)


def _arrow(column: pd.Series) -> pa.ChunkedArray:
    """A string column as Arrow large strings."""
    array = column.array
    data = array._pa_array if isinstance(array, pd.arrays.ArrowStringArray) else pa.chunked_array(
        [pa.array(column.astype(object).where(column.notna(), None).to_numpy(), pa.large_string())])
    return data.cast(pa.large_string())


def _nulls(n: int, index: pd.Index) -> pd.Series:
    """A string column of ``n`` missing values (made in Arrow: no Python objects)."""
    return pd.Series(pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string())), index=index)


def _natural_codes(column: pd.Series, missing_last: bool = False) -> np.ndarray:
    """Each row's rank in the natural order of the column's distinct values; missing first (or last)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, uniques = column.cat.codes.to_numpy(), list(column.cat.categories)
    else:
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        uniques = np.asarray(uniques, dtype=object)
    order = sorted(range(len(uniques)), key=lambda i: natural(str(uniques[i])))
    place = np.empty(len(uniques) + 1, dtype=np.int64)
    place[np.array(order, dtype=np.int64)] = np.arange(len(uniques))
    place[-1] = len(uniques) if missing_last else -1
    return place[codes]


def _categorical(column: pd.Series) -> pd.Series:
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    names = [str(u) for u in np.asarray(uniques, dtype=object)]
    order = sorted(range(len(names)), key=lambda i: natural(names[i]))
    remap = np.empty(len(names) + 1, dtype=np.int64)
    remap[np.array(order, dtype=np.int64)] = np.arange(len(names))
    remap[-1] = -1
    categories = pd.Index([names[i] for i in order], dtype=object)
    return pd.Series(pd.Categorical.from_codes(remap[codes], categories=categories), index=column.index)


@lru_cache(maxsize=65536)
def natural(name: str) -> tuple:
    """Sort key that puts ``gpu-2`` before ``gpu-10`` (numbers compare as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p)
