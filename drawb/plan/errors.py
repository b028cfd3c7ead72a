"""The bad inputs of the scheduler's view (``why``, ``preview``, ``capacity``): each a named error, one
for the three commands."""

from __future__ import annotations

from drawb.errors import DrawbError

_TITLES = {"Pod": "PodNotFound", "ResourceClaim": "ClaimNotFound",
           **{k: f"{k}NotFound" for k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")}}


class ObjectNotFound(DrawbError):
    """The object asked about (or one it names) does not exist; given its ``kind``, the name users see
    says which (PodNotFound, ClaimNotFound)."""

    def __init__(self, message: str, *, kind: str | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.title = _TITLES.get(kind or "")


class NotAManifest(DrawbError):
    """A file that is not YAML, or holds no Kubernetes object of the kinds the command takes."""


class OtherNamespace(DrawbError):
    """The object exists, but in another namespace than the one asked about."""


class NoClaims(DrawbError):
    """A pod that uses no ResourceClaims: there is nothing to allocate, and DRA plays no part in where it runs."""

    hint = "add spec.resourceClaims (a resourceClaimTemplateName or resourceClaimName) and resources.claims"
