"""The Cluster protocol contract, as functions of a cluster and a fresh namespace.

Each case runs against the simulated cluster (tests/unit/sim) and against the real control
plane (tests/live), so both implementations answer the same way.
"""

from __future__ import annotations

import re

import pytest

from drawb.cluster.live import LiveDevices
from drawb.cluster.protocol import MANAGED_BY_LABEL, Cluster, ClusterError, NotManagedByDrawb, WatchableCluster
from drawb.testing.waiting import wait_for


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
    with pytest.raises(NotManagedByDrawb, match="Namespace 'default'") as refused:
        cluster.apply([_template("before", namespace),
                       {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}])
    assert refused.value.index == 1  # which object was refused
    assert MANAGED_BY_LABEL not in (cluster.get("Namespace", "default")["metadata"].get("labels") or {})


def apply_is_all_or_nothing(cluster: Cluster, namespace: str) -> None:
    good = _template("first", namespace)
    bad = _template("Not_A_DNS_Name", namespace)
    with pytest.raises(ClusterError, match="Not_A_DNS_Name") as refused:
        cluster.apply([good, bad])
    assert refused.value.index == 1
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
    version = re.fullmatch(r"v1\.(\d+)\.\d+", cluster.server_version())  # the live tier's, or the simulation's
    assert version and int(version[1]) >= 34, cluster.server_version()  # resource.k8s.io/v1 is served from 1.34
    served = cluster.served_resources()
    assert {"resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1/resourceclaims", "v1/pods"} <= served


def watch_reports_every_change_and_keeps_list_current(cluster: WatchableCluster, namespace: str) -> None:
    assert isinstance(cluster, WatchableCluster)
    seen: list[tuple[str, str]] = []
    snapshot = cluster.watch("ResourceClaimTemplate").subscribe(
        lambda kind, obj: seen.append((kind, obj["metadata"]["name"]))
    )
    assert "watched" not in {o["metadata"]["name"] for o in snapshot}
    cluster.apply([_template("watched", namespace)])
    wait_for(lambda: ("ADDED", "watched") in seen, what="ADDED event")
    assert [t["metadata"]["name"] for t in cluster.list("ResourceClaimTemplate", namespace)] == ["watched"]
    cluster.apply([_template("watched", namespace) | {"metadata": {"name": "watched", "namespace": namespace,
                                                                  "annotations": {"drawb.test/changed": "yes"}}}])
    wait_for(lambda: ("MODIFIED", "watched") in seen, what="MODIFIED event")
    cluster.delete("ResourceClaimTemplate", "watched", namespace)
    wait_for(lambda: ("DELETED", "watched") in seen, what="DELETED event")
    assert cluster.list("ResourceClaimTemplate", namespace) == []


def a_failing_watch_handler_is_survived(cluster: WatchableCluster, namespace: str) -> None:
    seen: list[str] = []

    def broken(kind: str, obj: dict) -> None:
        raise RuntimeError("handler bug")

    watch = cluster.watch("ResourceClaimTemplate")
    watch.subscribe(broken)
    watch.subscribe(lambda kind, obj: seen.append(obj["metadata"]["name"]))
    cluster.apply([_template("after-bug", namespace)])
    wait_for(lambda: "after-bug" in seen, what="the second handler's event")


def live_devices_follow_slice_changes(cluster: WatchableCluster, namespace: str) -> None:
    live = LiveDevices(cluster)
    before = len(live.frame())
    template = next(s for s in cluster.list("ResourceSlice") if s["spec"]["driver"] == "gpu.nvidia.com")
    extra = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"drawb-contract-{namespace}"},
        "spec": {**template["spec"], "pool": {"name": f"contract-{namespace}", "generation": 1, "resourceSliceCount": 1}},
    }
    cluster.apply([extra])
    try:
        added = len(template["spec"]["devices"])
        wait_for(lambda: len(live.frame()) == before + added, what="the new slice's devices in the frame")
        assert set(live.frame()["pool"]) >= {f"contract-{namespace}"}
    finally:
        cluster.delete("ResourceSlice", extra["metadata"]["name"])
    wait_for(lambda: len(live.frame()) == before, what="the deleted slice's devices gone")


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
    watch_reports_every_change_and_keeps_list_current,
    a_failing_watch_handler_is_survived,
    live_devices_follow_slice_changes,
]
