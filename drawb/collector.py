"""Pausing Python's cyclic garbage collector around passes that make many small objects.

On a large cluster every full collection walks every object of the inventory (hundreds of ms at
100,000 devices), so a pass that allocates many tuples or dicts triggers several of them for nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (restored afterwards, also after an error)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
