"""The StatefulSet controller: pods ``<name>-0`` to ``<name>-N-1``, each with its stable identity.

Each pod carries the template's labels plus ``apps.kubernetes.io/pod-index``,
``statefulset.kubernetes.io/pod-name`` and ``controller-revision-hash`` (``<name>-<hash of the template>``),
and the hostname ``<name>-<i>`` (in ``serviceName``'s subdomain). Under ``OrderedReady`` (the default) the
next pod is created only once every lower one is Running and Ready, and scaling down deletes the highest
ordinal first, one at a time while the rest are Running and Ready; ``Parallel`` creates and deletes them all
at once. A pod that ended (Succeeded, Failed) is deleted and made again. A new template is rolled out
(``RollingUpdate``, ``partition`` honoured) from the highest ordinal down, one pod at a time once all are
Running and Ready; ``OnDelete`` waits for the user to delete them. Events: ``create Pod web-0 in
StatefulSet web successful``; a pod the API server refuses (its ServiceAccount does not exist) is ``create Pod
web-0 in StatefulSet web failed error: ...`` (``FailedCreate``), made again once that ServiceAccount is created. Not simulated: ``volumeClaimTemplates`` (no PersistentVolumeClaims are made;
pods start without them), ControllerRevision objects (the revision names are the pods' labels'),
``minReadySeconds`` and ``maxUnavailable``.
"""

from __future__ import annotations

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey
from drawb.cluster.sim.controllers.owners import (
    is_done,
    is_ready,
    pod_from_template,
    record_failed_create,
    template_hash,
)
from drawb.cluster.sim.controllers.workload import WorkloadController, write_status

COMPONENT = "statefulset-controller"
INDEX_LABEL = "apps.kubernetes.io/pod-index"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
REVISION_LABEL = "controller-revision-hash"


class StatefulSetController(WorkloadController):
    """Creates, deletes and updates a StatefulSet's pods in order and writes its status."""

    KIND = "StatefulSet"
    watches = frozenset({"StatefulSet", "Pod", "ServiceAccount"})

    def reconcile(self, api: ControllerApi, item: NsKey, sts: dict) -> None:
        """Create, delete and update the pods in order, then write the status."""
        spec = sts.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        revision = f"{sts['metadata']['name']}-{template_hash(spec.get('template') or {})}"
        pods = _by_ordinal(sts, api.index.owned(sts["metadata"].get("uid", ""), "Pod"))
        for ordinal, pod in sorted(pods.items()):
            if is_done(pod):
                _delete(api, sts, pod)
                del pods[ordinal]
        settled = True
        for ordinal in range(wanted):
            if ordinal not in pods:
                settled = False
                try:
                    pods[ordinal] = _create(api, sts, ordinal, revision)
                except ClusterError as exc:  # its ServiceAccount does not exist: tried again once it does
                    record_failed_create(api.events, sts, f"create Pod {sts['metadata']['name']}-{ordinal} in "
                                         f"StatefulSet {sts['metadata']['name']} failed error: {exc}", COMPONENT)
                    break
                if ordered:
                    break
            elif not _running_and_ready(pods[ordinal]):
                settled = False
                if ordered:
                    break
        condemned = sorted((o for o in pods if o >= wanted), reverse=True)
        if condemned and (settled or not ordered):
            for ordinal in condemned[:1] if ordered else condemned:
                _delete(api, sts, pods.pop(ordinal))
        elif settled and not condemned:
            self._roll(api, sts, pods, revision)
        _write_status(api, api.index.get("StatefulSet", item) or sts, list(pods.values()), revision)

    @staticmethod
    def _roll(api: ControllerApi, sts: dict, pods: dict[int, dict], revision: str) -> None:
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition", 0))
        stale = [o for o in sorted(pods, reverse=True)
                 if o >= partition and pods[o]["metadata"].get("labels", {}).get(REVISION_LABEL) != revision]
        if stale:
            _delete(api, sts, pods.pop(stale[0]))


def _by_ordinal(sts: dict, owned: list[dict]) -> dict[int, dict]:
    prefix = sts["metadata"]["name"] + "-"
    found = {}
    for pod in owned:
        suffix = pod["metadata"]["name"][len(prefix):]
        if pod["metadata"]["name"].startswith(prefix) and suffix.isdigit():
            found[int(suffix)] = pod
    return found


def _running_and_ready(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def _create(api: ControllerApi, sts: dict, ordinal: int, revision: str) -> dict:
    spec = sts.get("spec") or {}
    name = f"{sts['metadata']['name']}-{ordinal}"
    pod = pod_from_template(sts, spec.get("template") or {}, name, labels={
        REVISION_LABEL: revision, POD_NAME_LABEL: name, INDEX_LABEL: str(ordinal)})
    pod["spec"]["hostname"] = name
    if spec.get("serviceName"):
        pod["spec"]["subdomain"] = spec["serviceName"]
    stored = api.store(pod)
    api.events.record(sts, type_="Normal", reason="SuccessfulCreate", component=COMPONENT, core_v1=True,
                      message=f"create Pod {name} in StatefulSet {sts['metadata']['name']} successful")
    return stored


def _delete(api: ControllerApi, sts: dict, pod: dict) -> None:
    name = pod["metadata"]["name"]
    api.remove("Pod", pod["metadata"].get("namespace"), name)
    api.events.record(sts, type_="Normal", reason="SuccessfulDelete", component=COMPONENT, core_v1=True,
                      message=f"delete Pod {name} in StatefulSet {sts['metadata']['name']} successful")


def _write_status(api: ControllerApi, sts: dict, pods: list[dict], revision: str) -> None:
    ready = sum(1 for p in pods if _running_and_ready(p))
    updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision)
    old = sts.get("status") or {}
    current_revision = old.get("currentRevision") or revision
    if updated == len(pods) == int((sts.get("spec") or {}).get("replicas", 1)):
        current_revision = revision
    current = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == current_revision)
    status = {"observedGeneration": sts["metadata"].get("generation", 1), "replicas": len(pods),
              "readyReplicas": ready, "currentReplicas": current, "updatedReplicas": updated,
              "currentRevision": current_revision, "updateRevision": revision, "collisionCount": 0,
              "availableReplicas": ready}
    status = {k: v for k, v in status.items() if v or k in ("replicas", "availableReplicas", "collisionCount")}
    write_status(api, sts, status)
