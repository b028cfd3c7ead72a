"""The Deployment controller: a ReplicaSet per pod template, rolled from the old to the new.

The new ReplicaSet is ``<deployment>-<pod-template-hash>`` (the hash also labels it, its selector and its
template), controlled by the Deployment and annotated with its revision. ``RollingUpdate`` (the default,
``maxSurge`` and ``maxUnavailable`` 25%, surge rounded up and unavailability down) scales the new
ReplicaSet up as far as the surge allows and the old ones down as far as availability allows, step by
step as pods become ready; ``Recreate`` scales the old ones to 0 and creates the new one once their
pods are gone. Each scaling is a ``ScalingReplicaSet`` event (``Scaled up replica set X from 0 to 3``).
The status sums the ReplicaSets' counts and sets the ``Available`` and ``Progressing`` conditions as the
controller words them, and a ReplicaSet's ``ReplicaFailure`` (a pod the API server refused) as its own. Not simulated: ``paused``, ``progressDeadlineSeconds`` (never ``ProgressDeadlineExceeded``),
``minReadySeconds``, ``revisionHistoryLimit`` (old ReplicaSets at 0 are kept) and rollbacks.
"""

from __future__ import annotations

import math
from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey
from drawb.cluster.sim.controllers.owners import owner_reference, set_condition, template_hash
from drawb.cluster.sim.controllers.workload import WorkloadController, write_status
from drawb.cluster.sim.tree import copy_tree

COMPONENT = "deployment-controller"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


class DeploymentController(WorkloadController):
    """Keeps a Deployment's ReplicaSets and status."""

    KIND = "Deployment"
    watches = frozenset({"Deployment", "ReplicaSet"})

    def reconcile(self, api: ControllerApi, item: NsKey, deploy: dict) -> None:
        """Roll the Deployment one step towards its template, then write its status."""
        spec = deploy.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
        owned = api.index.owned(deploy["metadata"].get("uid", ""), "ReplicaSet")
        template = _without_hash(spec.get("template") or {})
        new = next((rs for rs in owned if _without_hash(rs["spec"].get("template") or {}) == template), None)
        old = [rs for rs in owned if rs is not new]
        surge, unavailable = _limits(deploy, wanted)
        if any((rs.get("status") or {}).get("observedGeneration", 0) < rs["metadata"].get("generation", 1) for rs in owned):
            return  # a ReplicaSet has not counted its pods since it was last scaled: wait for its status
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            self._recreate(api, deploy, new, old, wanted)
        else:
            self._roll(api, deploy, new, old, wanted, surge, unavailable)
        deploy = api.index.get("Deployment", item) or deploy
        owned = api.index.owned(deploy["metadata"].get("uid", ""), "ReplicaSet")
        new = next((rs for rs in owned if _without_hash(rs["spec"].get("template") or {}) == template), None)
        _write_status(api, deploy, new, owned, wanted, unavailable)

    def _recreate(self, api: ControllerApi, deploy: dict, new: dict | None, old: list[dict], wanted: int) -> None:
        for rs in old:
            _scale(api, deploy, rs, 0)
        if any(p for rs in old for p in api.index.owned(rs["metadata"].get("uid", ""), "Pod")):
            return  # the new pods come once the old are gone
        if new is None:
            _create_replicaset(api, deploy, wanted, old)
        else:
            _scale(api, deploy, new, wanted)

    def _roll(self, api: ControllerApi, deploy: dict, new: dict | None, old: list[dict], wanted: int,
              surge: int, unavailable: int) -> None:
        if new is None:
            current = sum(_replicas(rs) for rs in old)
            start = wanted if not any(_replicas(rs) for rs in old) else max(0, min(wanted, wanted + surge - current))
            new = _create_replicaset(api, deploy, start, old)
        elif _replicas(new) < wanted:
            room = wanted + surge - sum(_replicas(rs) for rs in [new, *old])
            if room > 0:
                _scale(api, deploy, new, min(wanted, _replicas(new) + room))
        elif _replicas(new) > wanted:
            _scale(api, deploy, new, wanted)
        # old ReplicaSets: their unavailable pods go first, then ready ones as far as availability allows
        live = [rs for rs in old if _replicas(rs)]
        if not live:
            return
        total = sum(_replicas(rs) for rs in [new, *old])
        new_unavailable = _replicas(new) - _available(new)
        budget = total - (wanted - unavailable) - new_unavailable
        for rs in sorted(live, key=lambda r: r["metadata"].get("creationTimestamp", "")):
            if budget <= 0:
                break
            cut = min(budget, _replicas(rs) - _available(rs)) if _replicas(rs) > _available(rs) else 0
            if cut:
                budget -= cut
                rs = _scale(api, deploy, rs, _replicas(rs) - cut)
        available = sum(_available(rs) for rs in [new, *old])
        budget = available - (wanted - unavailable)
        for rs in sorted(live, key=lambda r: r["metadata"].get("creationTimestamp", "")):
            rs = api.index.get("ReplicaSet", (rs["metadata"]["namespace"], rs["metadata"]["name"])) or rs
            if budget <= 0:
                break
            cut = min(budget, _replicas(rs))
            if cut:
                budget -= cut
                _scale(api, deploy, rs, _replicas(rs) - cut)


def _limits(deploy: dict, wanted: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) in pods (both 0 under Recreate; never both 0 under RollingUpdate)."""
    strategy = (deploy.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0, 0
    rolling = strategy.get("rollingUpdate") or {}
    surge = _pods(rolling.get("maxSurge", "25%"), wanted, up=True)
    unavailable = _pods(rolling.get("maxUnavailable", "25%"), wanted, up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _pods(value: int | str, wanted: int, *, up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * wanted / 100
        return math.ceil(exact) if up else math.floor(exact)
    return int(value)


def _without_hash(template: dict) -> dict:
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.pop(HASH_LABEL, None)
    return {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}}


def _replicas(rs: dict | None) -> int:
    return int(((rs or {}).get("spec") or {}).get("replicas", 0)) if rs else 0


def _available(rs: dict | None) -> int:
    return int(((rs or {}).get("status") or {}).get("availableReplicas", 0)) if rs else 0


def _create_replicaset(api: ControllerApi, deploy: dict, replicas: int, old: list[dict]) -> dict:
    spec = deploy.get("spec") or {}
    template = copy_tree(spec.get("template") or {})
    hashed = template_hash(template)
    template.setdefault("metadata", {})["labels"] = {**(template["metadata"].get("labels") or {}), HASH_LABEL: hashed}
    selector = copy_tree(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: hashed}
    meta = deploy["metadata"]
    wanted = int(spec.get("replicas", 1))
    revision = 1 + max((int((rs["metadata"].get("annotations") or {}).get(REVISION, 0)) for rs in old), default=0)
    rs = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"{meta['name']}-{hashed}", "namespace": meta.get("namespace") or "default",
                     "labels": dict(template["metadata"]["labels"]),
                     "annotations": {"deployment.kubernetes.io/desired-replicas": str(wanted),
                                     "deployment.kubernetes.io/max-replicas": str(wanted + _limits(deploy, wanted)[0]),
                                     REVISION: str(revision)},
                     "ownerReferences": [owner_reference(deploy)], "generation": 1},
        "spec": {"replicas": replicas, "selector": selector, "template": template},
        "status": {"replicas": 0},
    }
    if spec.get("minReadySeconds"):
        rs["spec"]["minReadySeconds"] = spec["minReadySeconds"]
    stored = api.store(rs)
    api.events.record(deploy, type_="Normal", reason="ScalingReplicaSet", component=COMPONENT, core_v1=True,
                      message=f"Scaled up replica set {rs['metadata']['name']} from 0 to {replicas}")
    return stored


def _scale(api: ControllerApi, deploy: dict, rs: dict, replicas: int) -> dict:
    before = _replicas(rs)
    if before == replicas:
        return rs
    draft = copy_tree(rs)
    draft["spec"]["replicas"] = replicas
    draft["metadata"]["generation"] = draft["metadata"].get("generation", 1) + 1
    stored = api.store(draft)
    way = "up" if replicas > before else "down"
    api.events.record(deploy, type_="Normal", reason="ScalingReplicaSet", component=COMPONENT, core_v1=True,
                      message=f"Scaled {way} replica set {rs['metadata']['name']} from {before} to {replicas}")
    return stored


def _set_progressing(status: dict, before: dict, new: dict, wanted: int, now: str) -> None:
    """``Progressing``: the new ReplicaSet created, then progressing while counts move, then complete."""
    name = new["metadata"]["name"]
    done = (_replicas(new) == wanted and _available(new) >= wanted and status.get("replicas", 0) == wanted
            and status.get("updatedReplicas", 0) == wanted)
    old = next((c for c in status.get("conditions") or () if c["type"] == "Progressing"), None)
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
    if done:
        set_condition(status, "Progressing", True, "NewReplicaSetAvailable",
                      f'ReplicaSet "{name}" has successfully progressed.', now)
    elif old is None or f'"{name}"' not in old.get("message", ""):
        set_condition(status, "Progressing", True, "NewReplicaSetCreated", f'Created new replica set "{name}"', now)
    elif any(status.get(k) != before.get(k) for k in counts):
        set_condition(status, "Progressing", True, "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.', now)


def _write_status(api: ControllerApi, deploy: dict, new: dict | None, owned: list[dict], wanted: int,
                  max_unavailable: int) -> None:
    counts = [rs.get("status") or {} for rs in owned]
    available = sum(c.get("availableReplicas", 0) for c in counts)
    status = copy_tree(deploy.get("status") or {})
    status.update({
        "observedGeneration": deploy["metadata"].get("generation", 1),
        "replicas": sum(c.get("replicas", 0) for c in counts),
        "updatedReplicas": ((new or {}).get("status") or {}).get("replicas", 0),
        "readyReplicas": sum(c.get("readyReplicas", 0) for c in counts),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum(_replicas(rs) for rs in owned) - available),
    })
    for name in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"):
        if not status[name]:
            del status[name]  # omitted when 0, as the API server returns them
    now = api.timestamp()
    if available >= wanted - max_unavailable:
        set_condition(status, "Available", True, "MinimumReplicasAvailable", "Deployment has minimum availability.", now)
    else:
        set_condition(status, "Available", False, "MinimumReplicasUnavailable",
                      "Deployment does not have minimum availability.", now)
    if new is not None:
        _set_progressing(status, deploy.get("status") or {}, new, wanted, now)
    _copy_replica_failure(status, [new] if new is not None else [], owned)
    write_status(api, deploy, status)


def _copy_replica_failure(status: dict, new: list[dict], owned: list[dict]) -> None:
    """The ``ReplicaFailure`` condition of a ReplicaSet (the new one's first) becomes the Deployment's; without
    one, the Deployment has none."""
    failure = next((c for rs in [*new, *owned] for c in (rs.get("status") or {}).get("conditions") or ()
                    if c["type"] == "ReplicaFailure"), None)
    conditions = [c for c in status.get("conditions") or () if c["type"] != "ReplicaFailure"]
    if failure is not None:
        when = failure.get("lastTransitionTime")
        conditions.append({"type": "ReplicaFailure", "status": failure["status"], "lastUpdateTime": when,
                           "lastTransitionTime": when, "reason": failure["reason"], "message": failure["message"]})
    if conditions or "conditions" in status:
        status["conditions"] = conditions
