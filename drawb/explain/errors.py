"""The bad inputs of ``why``: each a named error with what to do."""

from __future__ import annotations

from drawb.errors import DrawbError


class InOtherNamespace(DrawbError):
    """The object exists, but in another namespace than the one asked."""


class PodHasNoClaims(DrawbError):
    """The pod uses no ResourceClaim: DRA plays no part in its scheduling."""
