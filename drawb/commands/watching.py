"""``--watch``: a read command's table that follows the cluster.

A read command given ``--watch`` returns a ``WatchedTable`` instead of a frame. Each front end drives
it: the notebook shows the first frame and updates that display on every change; the command line
prints the table, then one line per row added, removed or changed. Both stop after ``--for`` seconds
or on KeyboardInterrupt (which the front end reports), and leave nothing subscribed.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drawb.cluster.protocol import WatchableCluster

if TYPE_CHECKING:
    import pandas as pd

POLL_S = 1.0  # a frame is also rebuilt this often: the simulated cluster's timed steps happen on reading


@dataclass
class WatchedTable:
    """A table the front end keeps showing as the objects it is made from change."""

    title: str
    cluster: WatchableCluster
    kinds: tuple[str, ...]  # what the table is made from: a change to any of them rebuilds it
    make_frame: Callable[[], pd.DataFrame]
    key: tuple[str, ...]  # the columns naming a row, for the change lines
    seconds: float | None = None  # stop after this long; None: until interrupted
    namespace: str | None = None  # the namespace the table shows (None: every namespace): only it is watched

    def frames(self) -> Iterator[pd.DataFrame]:
        """The table now, then again each time it differs, until ``seconds`` have passed.

        Close the iterator (``contextlib.closing``) to stop early: its handlers are unsubscribed.
        """
        changed = threading.Event()

        def on_change(event_type: str, obj: dict) -> None:
            changed.set()

        watches = [self.cluster.watch(kind, self.namespace) for kind in self.kinds]
        for watch in watches:
            watch.subscribe(on_change)
        try:
            deadline = None if self.seconds is None else time.monotonic() + self.seconds
            frame = self.make_frame()
            yield frame
            while deadline is None or time.monotonic() < deadline:
                left = POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic())
                changed.wait(max(left, 0))
                changed.clear()
                latest = self.make_frame()
                if not _same(latest, frame):
                    frame = latest
                    yield frame
        finally:
            for watch in watches:
                watch.unsubscribe(on_change)

    def follow(self, show: Callable[[pd.DataFrame, pd.DataFrame | None], None]) -> int:
        """Call ``show(frame, previous)`` for the first frame (previous None) and every change until the end
        of ``seconds``; the number of changes shown. A KeyboardInterrupt leaves nothing subscribed and goes on
        to the front end."""
        previous = None
        shown = 0
        with contextlib.closing(self.frames()) as frames:
            for frame in frames:
                show(frame, previous)
                shown += previous is not None
                previous = frame
        return shown


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    if a.shape != b.shape or list(a.columns) != list(b.columns):
        return False
    try:
        return a.equals(b)
    except (TypeError, ValueError):  # cells pandas cannot compare (lists, dicts)
        return _records(a) == _records(b)


def _records(frame: pd.DataFrame) -> list[dict[str, str]]:
    return [{column: _text(value) for column, value in row.items()} for row in frame.to_dict("records")]


def _text(value: object) -> str:
    """A cell as text; every kind of missing value (None, NaN, NA) as ""."""
    import pandas as pd

    if isinstance(value, (list, tuple, dict)):
        return str(value)
    try:
        missing = value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        missing = False
    return "" if missing else str(value)


def change_lines(previous: pd.DataFrame, frame: pd.DataFrame, key: tuple[str, ...]) -> list[str]:
    """One line per row added (``+``), removed (``-``) or changed (``~``, with the changed columns)."""
    key = tuple(k for k in key if k in frame.columns and k in previous.columns)
    before = {_row_key(row, key): row for row in _records(previous)}
    after = {_row_key(row, key): row for row in _records(frame)}
    lines = [f"- {name}" for name in before if name not in after]
    for name, row in after.items():
        old = before.get(name)
        if old is None:
            lines.append(f"+ {name}")
        elif old != row:
            changes = [f"{c}: {old.get(c, '')} -> {v}" for c, v in row.items() if old.get(c) != v]
            lines.append(f"~ {name}  " + "; ".join(changes))
    return lines


def _row_key(row: dict, key: tuple[str, ...]) -> str:
    return "/".join(row[k] for k in key if row[k])
