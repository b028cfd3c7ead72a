"""Simulated time: the wall clock by default, a manual clock for tests and replays.

The simulated cluster stamps objects and schedules its timed steps (a container starting, a
command ending) on a clock. Given the same clock readings it does the same things in the same
order, so a manual clock makes a run exactly reproducible.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    """Seconds since an arbitrary start, and a way to let them pass."""

    def now(self) -> float:
        """The current time in seconds."""

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass."""

    def timestamp(self, at: float) -> str:
        """``at`` as a Kubernetes RFC 3339 timestamp (``2026-01-01T00:00:05Z``)."""


class WallClock:
    """Real time: what a user watching a notebook expects.

    Kept in a file (pickled) and read back in another process, it goes on from the wall time: the
    seconds between the two count as simulated seconds that passed."""

    def __init__(self) -> None:
        self._start_mono = time.monotonic()
        self._start = datetime.now(UTC)

    def __getstate__(self) -> dict:
        return {"start": self._start}

    def __setstate__(self, state: dict) -> None:
        self._start = state["start"]
        self._start_mono = time.monotonic() - (datetime.now(UTC) - self._start).total_seconds()

    def now(self) -> float:
        """Seconds since this clock was made."""
        return time.monotonic() - self._start_mono

    def sleep(self, seconds: float) -> None:
        """Sleep for real."""
        time.sleep(max(0.0, seconds))

    def timestamp(self, at: float) -> str:
        """The wall-clock time ``at`` seconds after the clock was made."""
        return _rfc3339(self._start + timedelta(seconds=at))


class ManualClock:
    """Time that moves only when told to: deterministic, and instant to wait on."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        """The current simulated second."""
        return self._now

    def sleep(self, seconds: float) -> None:
        """Advance time by ``seconds`` without waiting."""
        self._now += max(0.0, seconds)

    advance = sleep

    def timestamp(self, at: float) -> str:
        """``at`` seconds after 2026-01-01T00:00:00Z."""
        return _rfc3339(EPOCH + timedelta(seconds=at))


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
