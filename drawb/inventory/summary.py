"""Which attributes and capacities exist (``%dra attrs``): type, and per driver the values seen."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drawb.inventory._frame import int_array, object_array, string_array
from drawb.inventory.schema import capacity_column

MAX_VALUES = 10


def _counts(series: pd.Series) -> dict[Any, int]:
    values = series.dropna()
    if values.dtype == object:
        values = values.map(lambda v: tuple(v) if isinstance(v, list) else v)
    return {_plain(k): int(v) for k, v in values.value_counts(sort=True).items()}


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (``0``, not ``np.int64(0)``, in what users read)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes, tuple)) else value


def attribute_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (attribute or capacity, driver): type, devices that have it, distinct values, top values."""
    info = frame.attrs.get("drawb", {})
    columns = [(c, "attribute", t) for c, t in sorted(info.get("attributes", {}).items())]
    columns += [(qn, "capacity", "quantity") for qn in info.get("capacities", [])]
    rows = []
    for name, kind, kind_type in columns:
        column = name if kind == "attribute" else capacity_column(name)
        for driver, series in frame[column].groupby(frame["driver"], sort=True):
            counts = _counts(series)
            if not counts:
                continue
            top = dict(list(counts.items())[:MAX_VALUES])
            rows.append((name, kind, kind_type, driver, sum(counts.values()), len(counts), top))
    return pd.DataFrame(
        {
            "name": string_array([r[0] for r in rows]),
            "kind": string_array([r[1] for r in rows]),
            "type": string_array([r[2] for r in rows]),
            "driver": string_array([r[3] for r in rows]),
            "devices": int_array([r[4] for r in rows]),
            "distinct": int_array([r[5] for r in rows]),
            "values": object_array([r[6] for r in rows]),
        }
    )
