"""The inventory's error: malformed objects, named by kind, object name and field path."""

from __future__ import annotations

from drawb.errors import DrawbError


class InventoryError(DrawbError, ValueError):
    """An object could not be read into an inventory frame (raised in strict mode)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        more = len(self.problems) - 1
        message = self.problems[0] if self.problems else "invalid inventory input"
        if more > 0:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        super().__init__(message)


def raise_if_strict(problems: list[str], strict: bool) -> None:
    """Raise `InventoryError` when strict mode is on and anything was reported."""
    if strict and problems:
        raise InventoryError(problems)
