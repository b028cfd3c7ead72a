"""``doctor``: is this cluster ready for DRA on NVIDIA GPUs? Read-only checks and real gate probes.

Every check reads objects or sends a server-side dry run; nothing is stored unless ``live`` asks
for the live probe, which creates a labelled claim and pod and removes them.
"""

from __future__ import annotations

import time

from drawb.cluster.protocol import Cluster, ClusterError
from drawb.doctor.checks import (
    Snapshot,
    check_api,
    check_classes,
    check_double_booking,
    check_gpu_nodes,
    check_pending_pods,
    check_pools,
    check_taint_rules,
    check_priority_classes,
    check_version,
)
from drawb.doctor.gates import check_gates
from drawb.doctor.probes import ON
from drawb.doctor.report import Check, Report

__all__ = ["Check", "Report", "diagnose"]


def _snapshot(cluster: Cluster) -> Snapshot:
    try:
        priority_classes = cluster.list("PriorityClass")
    except ClusterError:
        priority_classes = None
    return Snapshot(
        nodes=cluster.list("Node"),
        slices=cluster.list("ResourceSlice"),
        classes=cluster.list("DeviceClass"),
        claims=cluster.list("ResourceClaim"),
        pods=cluster.list("Pod"),
        priority_classes=priority_classes,
    )


def diagnose(cluster: Cluster, *, namespace: str = "default", live: bool = False, live_timeout: float = 60) -> Report:
    """Run every check against ``cluster``; probes that need a namespace use ``namespace``."""
    started = time.monotonic()
    version = cluster.server_version()
    simulated = type(cluster).__module__.startswith("drawb.cluster.sim")
    report = Report(cluster=cluster.description, server_version=version, simulated=simulated)
    minor = check_version(report, version)
    versions = cluster.group_versions("resource.k8s.io")
    if check_api(report, versions):
        snapshot = _snapshot(cluster)
        check_classes(report, snapshot)
        check_gpu_nodes(report, snapshot)
        check_pools(report, snapshot)
        report.feature_gates_metric = cluster.feature_gates_metric()
        outcomes = check_gates(report, cluster, namespace, minor, report.feature_gates_metric)
        check_taint_rules(report, minor, outcomes["DRADeviceTaints"].state == ON, versions)
        check_double_booking(report, snapshot)
        check_pending_pods(report, snapshot)
        check_priority_classes(report, snapshot)
        if live:
            from drawb.doctor.live import live_probe

            # The simulated cluster runs pods on the wall clock (a first image pull takes 10 s there).
            timeout = min(live_timeout, 15) if simulated else live_timeout
            live_probe(report, cluster, namespace, outcomes, timeout=timeout)
    report.seconds = time.monotonic() - started
    return report
