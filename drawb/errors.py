"""drawb's user-facing errors: short, named, and with a hint on what to do."""

from __future__ import annotations


class DrawbError(Exception):
    """An error the user can act on; front ends print it without a traceback."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

    def render(self) -> str:
        """``Name: message`` plus the hint on its own line."""
        text = f"{type(self).__name__}: {self}"
        return text + (f"\nHint: {self.hint}" if self.hint else "")


class UsageError(DrawbError):
    """A command line drawb cannot parse: unknown subcommand, flag or value."""
