"""Replay a snapshot in the simulated cluster: the original's objects, version and gates, offline.

Claims already allocated stay allocated, running pods keep running on their nodes, and the
simulated scheduler allocates new claims with the original's Kubernetes version and feature gates.
"""

from __future__ import annotations

import os

from drawb import versions
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import Scenario
from drawb.cluster.snapshot.document import Snapshot, read
from drawb.cluster.snapshot.errors import SnapshotKubernetesVersion

_SEEDED = ("Namespace", "ResourceClaimTemplate", "ResourceClaim", "Pod")


def scenario(snapshot: Snapshot, name: str) -> Scenario:
    """The simulated cluster's scenario holding ``snapshot``'s objects, version and gates."""
    if snapshot.kubernetes_version not in versions.known():
        raise SnapshotKubernetesVersion(
            f"snapshot {name} is of Kubernetes {snapshot.kubernetes_version or 'unknown'}; the simulated "
            f"cluster replays {', '.join(versions.known())}",
            hint="save it from a cluster of a supported version, or for kubectl output pass "
                 "`snapshot from-files --kubernetes-version`")
    objects = snapshot.objects
    return Scenario(
        name=f"snapshot:{name}",
        description=f"snapshot of {snapshot.source}, saved {snapshot.created}",
        gpu_nodes=[],
        nodes=list(objects.get("Node", [])),
        resource_slices=list(objects.get("ResourceSlice", [])),
        device_classes=list(objects.get("DeviceClass", [])),
        feature_gates={g: v for g, v in snapshot.feature_gates.items() if versions.is_dra_gate(g)},
        server_version=snapshot.server_version or snapshot.kubernetes_version,
        objects=[o for kind in _SEEDED for o in objects.get(kind, [])],
        simulated_kubelets=False,
    )


def replay(path: str | os.PathLike) -> SimCluster:
    """The simulated cluster replaying the snapshot in file ``path``."""
    snapshot = read(path)
    cluster = SimCluster(scenario(snapshot, str(path)), workloads=False)
    origin = "redacted cluster" if snapshot.redacted else snapshot.source
    cluster.description = f"simulated cluster replaying snapshot {path} (of {origin}, saved {snapshot.created})"
    return cluster
