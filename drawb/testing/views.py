"""Changed copies of the scheduler's view, for tests that explain a moment the cluster has passed (a pod
before binding, a claim not yet released): the cluster's objects are read-only."""

from __future__ import annotations

from typing import Any

from drawb.alloc.view import PlanState


def changed_view(state: PlanState, **objects: Any) -> PlanState:
    """``state`` made again with some of its objects replaced: ``pods``, ``claims``, ``slices``, ``classes``,
    ``nodes``, ``templates``, ``events``, ``pods_namespace``."""
    parts = dict(nodes=state.nodes, slices=state.slices, classes=state.classes, claims=state.claims, pods=state.pods,
                 templates=state.templates, events=state.events, pods_namespace=state.pods_namespace)
    unknown = objects.keys() - parts.keys()
    if unknown:
        raise TypeError(f"changed_view: no such part {', '.join(sorted(unknown))}; the parts are {', '.join(parts)}")
    parts.update(objects)
    return PlanState(**parts, kubernetes_version=state.kubernetes_version, feature_gates=state.feature_gates,
                     where=state.where, simulated=state.simulated)
