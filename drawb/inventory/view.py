"""The device frame as a person reads it first, shared by ``%dra devices``, ``drawb devices`` and the widgets."""

from __future__ import annotations

import re
from functools import lru_cache

import pandas as pd

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
            "type": per_driver(frame, "type").astype("string"),  # <NA>, never nan, where a driver has none
            "product": per_driver(frame, "productName").astype("string"),
            "memory": per_driver(frame, "memory", capacity=True).astype("string"),
            "profile": per_driver(frame, "profile").astype("string"),
        },
        index=frame.index,
    )
    if "claim" in frame:
        view["claim"] = frame["claim"]
    if "reserved_for" in frame:
        view["reserved_for"] = frame["reserved_for"].map(lambda pods: ", ".join(pods) if pods else None).astype("string")
    nodes, devices = view["node"].tolist(), view["device"].tolist()
    order = sorted(range(len(view)), key=lambda i: (_text(nodes[i]), _natural(_text(devices[i]))))
    view = view.iloc[order].dropna(axis="columns", how="all").reset_index(drop=True)
    view.attrs = frame.attrs
    return view


def _text(value: object) -> str:
    """A name for sorting; a missing one (NA) sorts first."""
    return value if isinstance(value, str) else ""


@lru_cache(maxsize=4096)  # device names repeat from node to node (gpu-0, gpu-1, ...)
def _natural(name: str) -> tuple:
    """Sort key that puts ``gpu-2`` before ``gpu-10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
