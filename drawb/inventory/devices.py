"""ResourceSlices (and optionally ResourceClaims) to the device frame: one row per device."""

from __future__ import annotations

import pandas as pd

from drawb.inventory._frame import build_frame
from drawb.inventory._read import device_list, list_items, read_columns, read_header
from drawb.inventory.claims import allocations
from drawb.inventory.errors import raise_if_strict
from drawb.inventory.join import join_allocations
from drawb.inventory.pools import pool_states


def device_frame(slices: list[dict], claims: list[dict] | None = None, *, strict: bool = False) -> pd.DataFrame:
    """One row per device of the newest generation of each pool, with allocations joined from claims.

    Problems in the input (a bad field of one device or slice) leave out only that value, device or
    slice and are listed in ``frame.attrs["drawb"]["problems"]``; with ``strict=True`` the first one
    raises `InventoryError` instead.
    """
    problems: list[str] = []
    headers = []
    for position, obj in enumerate(list_items(slices)):
        header = read_header(obj, position, problems)
        if header is not None:
            headers.append((header, obj))
    states = pool_states(h for h, _ in headers)
    current, complete = [], []
    for header, obj in headers:
        state = states[(header.driver, header.pool)]
        if header.generation == state.generation:
            current.append((header, device_list(obj, header, problems)))
            complete.append(state.complete)
    columns = read_columns(current, problems)
    claims = list_items(claims)
    allocated = allocations(claims, problems) if claims else None
    raise_if_strict(problems, strict)
    frame = build_frame(columns, complete, problems)
    return join_allocations(frame, allocated) if allocated else frame
