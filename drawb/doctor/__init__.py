"""``doctor``: is this cluster ready for DRA on NVIDIA GPUs? Read-only checks and real gate probes.

Every check reads objects or sends a server-side dry run; nothing is stored unless ``live`` asks
for the live probe, which creates a labelled claim and pod and removes them.
"""

from __future__ import annotations

import time

from drawb.cluster.refusal import RbacRefused
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
from drawb.doctor.report import FAIL, WARN, Check, Report

__all__ = ["Check", "Report", "diagnose"]

PODS_IN_NAMESPACE = "Pod (cluster-wide)"  # refused cluster-wide, read in the namespace


def _snapshot(cluster: Cluster, namespace: str) -> Snapshot:
    """List what the checks read. A kind RBAC refuses is left empty and named in ``refused``; pods
    refused cluster-wide are read in ``namespace`` alone."""
    refused: dict[str, str] = {}

    def read(kind: str) -> list[dict]:
        try:
            return cluster.list(kind)
        except RbacRefused as exc:
            if kind == "Pod":
                try:
                    pods = cluster.list("Pod", namespace)
                    refused[PODS_IN_NAMESPACE] = (f"pods read in namespace {namespace} only "
                                                  f"({exc.verb} at the cluster scope refused)")
                    return pods
                except RbacRefused:
                    pass
            refused[kind] = str(exc).split(";")[0]
            return []

    try:
        priority_classes = cluster.list("PriorityClass")
    except RbacRefused as exc:
        refused["PriorityClass"] = str(exc).split(";")[0]
        priority_classes = None
    except ClusterError:
        priority_classes = None
    snapshot = Snapshot(nodes=read("Node"), slices=read("ResourceSlice"), classes=read("DeviceClass"),
                        claims=read("ResourceClaim"), pods=read("Pod"), priority_classes=priority_classes)
    snapshot.refused = refused
    return snapshot


def _readable(refused: dict[str, str]):
    """``readable(*kinds)``: whether RBAC let every one of ``kinds`` be read (a check needing one refused is skipped)."""
    return lambda *kinds: not any(kind in refused for kind in kinds)


def _report_refused(report: Report, refused: dict[str, str]) -> None:
    """A FAIL when RBAC kept doctor from reading a kind at all (its verdict would be a guess: it exits 1), a WARN
    when pods could be read in the namespace only (what drawb's own Role grants)."""
    if refused:
        unread = [kind for kind in refused if kind != PODS_IN_NAMESPACE]
        report.add("access", FAIL if unread else WARN,
                   "RBAC kept doctor from reading everything: " + "; ".join(refused.values())
                   + "; the checks that need what was refused are left out",
                   "drawb's RBAC manifest grants every read doctor needs except pods outside one namespace: "
                   "`{prog} rbac -n NAMESPACE --user USER` prints it for a cluster admin to apply")


def diagnose(cluster: Cluster, *, namespace: str = "default", live: bool = False, live_timeout: float = 60) -> Report:
    """Run every check against ``cluster``; probes that need a namespace use ``namespace``."""
    started = time.monotonic()
    version = cluster.server_version()
    simulated = type(cluster).__module__.startswith("drawb.cluster.sim")
    report = Report(cluster=cluster.description, server_version=version, simulated=simulated)
    rules = check_version(report, version)
    versions = cluster.group_versions("resource.k8s.io")
    if check_api(report, versions, rules):
        snapshot = _snapshot(cluster, namespace)
        _report_refused(report, snapshot.refused)
        readable = _readable(snapshot.refused)
        if readable("DeviceClass"):
            check_classes(report, snapshot)
        if readable("Node", "ResourceSlice"):
            check_gpu_nodes(report, snapshot)
        if readable("ResourceSlice"):
            check_pools(report, snapshot)
        report.feature_gates_metric = cluster.feature_gates_metric()
        outcomes = check_gates(report, cluster, namespace, rules, report.feature_gates_metric)
        check_taint_rules(report, rules, outcomes["DRADeviceTaints"].state == ON, versions)
        if readable("Node", "ResourceSlice"):
            check_double_booking(report, snapshot)
        if readable("Pod", "ResourceClaim"):
            check_pending_pods(report, snapshot)
        check_priority_classes(report, snapshot)
        if live:
            from drawb.doctor.live import live_probe

            # The simulated cluster runs pods on the wall clock (a first image pull takes 10 s there).
            timeout = min(live_timeout, 15) if simulated else live_timeout
            live_probe(report, cluster, namespace, outcomes, timeout=timeout)
    report.seconds = time.monotonic() - started
    return report
