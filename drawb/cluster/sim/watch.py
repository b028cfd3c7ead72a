"""Watching the simulated cluster: every change to its store reaches the kind's subscribers at once."""

from __future__ import annotations

import logging
from collections.abc import Callable

from drawb.cluster.protocol import Handler

log = logging.getLogger(__name__)


class SimWatch:
    """The live store of one kind in the simulated cluster (the store itself; events are synchronous)."""

    def __init__(self, kind: str, list_objects: Callable[[], list[dict]]):
        self.kind = kind
        self._list = list_objects
        self._handlers: list[Handler] = []

    def subscribe(self, handler: Handler) -> list[dict]:
        """Call ``handler(event_type, obj)`` on every later change; return the objects held now."""
        self._handlers.append(handler)
        return self._list()

    def unsubscribe(self, handler: Handler) -> None:
        """Stop calling ``handler`` (one never subscribed is ignored)."""
        self._handlers = [h for h in self._handlers if h is not handler]

    def items(self) -> list[dict]:
        """The objects held now."""
        return self._list()

    def notify(self, event_type: str, obj: dict) -> None:
        """Tell every subscriber, as an informer does: each gets the stored object itself (read-only); a
        handler that raises is logged and kept."""
        for handler in list(self._handlers):
            try:
                handler(event_type, obj)
            except Exception:
                log.exception("simulated watch handler for %s failed", self.kind)

    def stop(self) -> None:
        """Forget every subscriber."""
        self._handlers.clear()
