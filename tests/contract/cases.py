"""The Cluster protocol contract, as functions of a cluster and a fresh namespace.

Each case runs against the simulated cluster (tests/unit/sim) and against the real control
plane (tests/live), so both implementations answer the same way.
"""

from __future__ import annotations

import pytest

from drawb.cluster.protocol import MANAGED_BY_LABEL, Cluster, ClusterError, NotManagedByDrawb


def _template(name: str, namespace: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    }


def lists_slices_as_plain_json(cluster: Cluster, namespace: str) -> None:
    slices = cluster.list("ResourceSlice")
    assert slices and all(isinstance(s, dict) for s in slices)
    gpu = [s for s in slices if s["spec"]["driver"] == "gpu.nvidia.com"]
    assert gpu and all(s["apiVersion"] == "resource.k8s.io/v1" and s["kind"] == "ResourceSlice" for s in gpu)
    assert all("attributes" in d for s in gpu for d in s["spec"]["devices"])


def lists_the_nvidia_device_classes(cluster: Cluster, namespace: str) -> None:
    names = {c["metadata"]["name"] for c in cluster.list("DeviceClass")}
    assert {"gpu.nvidia.com", "mig.nvidia.com"} <= names


def get_of_a_missing_object_is_none(cluster: Cluster, namespace: str) -> None:
    assert cluster.get("ResourceClaim", "no-such-claim", namespace) is None


def dry_run_writes_nothing(cluster: Cluster, namespace: str) -> None:
    [checked] = cluster.apply([_template("dry", namespace)], dry_run=True)
    assert checked["metadata"]["labels"][MANAGED_BY_LABEL] == "drawb"
    assert cluster.get("ResourceClaimTemplate", "dry", namespace) is None


def apply_labels_what_it_creates(cluster: Cluster, namespace: str) -> None:
    [applied] = cluster.apply([_template("single-gpu", namespace)])
    stored = cluster.get("ResourceClaimTemplate", "single-gpu", namespace)
    assert stored["metadata"]["labels"][MANAGED_BY_LABEL] == "drawb"
    assert stored["spec"] == applied["spec"]
    assert [t["metadata"]["name"] for t in cluster.list("ResourceClaimTemplate", namespace)] == ["single-gpu"]


def apply_refuses_objects_drawb_did_not_create(cluster: Cluster, namespace: str) -> None:
    with pytest.raises(NotManagedByDrawb, match="Namespace 'default'"):
        cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}])
    assert MANAGED_BY_LABEL not in (cluster.get("Namespace", "default")["metadata"].get("labels") or {})


def apply_is_all_or_nothing(cluster: Cluster, namespace: str) -> None:
    good = _template("first", namespace)
    bad = _template("Not_A_DNS_Name", namespace)
    with pytest.raises(ClusterError, match="Not_A_DNS_Name"):
        cluster.apply([good, bad])
    assert cluster.get("ResourceClaimTemplate", "first", namespace) is None


def delete_removes_only_what_drawb_created(cluster: Cluster, namespace: str) -> None:
    cluster.apply([_template("gone", namespace)])
    cluster.delete("ResourceClaimTemplate", "gone", namespace)
    assert cluster.get("ResourceClaimTemplate", "gone", namespace) is None
    with pytest.raises(NotManagedByDrawb):
        cluster.delete("Namespace", "default")
    with pytest.raises(ClusterError, match="not found"):
        cluster.delete("ResourceClaimTemplate", "never-was", namespace)


def reports_version_and_served_resources(cluster: Cluster, namespace: str) -> None:
    assert cluster.server_version().startswith("v1.34")
    served = cluster.served_resources()
    assert {"resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1/resourceclaims", "v1/pods"} <= served


CASES = [
    lists_slices_as_plain_json,
    lists_the_nvidia_device_classes,
    get_of_a_missing_object_is_none,
    dry_run_writes_nothing,
    apply_labels_what_it_creates,
    apply_refuses_objects_drawb_did_not_create,
    apply_is_all_or_nothing,
    delete_removes_only_what_drawb_created,
    reports_version_and_served_resources,
]
