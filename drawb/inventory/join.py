"""Join claim allocations onto a device frame that was built without them (the live path)."""

from __future__ import annotations

import pandas as pd

from drawb.inventory.claims import allocations


def join_allocations(frame: pd.DataFrame, claims: list[dict]) -> pd.DataFrame:
    """A copy of ``frame`` with ``claim``, ``request`` and ``reserved_for`` from ``claims``."""
    table = allocations(claims)
    keys = list(zip(frame["driver"], frame["pool"], frame["device"]))
    found = [table.get(key) for key in keys]
    out = frame.copy()
    out["claim"] = pd.array([", ".join(f[0]) if f else None for f in found], dtype="string")
    out["request"] = pd.array([", ".join(f[1]) if f else None for f in found], dtype="string")
    out["reserved_for"] = pd.Series([list(f[2]) if f else None for f in found], index=frame.index, dtype=object)
    return out
