"""The bad inputs of ``why``: each a named error with what to do."""

from __future__ import annotations

from drawb.errors import DrawbError


class ObjectNotFound(DrawbError):
    """The pod or claim to explain does not exist (``title`` names the kind: PodNotFound, ClaimNotFound)."""

    def __init__(self, kind: str, message: str, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.title = {"Pod": "PodNotFound", "ResourceClaim": "ClaimNotFound"}.get(kind, "ObjectNotFound")


class InOtherNamespace(DrawbError):
    """The object exists, but in another namespace than the one asked."""


class PodHasNoClaims(DrawbError):
    """The pod uses no ResourceClaim: DRA plays no part in its scheduling."""


class NotAManifest(DrawbError):
    """A file given to ``why`` holds no Pod or ResourceClaim manifest."""
