"""Polling until a condition holds, for tests against a live cluster."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(fn: Callable[[], T], timeout: float = 30, interval: float = 0.1, what: str = "condition") -> T:
    """Call ``fn`` until it returns something truthy and return that; TimeoutError after ``timeout``.

    Exceptions raised by ``fn`` count as "not yet"; the last value or error is in the message.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = fn()
        except Exception as err:  # noqa: BLE001 - transient errors mean "not yet"; the last one is reported
            last = err
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached after {timeout:.0f}s (last: {last!r})")
        time.sleep(interval)
