"""The ReplicaSet controller: keeps ``spec.replicas`` pods of the template alive, and counts them.

Missing pods are created as ``<replicaset>-<5 characters>`` (``SuccessfulCreate``, ``Created pod: X``);
extra pods are deleted, those worth least first as the controller ranks them: not yet on a node, then
pending, then not ready, then the newest (``SuccessfulDelete``, ``Deleted pod: X``). Pods that ended
(Succeeded, Failed) no longer count and are replaced; the controller leaves them be. Its status
counts ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas`` and ``availableReplicas`` (ready pods:
``minReadySeconds`` is not simulated) at ``observedGeneration``.
"""

from __future__ import annotations

from collections.abc import Iterable

from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey, ObjectIndex
from drawb.cluster.sim.controllers.owners import generated_name, is_active, is_ready, pod_from_template
from drawb.cluster.sim.tree import copy_tree

COMPONENT = "replicaset-controller"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController:
    """Creates and deletes a ReplicaSet's pods and writes its status."""

    watches = frozenset({"ReplicaSet", "Pod"})

    def __init__(self) -> None:
        self._made: dict[str, int] = {}  # ReplicaSet uid -> pods created so far (the names' seed)

    def wake(self, kind: str, obj: dict, deleted: bool, index: ObjectIndex) -> Iterable[NsKey]:
        """The ReplicaSet itself, or a pod's ReplicaSet."""
        if kind == "ReplicaSet":
            return [] if deleted else [(obj["metadata"].get("namespace") or "", obj["metadata"]["name"])]
        return index.owners_of("ReplicaSet", obj)

    def sync(self, api: ControllerApi, item: NsKey) -> None:
        """Create or delete pods until there are ``spec.replicas``, then write the status."""
        rs = api.index.get("ReplicaSet", item)
        if rs is None:
            return
        uid = rs["metadata"].get("uid", "")
        active = [p for p in api.index.owned(uid, "Pod") if is_active(p)]
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        if len(active) < wanted:
            for _ in range(wanted - len(active)):
                active.append(self._create(api, rs))
        elif len(active) > wanted:
            doomed = sorted(active, key=_deletion_rank)[: len(active) - wanted]
            for pod in doomed:
                api.remove("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
                api.events.record(rs, type_="Normal", reason="SuccessfulDelete",
                                  message=f"Deleted pod: {pod['metadata']['name']}", component=COMPONENT, core_v1=True)
            active = [p for p in active if p not in doomed]
        _write_status(api, api.index.get("ReplicaSet", item) or rs, active)

    def _create(self, api: ControllerApi, rs: dict) -> dict:
        meta = rs["metadata"]
        base = meta["name"] + "-"
        while True:
            count = self._made[meta.get("uid", "")] = self._made.get(meta.get("uid", ""), 0) + 1
            name = generated_name(base, "pod", meta.get("namespace"), meta["name"], meta.get("uid"), count)
            if api.index.get("Pod", (meta.get("namespace") or "", name)) is None:
                break
        pod = api.store(pod_from_template(rs, (rs.get("spec") or {}).get("template") or {}, name, base))
        api.events.record(rs, type_="Normal", reason="SuccessfulCreate", message=f"Created pod: {name}",
                          component=COMPONENT, core_v1=True)
        return pod


def _deletion_rank(pod: dict) -> tuple:
    """Pods worth least first: unassigned, pending, not ready, then the newest."""
    status = pod.get("status") or {}
    created = pod["metadata"].get("creationTimestamp", "")
    return (bool(pod["spec"].get("nodeName")), _PHASE_RANK.get(status.get("phase", "Pending"), 0), is_ready(pod),
            _negated(created), _negated(pod["metadata"]["name"]))


def _negated(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def _write_status(api: ControllerApi, rs: dict, active: list[dict]) -> None:
    selector = ((rs.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    ready = sum(1 for p in active if is_ready(p))
    status = {
        "replicas": len(active),
        "fullyLabeledReplicas": sum(1 for p in active
                                    if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": rs["metadata"].get("generation", 1),
    }
    status = {k: v for k, v in status.items() if v or k == "replicas"}  # the others are omitted when 0
    if (rs.get("status") or {}) != status:
        draft = copy_tree(rs)
        draft["status"] = status
        api.store(draft)
