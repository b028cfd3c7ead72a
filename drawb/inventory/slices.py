"""ResourceSlices to a frame: one row per slice, with its pool's generation and completeness."""

from __future__ import annotations

import pandas as pd

from drawb.inventory._frame import bool_array, frame_attrs, int_array, string_array
from drawb.inventory._read import list_items, read_header
from drawb.inventory.errors import raise_if_strict
from drawb.inventory.pools import pool_states


def slice_frame(slices: list[dict], *, strict: bool = False) -> pd.DataFrame:
    """One row per ResourceSlice (every generation): node, driver, pool, generation, device and counter counts.

    ``current`` is true for slices of their pool's newest generation (the only ones that count);
    ``pool_complete`` tells whether all ``resource_slice_count`` slices of that generation are present.
    """
    problems: list[str] = []
    rows = []
    for position, obj in enumerate(list_items(slices)):
        header = read_header(obj, position, problems)
        if header is not None:
            devices = obj["spec"].get("devices")
            counters = header.shared_counters
            rows.append((header, len(devices) if isinstance(devices, list) else 0,
                         len(counters) if isinstance(counters, list) else 0))
    raise_if_strict(problems, strict)
    states = pool_states(h for h, _, _ in rows)
    state = [states[(h.driver, h.pool)] for h, _, _ in rows]
    frame = pd.DataFrame(
        {
            "slice": string_array([h.name for h, _, _ in rows]),
            "node": string_array([h.node for h, _, _ in rows]),
            "driver": string_array([h.driver for h, _, _ in rows]),
            "pool": string_array([h.pool for h, _, _ in rows]),
            "generation": int_array([h.generation for h, _, _ in rows]),
            "resource_slice_count": int_array([h.count for h, _, _ in rows]),
            "devices": int_array([n for _, n, _ in rows]),
            "shared_counter_sets": int_array([c for _, _, c in rows]),
            "current": bool_array([h.generation == s.generation for (h, _, _), s in zip(rows, state)]),
            "pool_complete": bool_array([s.complete for s in state]),
        }
    )
    frame.attrs["drawb"] = frame_attrs({}, {}, [], problems)
    return frame
