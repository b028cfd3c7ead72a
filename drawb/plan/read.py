"""The one reading of the scheduler's view from a cluster, for ``why``, ``preview`` and ``capacity``.

The cluster's minor and DRA gates (``drawb.plan.target``), its nodes, slices (with the taints of the
DeviceTaintRules its scheduler applies), classes and claims of every namespace, as one ``PlanState``.
"""

from __future__ import annotations

from drawb.alloc.taintrules import with_rule_taints
from drawb.alloc.view import PlanState
from drawb.cluster.protocol import Cluster
from drawb.plan.target import scheduled_taint_rules, scheduler_target


def read_view(cluster: Cluster, fallback_version: str, *, explaining: bool = False,
              namespace: str | None = None) -> PlanState:
    """The cluster now as its scheduler sees it (``fallback_version``'s rules when its version cannot be
    read); ``explaining``: with the pods, claim templates and events of ``namespace`` (None: of every
    namespace) that an explanation reads too."""
    target = scheduler_target(cluster, fallback_version)
    slices = with_rule_taints(cluster.list("ResourceSlice"), scheduled_taint_rules(cluster, target))
    rules = f"; checked with {target.kubernetes_version} rules" if target.newer_than_known else ""
    description = cluster.description
    extra = {}
    if explaining:
        extra = {"pods": cluster.list("Pod", namespace), "templates": cluster.list("ResourceClaimTemplate", namespace),
                 "events": cluster.list("Event", namespace), "pods_namespace": namespace}
    return PlanState(nodes=cluster.list("Node"), slices=slices, classes=cluster.list("DeviceClass"),
                     claims=cluster.list("ResourceClaim"), kubernetes_version=target.kubernetes_version,
                     feature_gates=target.feature_gates, where=f"{description}, Kubernetes {target.server_version}{rules}",
                     simulated=description.startswith("simulated"), **extra)
