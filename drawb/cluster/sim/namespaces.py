"""Namespaces of the simulated cluster: the ones every scenario has, what the API server adds to a new
one, and its refusal of an object in a namespace that does not exist."""

from __future__ import annotations

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.workloads import NAMESPACE as DEMO_NAMESPACE

# kube-apiserver's own four, the NVIDIA driver's demo namespace, and the demo workloads' one.
SEEDED_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system", "gpu-test", DEMO_NAMESPACE)
NAME_LABEL = "kubernetes.io/metadata.name"


def namespace_object(name: str) -> dict:
    """A Namespace as the API server stores it."""
    return set_namespace_defaults({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def set_namespace_defaults(namespace: dict) -> dict:
    """What kube-apiserver adds to a Namespace it stores: its name label, the ``kubernetes`` finalizer, phase Active."""
    meta = namespace.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), NAME_LABEL: meta.get("name", "")}
    spec = namespace.setdefault("spec", {})
    spec.setdefault("finalizers", ["kubernetes"])
    namespace.setdefault("status", {})["phase"] = "Active"
    return namespace


def namespace_not_found(name: str) -> ClusterError:
    """The API server's answer to an object in a namespace that does not exist."""
    return ClusterError(f'namespaces "{name}" not found', status=404, reason="NotFound",
                        hint=f"create it first (apply a Namespace named {name!r}, before the objects in it), "
                             "or put the objects in an existing namespace (-n NAMESPACE)")
