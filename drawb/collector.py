"""The cyclic garbage collector's policy: set by a front end (the ``drawb`` command line, the ``%dra``
magics) once around each command, never by the commands' engines or the simulated cluster.

While a command runs the collector is off: on a large cluster every full collection walks every object
of the inventory (hundreds of ms at 100,000 devices), and a command that makes many small tuples and
dicts would trigger several for nothing. What a command leaves alive that is large (a simulated
cluster of thousands of nodes: millions of containers that live as long as the session) is then moved
out of the collector's generations (``gc.freeze``), so no later collection walks it again. When an
earlier command's large result is frozen already, one full collection runs first: that result may be
garbage now (a replaced cluster), and frozen garbage would be kept forever.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

LARGE = 200_000  # containers a command leaves alive from which they are frozen (a 1,000-node cluster has ~300,000)


@contextmanager
def collection_around_command() -> Iterator[None]:
    """Run one command with the cyclic collector off (restored afterwards, also after an error); freeze a
    large result as the module says."""
    enabled = gc.isenabled()
    gc.disable()
    made = gc.get_count()[0]  # while the collector is off: containers made minus containers freed
    try:
        yield
    finally:
        if gc.get_count()[0] - made >= LARGE:
            if gc.get_freeze_count():
                gc.unfreeze()
                gc.collect()
            gc.freeze()
        if enabled:
            gc.enable()
