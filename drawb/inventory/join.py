"""The one join of claim allocations onto a device frame, for frames built from lists and live ones alike."""

from __future__ import annotations

import numpy as np
import pandas as pd

from drawb.inventory._frame import Allocations, object_array, string_array


def join_allocations(frame: pd.DataFrame, table: Allocations, problems: list[str] = ()) -> pd.DataFrame:
    """A copy of ``frame`` whose ``claim``, ``request`` and ``reserved_for`` come from ``table``
    (``drawb.inventory.claims.allocations``); a device absent from it is free. ``problems`` found
    while reading the claims are added to the frame's."""
    n = len(frame)
    claim: list = [None] * n
    request: list = [None] * n
    reserved: list = [None] * n
    if table:
        candidates = frame["device"].isin({device for _, _, device in table}).to_numpy(dtype=bool, na_value=False)
        drivers, pools, devices = frame["driver"], frame["pool"], frame["device"]
        for row in np.flatnonzero(candidates):
            found = table.get((drivers.iat[row], pools.iat[row], devices.iat[row]))
            if found:
                claim[row], request[row], reserved[row] = ", ".join(found[0]), ", ".join(found[1]), list(found[2])
    out = frame.copy(deep=False)
    out["claim"] = string_array(claim)
    out["request"] = string_array(request)
    out["reserved_for"] = object_array(reserved)
    if problems:
        info = frame.attrs["drawb"]
        out.attrs = {**frame.attrs, "drawb": {**info, "problems": [*info["problems"], *problems]}}
    return out
