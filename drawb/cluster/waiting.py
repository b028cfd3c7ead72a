"""Waiting for a cluster to reach a state, in the cluster's own time.

A real cluster is polled in real time; the simulated one lets its simulated time pass
(``SimCluster.sleep``), which on a manual clock costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from drawb.cluster.protocol import Cluster, ClusterError

T = TypeVar("T")


def wait_until(cluster: Cluster, fn: Callable[[], T], *, timeout: float = 60, interval: float = 0.25,
               what: str = "condition") -> T:
    """Call ``fn`` until it returns something truthy and return that; TimeoutError after ``timeout``.

    A ClusterError from ``fn`` (a container not started yet) counts as "not yet".
    """
    sleep = getattr(cluster, "sleep", time.sleep)
    now = getattr(getattr(cluster, "lifecycle", None), "clock", None)
    clock = now.now if now is not None else time.monotonic
    deadline = clock() + timeout
    last: object = None
    while True:
        try:
            last = fn()
        except ClusterError as err:
            last = err
        else:
            if last:
                return last
        if clock() > deadline:
            raise TimeoutError(f"{what} not reached after {timeout:.0f}s on the {cluster.description} (last: {last!r})")
        sleep(interval)
