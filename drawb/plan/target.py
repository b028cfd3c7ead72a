"""The one reading of which scheduler a cluster runs: the minor whose rules apply and its DRA gates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from drawb import versions
from drawb.cluster.protocol import Cluster
from drawb.cluster.refusal import RbacRefused


@dataclass(frozen=True)
class SchedulerTarget:
    """What the scheduler of the connected cluster decides with."""

    kubernetes_version: str  # the release whose rules apply, e.g. "v1.36.3" (its patch picks the allocator's behaviour)
    feature_gates: Mapping[str, bool] | None  # the cluster's DRA gates as it reports them; None: the defaults
    newer_than_known: str | None = None  # the server's minor when drawb knows only older ones
    server_version: str = ""  # the API server's version as it reports it


def dra_gates(reported: Mapping[str, bool] | None) -> dict[str, bool] | None:
    """The DRA gates among those a cluster reports (None when it reports none)."""
    return {g: bool(v) for g, v in reported.items() if versions.is_dra_gate(g)} if reported else None


def scheduler_target(cluster: Cluster, fallback_version: str) -> SchedulerTarget:
    """The cluster's release, patch included (the newest drawb knows for a newer minor; ``fallback_version``
    when its version cannot be read), and its DRA gates."""
    server = cluster.server_version()
    try:
        parsed = versions.parse(server)
        rules, newer = versions.known_rules(parsed)
    except versions.NotAKubernetesVersion:
        rules, newer, parsed = None, False, None
    version = rules.version if rules is not None else fallback_version
    return SchedulerTarget(version, dra_gates(cluster.feature_gates_metric()),
                           parsed.minor_text if newer and parsed else None, server)


def served_version(cluster: Cluster, kind: str, minor: str) -> str | None:
    """The ``resource.k8s.io`` version the cluster serves ``kind`` through (the minor's preferred first);
    None when it serves none of those that have it."""
    have = versions.rules(minor).kind_versions(kind)
    if not have:
        return None
    served = set(cluster.group_versions("resource.k8s.io"))
    return next((v for v in have if v in served), None)


def gate_on(target: SchedulerTarget, gate: str | None) -> bool:
    """Whether ``gate`` is on for the cluster's scheduler (its default where the cluster does not say)."""
    if gate is None:
        return False
    return versions.rules(target.kubernetes_version).gate_values(target.feature_gates, enforce_locks=False).get(gate, False)


def scheduled_taint_rules(cluster: Cluster, target: SchedulerTarget) -> list[dict]:
    """The DeviceTaintRules the cluster's scheduler applies to devices: none while their gate is off or the
    cluster serves no version of them."""
    if not gate_on(target, versions.rules(target.kubernetes_version).kind_gate("DeviceTaintRule")):
        return []
    version = served_version(cluster, "DeviceTaintRule", target.kubernetes_version)
    if version is None:
        return []
    try:
        return cluster.list("DeviceTaintRule", api_version=f"resource.k8s.io/{version}")
    except RbacRefused:  # a role without them: the scheduler's view without the rules' taints
        return []
