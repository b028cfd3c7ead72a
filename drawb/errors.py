"""drawb's user-facing errors: short, named, and with a hint on what to do.

Every error a user can act on derives from DrawbError. A message or hint that names a command
writes the front end as ``{prog}`` (``PROG``): the front end that shows the error fills it in, so a
notebook user reads ``%dra scenarios`` and a command-line user ``drawb scenarios``.
"""

from __future__ import annotations

from drawb.redact import redact

PROG = "{prog}"


class DrawbError(Exception):
    """An error the user can act on; front ends print it without a traceback."""

    title: str | None = None  # the name users see, when it is not the class name
    hint: str | None = None  # what to do; a subclass may give a default

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(redact(str(message)))  # credentials never reach a message, a repr or a traceback
        if hint is not None:
            self.hint = redact(hint)

    def __str__(self) -> str:
        return redact(str(self.args[0])) if self.args else ""  # not KeyError's quoted repr

    @property
    def name(self) -> str:
        """The error's name as users see it."""
        return self.title or type(self).__name__

    def render(self, prog: str = "%dra") -> str:
        """``Name: message`` plus the hint on its own line, with the front end ``prog`` filled in."""
        text = f"{self.name}: {self}" + (f"\nHint: {self.hint}" if self.hint else "")
        return redact(text.replace(PROG, prog))


class UsageError(DrawbError):
    """A command line drawb cannot parse: unknown subcommand, flag or value."""
