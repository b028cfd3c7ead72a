"""A progress bar on stderr for commands over many documents (``validate``, ``apply``).

It appears only once the command has run for ``DELAY`` seconds, so short runs print nothing, and only
where someone watches: a terminal, or a notebook cell (whose stderr shows the bar's ``\\r`` updates in
place). The ``progress_bar`` option forces it (``always``) or turns it off (``never``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from drawb.errors import UsageError
from drawb.session import Session

DELAY = 2.0  # seconds a command runs before its bar appears
CHOICES = ("auto", "always", "never")
_REDRAW = 0.1  # seconds between two drawings
_WIDTH = 30
Progress = Callable[[str, int, int], None]  # (step, done, total)


class ProgressBar:
    """``command: step [#####.....] done/total`` on one line, drawn again in place as the steps go on."""

    def __init__(self, command: str, stream: TextIO, *, delay: float = DELAY, clock=time.monotonic):
        self.command = command
        self.stream = stream
        self.delay = delay
        self.clock = clock
        self.started = clock()
        self.drawn_at: float | None = None
        self.width = 0  # of the last line drawn

    def __call__(self, step: str, done: int, total: int) -> None:
        """Report that ``done`` of ``total`` items of ``step`` are done (drawn at most every 0.1 s)."""
        now = self.clock()
        if now - self.started < self.delay or (self.drawn_at is not None and now - self.drawn_at < _REDRAW
                                                  and done < total):
            return
        filled = _WIDTH * done // max(total, 1)
        line = (f"{self.command}: {step} [{'#' * filled}{'.' * (_WIDTH - filled)}] {done:,}/{total:,} "
                f"{now - self.started:.0f} s")
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.drawn_at, self.width = now, len(line)

    def close(self) -> None:
        """Clear the bar's line (if it was drawn), so what the command prints next starts on a clean line."""
        if self.drawn_at is not None:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _NoBar:
    def __call__(self, step: str, done: int, total: int) -> None:
        return None

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc) -> None:
        return None


def progress_bar(session: Session, command: str, stream: TextIO | None = None) -> ProgressBar | _NoBar:
    """The bar for ``command`` as the session's ``progress_bar`` option says: ``auto`` shows it in a notebook
    and where stderr is a terminal, ``always`` everywhere, ``never`` nowhere."""
    stream = stream or sys.stderr
    choice = session.progress_bar
    if choice not in CHOICES:
        raise UsageError(f"progress_bar {choice!r}: expected one of {', '.join(CHOICES)}",
                         hint="e.g. `--progress-bar always` (or `%config DRAMagics.progress_bar = 'always'`)")
    shown = choice == "always" or (choice == "auto" and (session.prog == "%dra" or _is_terminal(stream)))
    return ProgressBar(command, stream, delay=DELAY) if shown else _NoBar()


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
