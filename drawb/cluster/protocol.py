"""The Cluster protocol: the only door from drawb to a cluster, real or simulated.

Objects cross it as plain JSON dicts exactly as the API server sends them (camelCase).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from drawb.redact import redact
from drawb.errors import DrawbError

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "drawb"
FIELD_MANAGER = "drawb"

Handler = Callable[[str, dict], None]  # (ADDED | MODIFIED | DELETED, object)


def group_version_path(api_version: str) -> str:
    """Where an API group version is served: ``/api/v1`` for the core group, else ``/apis/<group>/<version>``."""
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


@dataclass(frozen=True)
class Kind:
    """Where a kind lives in the API."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool

    @property
    def path_prefix(self) -> str:
        """``/api/v1`` or ``/apis/<group>/<version>``."""
        return group_version_path(self.api_version)

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None,
             api_version: str | None = None) -> str:
        """The REST path of the collection (all namespaces, or one), of one object, or of its subresource;
        ``api_version``: through another version of the kind's group (a document sent as it is written)."""
        same_group = api_version is not None and api_version.rpartition("/")[0] == self.api_version.rpartition("/")[0]
        path = group_version_path(api_version) if same_group else self.path_prefix
        if self.namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{self.plural}"
        if name:
            path += f"/{name}" + (f"/{subresource}" if subresource else "")
        return path


KINDS: dict[str, Kind] = {
    k.kind: k
    for k in (
        Kind("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
        Kind("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
        Kind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
        Kind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True),
        Kind("DeviceTaintRule", "resource.k8s.io/v1", "devicetaintrules", False),
        Kind("Pod", "v1", "pods", True),
        Kind("Node", "v1", "nodes", False),
        Kind("Namespace", "v1", "namespaces", False),
        Kind("Event", "v1", "events", True),
        Kind("Job", "batch/v1", "jobs", True),
        Kind("Deployment", "apps/v1", "deployments", True),
        Kind("StatefulSet", "apps/v1", "statefulsets", True),
        Kind("DaemonSet", "apps/v1", "daemonsets", True),
        Kind("CronJob", "batch/v1", "cronjobs", True),
        Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    )
}


# Kinds drawb does not model but stores, lists and applies as given, so a user's manifest applies whole.
OTHER_KINDS: dict[str, Kind] = {
    k.kind: k
    for k in (
        Kind("ConfigMap", "v1", "configmaps", True),
        Kind("Secret", "v1", "secrets", True),
        Kind("Service", "v1", "services", True),
        Kind("ServiceAccount", "v1", "serviceaccounts", True),
        Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
        Kind("PersistentVolume", "v1", "persistentvolumes", False),
        Kind("LimitRange", "v1", "limitranges", True),
        Kind("ResourceQuota", "v1", "resourcequotas", True),
        Kind("ReplicaSet", "apps/v1", "replicasets", True),
        Kind("Role", "rbac.authorization.k8s.io/v1", "roles", True),
        Kind("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings", True),
        Kind("ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", False),
        Kind("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
        Kind("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies", True),
        Kind("Ingress", "networking.k8s.io/v1", "ingresses", True),
        Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
        Kind("HorizontalPodAutoscaler", "autoscaling/v2", "horizontalpodautoscalers", True),
        Kind("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
        Kind("ResourcePoolStatusRequest", "resource.k8s.io/v1alpha3", "resourcepoolstatusrequests", False),
    )
}


class ClusterError(DrawbError):
    """Something a cluster refused or could not do; carries the server's message."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        reason: str | None = None,
        hint: str | None = None,
        server_message: str | None = None,
    ):
        super().__init__(message, hint=hint)
        self.status = status
        self.reason = reason
        # the server's own words (redacted like every message)
        self.message = redact(server_message) if server_message is not None else str(self)
        self.index: int | None = None  # in an apply: the position of the object refused among those given


@contextmanager
def about_object(index: int) -> Iterator[None]:
    """Mark a ClusterError raised inside as about the ``index``-th object of an apply call."""
    try:
        yield
    except ClusterError as exc:
        if exc.index is None:
            exc.index = index
        raise


class NotConnected(ClusterError):
    """No cluster could be reached with the given settings."""


class Unauthorized(ClusterError):
    """The API server did not accept the credential (HTTP 401): names whose it was and how to refresh it."""


class NotManagedByDrawb(ClusterError):
    """drawb refuses to change an object it did not create."""


class DryRunObjects(list):
    """What a dry-run apply returns: the objects as the server would store them, and in ``unchecked`` the
    positions of those it could not check yet (each needs a Namespace or ServiceAccount the same apply creates,
    and a dry run creates nothing: the server checks them when they are applied)."""

    def __init__(self, objects: list[dict], unchecked: tuple[int, ...] = ()):
        super().__init__(objects)
        self.unchecked = unchecked


def kind_of(name: str) -> Kind:
    """Look up a kind by name (``ResourceSlice``, or one of ``OTHER_KINDS``), with the known kinds in the error."""
    known = KINDS.get(name) or OTHER_KINDS.get(name)
    if known is None:
        raise ClusterError(f"unknown kind {name!r}; known kinds: {', '.join([*KINDS, *OTHER_KINDS])}",
                           hint="drawb applies built-in kinds only (no custom resources)")
    return known


def is_managed(obj: dict) -> bool:
    """Whether drawb created ``obj`` (it carries drawb's managed-by label)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE


def with_managed_label(obj: dict) -> dict:
    """A copy of ``obj`` labelled as created by drawb; a ResourceClaimTemplate's claim metadata too, so the
    claims made from it are drawb's."""
    meta = dict(obj.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    labelled = {**obj, "metadata": meta}
    if obj.get("kind") == "ResourceClaimTemplate" and isinstance(obj.get("spec"), dict):
        claim_meta = dict(obj["spec"].get("metadata") or {})
        claim_meta["labels"] = {**(claim_meta.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY_VALUE}
        labelled["spec"] = {**obj["spec"], "metadata": claim_meta}
    return labelled


@runtime_checkable
class Cluster(Protocol):
    """What drawb needs from a cluster."""

    description: str

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None) -> list[dict]:
        """All objects of ``kind`` (in ``namespace``, or everywhere); ``api_version``: read through that version
        of the kind's group (one the server serves where it lacks the kind's own)."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """One object, or None when it does not exist."""

    def apply(self, objects: list[dict], *, dry_run: bool = False,
              progress: Callable[[str, int, int], None] | None = None) -> list[dict]:
        """Server-side apply as field manager ``drawb``: every object is dry-run first, then all or none are written.

        A ClusterError about one object carries its position in ``objects`` as ``index``; ``progress(step,
        done, total)`` is told of each object of each step."""

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force_unmanaged: bool = False) -> None:
        """Delete an object drawb created (refuses any other unless ``force_unmanaged``)."""

    def logs(self, pod: str, namespace: str, container: str | None = None, follow: bool = False) -> Iterator[str]:
        """A pod's log lines."""

    def server_version(self) -> str:
        """The API server's version, e.g. ``v1.34.3``."""

    def served_resources(self) -> set[str]:
        """``<group/version>/<plural>`` of every resource the server serves."""

    def group_versions(self, group: str) -> list[str]:
        """The versions of API ``group`` the server serves (empty when it serves none)."""

    def feature_gates_metric(self) -> dict[str, bool] | None:
        """The API server's ``kubernetes_feature_enabled`` metric, or None where it cannot be read."""

class Watch(Protocol):
    """A live store of one kind's objects, kept current by the cluster."""

    def subscribe(self, handler: Handler) -> list[dict]:
        """Call ``handler(event_type, obj)`` on every later change; return the objects held now.

        An event racing the subscription may reach ``handler`` although its object is already in the
        returned snapshot: ADDED/MODIFIED are upserts and DELETED of a missing object is a no-op.
        A handler that raises is logged and kept.
        """

    def unsubscribe(self, handler: Handler) -> None:
        """Stop calling ``handler`` (one never subscribed is ignored)."""

    def items(self) -> list[dict]:
        """The objects held now."""


@runtime_checkable
class WatchableCluster(Cluster, Protocol):
    """A cluster that keeps live stores: after ``watch(kind)``, ``list(kind)`` reads the store."""

    def watch(self, kind: str, namespace: str | None = None) -> Watch:
        """Start (or join) the live store of ``kind`` in ``namespace`` (None: every namespace; ignored for a
        cluster-scoped kind)."""

    def close(self) -> None:
        """Stop every watch."""
