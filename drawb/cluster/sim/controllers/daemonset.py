"""The DaemonSet controller: one pod on every node that should run it.

A node should run the DaemonSet's pod when the pod (with the tolerations the controller adds) passes the
node's taints and the template's ``nodeSelector`` and required node affinity (``drawb.api.nodeaffinity``);
a cordoned node still does, as the added toleration of ``node.kubernetes.io/unschedulable`` allows. Each pod
is ``<name>-<5 characters>``, labelled with ``controller-revision-hash`` and ``pod-template-generation``, and
pinned to its node as the real controller pins it: its required node affinity becomes the single term
``matchFields metadata.name In [node]``; the scheduler still places it (and allocates its claims there).
Pods on nodes that should not run one, extra pods, and pods that ended are deleted; a node that joins or
changes is looked at again. A new template replaces the pods one node at a time (``RollingUpdate``,
``maxUnavailable`` 1) once the others are ready; ``OnDelete`` waits. Events: ``Created pod: X``,
``Deleted pod: X``, and ``Error creating: ...`` (``FailedCreate``) for a pod the API server refuses (its
ServiceAccount does not exist): no more are created in that pass, and a ServiceAccount it runs as, once
created, wakes the DaemonSet again. Not simulated: ``minReadySeconds``, ``maxSurge``, ControllerRevision objects.
"""

from __future__ import annotations

from collections.abc import Iterable

from drawb.api.nodeaffinity import node_exclusion
from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey, ObjectIndex
from drawb.cluster.sim.controllers.owners import (
    is_done,
    is_ready,
    pod_from_template,
    record_failed_create,
    template_hash,
)
from drawb.cluster.sim.controllers.workload import WorkloadController, unused_pod_name, write_status
from drawb.cluster.sim.tree import copy_tree

COMPONENT = "daemonset-controller"
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
_ADDED_TOLERATIONS = (  # what the controller adds to every daemon pod (network-unavailable only with hostNetwork)
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


class DaemonSetController(WorkloadController):
    """Keeps one pod of each DaemonSet on each node that should run it, and writes its status."""

    KIND = "DaemonSet"
    watches = frozenset({"DaemonSet", "Pod", "Node", "ServiceAccount"})

    def __init__(self) -> None:
        self._made: dict[str, int] = {}  # DaemonSet uid -> pods created so far (the names' seed)
        self._eligible: dict[tuple[str, str], list[str]] = {}  # (uid, revision) -> its nodes, until a node changes

    def wake(self, kind: str, obj: dict, deleted: bool, index: ObjectIndex) -> Iterable[NsKey]:
        """The DaemonSet itself, a pod's DaemonSet, or every DaemonSet when a node changes."""
        if kind == "Node":
            self._eligible.clear()
            return list(index.by_kind["DaemonSet"])
        return super().wake(kind, obj, deleted, index)

    def reconcile(self, api: ControllerApi, item: NsKey, ds: dict) -> None:
        """Create and delete daemon pods until each node that should run one has one."""
        template = (ds.get("spec") or {}).get("template") or {}
        revision = template_hash(template)
        eligible = self._eligible.get((ds["metadata"].get("uid", ""), revision))
        if eligible is None:
            shape = {"spec": {**(template.get("spec") or {}), "tolerations": _tolerations(template)}}
            eligible = [n for n in sorted(api.nodes) if node_exclusion(shape, api.nodes[n]) is None]
            self._eligible[(ds["metadata"].get("uid", ""), revision)] = eligible
        on_node: dict[str, list[dict]] = {}
        for pod in api.index.owned(ds["metadata"].get("uid", ""), "Pod"):
            if is_done(pod):
                _delete(api, ds, pod)
            else:
                on_node.setdefault(target_node(pod) or "", []).append(pod)
        wanted = set(eligible)
        for node, pods in sorted(on_node.items()):
            for pod in pods if node not in wanted else pods[1:]:
                _delete(api, ds, pod)
            on_node[node] = [] if node not in wanted else pods[:1]
        for node in eligible:
            if not on_node.get(node):
                try:
                    on_node[node] = [self._create(api, ds, node, revision)]
                except ClusterError as exc:
                    record_failed_create(api.events, ds, f"Error creating: {exc}", COMPONENT)
                    break
        self._roll(api, ds, {n: on_node[n][0] for n in eligible if on_node.get(n)}, revision)
        _write_status(api, api.index.get("DaemonSet", item) or ds, eligible, on_node, revision)

    def _create(self, api: ControllerApi, ds: dict, node: str, revision: str) -> dict:
        meta = ds["metadata"]
        name = unused_pod_name(api, ds, self._made, "daemon-pod")
        template = (ds.get("spec") or {}).get("template") or {}
        pod = pod_from_template(ds, template, name, meta["name"] + "-", labels={
            REVISION_LABEL: revision, GENERATION_LABEL: str(meta.get("generation", 1))})
        pod["spec"]["tolerations"] = _tolerations(template)
        affinity = pod["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        stored = api.store(pod)
        api.events.record(ds, type_="Normal", reason="SuccessfulCreate", message=f"Created pod: {name}",
                          component=COMPONENT, core_v1=True)
        return stored

    @staticmethod
    def _roll(api: ControllerApi, ds: dict, pods: dict[str, dict], revision: str) -> None:
        if ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") == "OnDelete":
            return
        if any(not is_ready(p) for p in pods.values()):
            return  # maxUnavailable 1: one node at a time
        stale = [p for _, p in sorted(pods.items()) if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision]
        if stale:
            _delete(api, ds, stale[0])


def target_node(pod: dict) -> str | None:
    """The node a daemon pod is for: its ``spec.nodeName``, else the node its affinity pins it to."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    required = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(field.get("values") or ()) == 1:
                return field["values"][0]
    return None


def _tolerations(template: dict) -> list[dict]:
    tolerations = copy_tree((template.get("spec") or {}).get("tolerations") or [])
    for key, effect in _ADDED_TOLERATIONS:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    return tolerations


def _delete(api: ControllerApi, ds: dict, pod: dict) -> None:
    name = pod["metadata"]["name"]
    api.remove("Pod", pod["metadata"].get("namespace"), name)
    api.events.record(ds, type_="Normal", reason="SuccessfulDelete", message=f"Deleted pod: {name}", component=COMPONENT, core_v1=True)


def _write_status(api: ControllerApi, ds: dict, eligible: list[str], on_node: dict[str, list[dict]],
                  revision: str) -> None:
    placed = [pods[0] for node, pods in on_node.items() if pods and node in set(eligible)]
    ready = sum(1 for p in placed if is_ready(p))
    status = {
        "currentNumberScheduled": len(placed),
        "numberMisscheduled": 0,
        "desiredNumberScheduled": len(eligible),
        "numberReady": ready,
        "observedGeneration": ds["metadata"].get("generation", 1),
        "updatedNumberScheduled": sum(1 for p in placed if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision),
        "numberAvailable": ready,
        "numberUnavailable": len(eligible) - ready,
    }
    status = {k: v for k, v in status.items() if v or k in ("currentNumberScheduled", "numberMisscheduled",
                                                             "desiredNumberScheduled", "numberReady")}
    write_status(api, ds, status)
