"""The simulated cluster's workload controllers: Deployments and ReplicaSets make, scale and roll pods."""

from __future__ import annotations

import copy
import re

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster

NS = "default"
IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}


def _pod_template(app: str, image: str = IMAGE, claims: bool = True) -> dict:
    spec: dict = {"containers": [{"name": "ctr", "image": image, "command": ["sleep", "infinity"]}]}
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        spec["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def deployment(name: str, replicas: int, image: str = IMAGE, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": _pod_template(name, image), **spec}}


@pytest.fixture
def sim():
    return SimCluster(workloads=False, clock=ManualClock())


def _settled(sim: SimCluster, seconds: float = 10) -> None:
    for _ in range(int(seconds)):
        sim.sleep(1)


def _owner(obj: dict) -> dict:
    [ref] = obj["metadata"]["ownerReferences"]
    return ref


def _events(sim: SimCluster, kind: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in sim.list("Event", NS) if e["involvedObject"]["kind"] == kind]


def test_a_deployment_makes_a_replicaset_whose_pods_get_claims_and_run(sim):
    sim.apply([TEMPLATE, deployment("web", 3)])
    _settled(sim)
    deploy = sim.get("Deployment", "web", NS)
    [rs] = sim.list("ReplicaSet", NS)
    hashed = rs["metadata"]["labels"]["pod-template-hash"]
    assert re.fullmatch(r"[bcdf4-9]{6,10}", hashed)
    assert rs["metadata"]["name"] == f"web-{hashed}"
    assert _owner(rs) == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                          "uid": deploy["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": hashed}
    pods = sim.list("Pod", NS)
    assert len(pods) == 3
    for pod in pods:
        assert re.fullmatch(rf"web-{hashed}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", pod["metadata"]["name"])
        assert _owner(pod)["uid"] == rs["metadata"]["uid"] and _owner(pod)["kind"] == "ReplicaSet"
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": hashed}
        assert pod["status"]["phase"] == "Running"
        [claim] = pod["status"]["resourceClaimStatuses"]
        owned = sim.get("ResourceClaim", claim["resourceClaimName"], NS)
        assert _owner(owned)["uid"] == pod["metadata"]["uid"] and owned["status"]["allocation"]
    assert rs["status"] == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                            "observedGeneration": 1}
    status = deploy["status"]
    assert {k: status[k] for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                    "availableReplicas")} == {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3,
                                                              "readyReplicas": 3, "availableReplicas": 3}
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}
    assert conditions == {"Available": ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                          "Progressing": ("True", "NewReplicaSetAvailable",
                                          f'ReplicaSet "web-{hashed}" has successfully progressed.')}
    assert _events(sim, "Deployment") == [("ScalingReplicaSet", f"Scaled up replica set web-{hashed} from 0 to 3")]
    assert sorted(_events(sim, "ReplicaSet")) == sorted(("SuccessfulCreate", f"Created pod: {p['metadata']['name']}")
                                                        for p in pods)


def test_the_same_deployment_gets_the_same_names_on_another_cluster(sim):
    sim.apply([TEMPLATE, deployment("web", 2)])
    again = SimCluster(workloads=False, clock=ManualClock())
    again.apply([TEMPLATE, deployment("web", 2)])
    assert [p["metadata"]["name"] for p in sim.list("Pod", NS)] == [p["metadata"]["name"] for p in again.list("Pod", NS)]


def test_a_deployment_whose_pods_do_not_fit_leaves_them_pending_with_the_schedulers_reason(sim):
    too_many = copy.deepcopy(TEMPLATE)
    too_many["metadata"]["name"] = "many-gpus"
    too_many["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 16
    big = deployment("big", 2)
    big["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "many-gpus"
    sim.apply([too_many, big])
    _settled(sim, 3)
    pods = sim.list("Pod", NS)
    assert len(pods) == 2 and all(p["status"]["phase"] == "Pending" and not p["spec"].get("nodeName") for p in pods)
    failed = [e for e in sim.list("Event", NS) if e["reason"] == "FailedScheduling"]
    assert failed and all(e["message"].startswith("0/") and "cannot allocate all claims" in e["message"]
                          for e in failed)
    assert sim.get("Deployment", "big", NS)["status"]["conditions"][0]["reason"] == "MinimumReplicasUnavailable"


def test_scaling_down_deletes_pending_pods_first_and_scaling_up_adds_pods(sim):
    sim.apply([TEMPLATE, deployment("web", 2)])
    _settled(sim)
    running = {p["metadata"]["name"] for p in sim.list("Pod", NS)}
    sim.apply([deployment("web", 4)])
    [rs] = sim.list("ReplicaSet", NS)
    assert rs["spec"]["replicas"] == 4 and len(sim.list("Pod", NS)) == 4
    sim.apply([deployment("web", 2)])  # the two new pods have not started yet: they go first
    assert {p["metadata"]["name"] for p in sim.list("Pod", NS)} == running
    messages = [m for _, m in _events(sim, "Deployment")]
    hashed = rs["metadata"]["labels"]["pod-template-hash"]
    assert messages[-2:] == [f"Scaled up replica set web-{hashed} from 2 to 4",
                             f"Scaled down replica set web-{hashed} from 4 to 2"]
    assert sim.get("Deployment", "web", NS)["metadata"]["generation"] == 3


def test_a_new_template_rolls_out_within_the_surge_and_availability_limits(sim):
    sim.apply([TEMPLATE, deployment("web", 4)])
    _settled(sim)
    sim.apply([deployment("web", 4, image=IMAGE + "-new")])
    totals = []
    for _ in range(20):
        pods = sim.list("Pod", NS)
        ready = [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or ())]
        totals.append((len(pods), len(ready)))
        sim.sleep(1)
    assert max(t for t, _ in totals) <= 5  # maxSurge 25% of 4, rounded up: 1
    assert min(r for _, r in totals) >= 3  # maxUnavailable 25% of 4, rounded down: 1
    old, new = sorted(sim.list("ReplicaSet", NS), key=lambda rs: rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 4)
    assert all(p["metadata"]["labels"]["pod-template-hash"] == new["metadata"]["labels"]["pod-template-hash"]
               for p in sim.list("Pod", NS))
    assert sim.get("Deployment", "web", NS)["status"]["updatedReplicas"] == 4


def test_recreate_removes_every_old_pod_before_the_first_new_one(sim):
    sim.apply([TEMPLATE, deployment("web", 3, strategy={"type": "Recreate"})])
    _settled(sim)
    sim.apply([deployment("web", 3, image=IMAGE + "-new", strategy={"type": "Recreate"})])
    old, new = sorted(sim.list("ReplicaSet", NS), key=lambda rs: rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
    assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == 3
    hashed = new["metadata"]["labels"]["pod-template-hash"]
    assert [m for _, m in _events(sim, "Deployment")][-2:] == [
        f"Scaled down replica set {old['metadata']['name']} from 3 to 0", f"Scaled up replica set web-{hashed} from 0 to 3"]


def test_deleting_a_deployment_deletes_its_replicasets_pods_and_claims(sim):
    sim.apply([TEMPLATE, deployment("web", 3)])
    _settled(sim)
    assert len(sim.list("ResourceClaim", NS)) == 3
    sim.delete("Deployment", "web", NS)
    assert sim.list("ReplicaSet", NS) == [] and sim.list("Pod", NS) == [] and sim.list("ResourceClaim", NS) == []


def test_a_failed_pod_is_replaced(sim):
    dep = deployment("web", 1)
    dep["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    sim.apply([TEMPLATE, dep])
    _settled(sim)
    [pod] = sim.list("Pod", NS)
    failed = copy.deepcopy(pod)
    failed["status"]["phase"] = "Failed"
    sim.lifecycle.update(failed)
    sim.lifecycle.catch_up()
    names = {p["metadata"]["name"]: p["status"]["phase"] for p in sim.list("Pod", NS)}
    assert names.pop(pod["metadata"]["name"]) == "Failed" and len(names) == 1
