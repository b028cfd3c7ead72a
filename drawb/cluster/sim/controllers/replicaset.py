"""The ReplicaSet controller: keeps ``spec.replicas`` pods of the template alive, and counts them.

Missing pods are created as ``<replicaset>-<5 characters>`` (``SuccessfulCreate``, ``Created pod: X``);
extra pods are deleted, those worth least first as the controller ranks them: not yet on a node, then
pending, then not ready, then the newest (``SuccessfulDelete``, ``Deleted pod: X``). Pods that ended
(Succeeded, Failed) no longer count and are replaced; the controller leaves them be. Its status
counts ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas`` and ``availableReplicas`` (ready pods:
``minReadySeconds`` is not simulated) at ``observedGeneration``. A pod the API server refuses (its
ServiceAccount does not exist) is a ``FailedCreate`` warning (``Error creating: ...``) and the condition
``ReplicaFailure``; the controller creates no more in that pass (as its slow start stops at a failed batch) and
tries again when a ServiceAccount its template names is created.
"""

from __future__ import annotations

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey
from drawb.cluster.sim.controllers.owners import is_active, is_ready, pod_from_template, record_failed_create
from drawb.cluster.sim.controllers.workload import WorkloadController, unused_pod_name, write_status

COMPONENT = "replicaset-controller"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(WorkloadController):
    """Creates and deletes a ReplicaSet's pods and writes its status."""

    KIND = "ReplicaSet"
    watches = frozenset({"ReplicaSet", "Pod", "ServiceAccount"})

    def __init__(self) -> None:
        self._made: dict[str, int] = {}  # ReplicaSet uid -> pods created so far (the names' seed)

    def reconcile(self, api: ControllerApi, item: NsKey, rs: dict) -> None:
        """Create or delete pods until there are ``spec.replicas``, then write the status."""
        uid = rs["metadata"].get("uid", "")
        active = [p for p in api.index.owned(uid, "Pod") if is_active(p)]
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        failure = None
        if len(active) < wanted:
            for _ in range(wanted - len(active)):
                try:
                    active.append(self._create(api, rs))
                except ClusterError as exc:
                    failure = str(exc)
                    record_failed_create(api.events, rs, f"Error creating: {failure}", COMPONENT)
                    break
        elif len(active) > wanted:
            doomed = sorted(active, key=_deletion_rank)[: len(active) - wanted]
            for pod in doomed:
                api.remove("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
                api.events.record(rs, type_="Normal", reason="SuccessfulDelete",
                                  message=f"Deleted pod: {pod['metadata']['name']}", component=COMPONENT, core_v1=True)
            active = [p for p in active if p not in doomed]
        _write_status(api, api.index.get("ReplicaSet", item) or rs, active, failure)

    def _create(self, api: ControllerApi, rs: dict) -> dict:
        name = unused_pod_name(api, rs, self._made, "pod")
        pod = api.store(pod_from_template(rs, (rs.get("spec") or {}).get("template") or {}, name,
                                          rs["metadata"]["name"] + "-"))
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


def _write_status(api: ControllerApi, rs: dict, active: list[dict], failure: str | None) -> None:
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
    old = next((c for c in (rs.get("status") or {}).get("conditions") or () if c["type"] == "ReplicaFailure"), None)
    if failure is not None:  # set once; it stays, with its first message, until a pass creates what it must
        status["conditions"] = [old or {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                        "message": failure, "lastTransitionTime": api.timestamp()}]
    write_status(api, rs, status)
