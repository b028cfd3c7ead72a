"""The simulated cluster's StatefulSet and DaemonSet controllers: ordered pods, a pod per node."""

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


def _pod_template(app: str, **spec) -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                     "containers": [{"name": "ctr", "image": IMAGE, "command": ["sleep", "infinity"],
                                     "resources": {"claims": [{"name": "gpu"}]}}], **spec}}


def statefulset(name: str, replicas: int, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": _pod_template(name), **spec}}


def daemonset(name: str, **pod_spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": _pod_template(name, **pod_spec)}}


@pytest.fixture
def sim():
    return SimCluster(workloads=False, clock=ManualClock())


def _pods(sim: SimCluster) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in sim.list("Pod", NS)}


def _messages(sim: SimCluster, kind: str) -> list[str]:
    return [e["message"] for e in sim.list("Event", NS) if e["involvedObject"]["kind"] == kind]


def test_orderedready_makes_each_pod_once_the_one_before_runs_and_is_ready(sim):
    sim.apply([TEMPLATE, statefulset("db", 3)])
    assert list(_pods(sim)) == ["db-0"]  # db-0 is not running yet
    seen = []
    for _ in range(30):
        sim.sleep(0.1)
        pods = _pods(sim)
        seen.append(len(pods))
        assert all(pods[f"db-{i}"]["status"]["phase"] == "Running" for i in range(len(pods) - 1))
    assert seen[0] == 1 and seen[-1] == 3 and 2 in seen
    sts = sim.get("StatefulSet", "db", NS)
    pod = _pods(sim)["db-1"]
    revision = sts["status"]["updateRevision"]
    assert re.fullmatch(r"db-[bcdf4-9]{6,10}", revision)
    assert pod["metadata"]["labels"] == {"app": "db", "controller-revision-hash": revision,
                                         "statefulset.kubernetes.io/pod-name": "db-1", "apps.kubernetes.io/pod-index": "1"}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("db-1", "db")
    [ref] = pod["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("StatefulSet", "db", sts["metadata"]["uid"], True)
    assert pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"].startswith("db-1-gpu-")
    assert sts["status"] == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                             "updatedReplicas": 3, "currentRevision": revision, "updateRevision": revision,
                             "collisionCount": 0, "availableReplicas": 3}
    assert _messages(sim, "StatefulSet") == [f"create Pod db-{i} in StatefulSet db successful" for i in range(3)]


def test_parallel_makes_every_pod_at_once(sim):
    sim.apply([TEMPLATE, statefulset("db", 3, podManagementPolicy="Parallel")])
    assert sorted(_pods(sim)) == ["db-0", "db-1", "db-2"]


def test_scaling_down_deletes_the_highest_ordinal_first(sim):
    sim.apply([TEMPLATE, statefulset("db", 3)])
    for _ in range(5):
        sim.sleep(1)
    sim.apply([statefulset("db", 1)])  # a deleted pod is gone at once here: the next goes in the same breath
    assert sorted(_pods(sim)) == ["db-0"]
    assert _messages(sim, "StatefulSet")[-2:] == ["delete Pod db-2 in StatefulSet db successful",
                                                  "delete Pod db-1 in StatefulSet db successful"]


def test_a_pod_that_ended_is_made_again_under_its_name(sim):
    sim.apply([TEMPLATE, statefulset("db", 1)])
    sim.sleep(1)
    pod = copy.deepcopy(_pods(sim)["db-0"])
    pod["status"]["phase"] = "Failed"
    sim.lifecycle.update(pod)
    sim.lifecycle.catch_up()
    again = _pods(sim)["db-0"]
    assert again["metadata"]["uid"] != pod["metadata"]["uid"] and again["status"]["phase"] == "Pending"


def test_a_new_template_replaces_the_pods_from_the_highest_ordinal(sim):
    sim.apply([TEMPLATE, statefulset("db", 2)])
    for _ in range(4):
        sim.sleep(1)
    changed = statefulset("db", 2)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = IMAGE + "-new"
    sim.apply([changed])
    assert sorted(_pods(sim)) == ["db-0", "db-1"] and _pods(sim)["db-1"]["status"]["phase"] == "Pending"
    for _ in range(4):
        sim.sleep(1)
    status = sim.get("StatefulSet", "db", NS)["status"]
    assert status["currentRevision"] == status["updateRevision"] and status["updatedReplicas"] == 2
    assert {p["spec"]["containers"][0]["image"] for p in _pods(sim).values()} == {IMAGE + "-new"}


def test_a_daemonset_runs_one_pod_on_each_node_pinned_by_node_affinity(sim):
    nodes = [n["metadata"]["name"] for n in sim.list("Node")]
    sim.apply([TEMPLATE, daemonset("agent")])
    sim.sleep(2)
    pods = list(_pods(sim).values())
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(nodes)
    for pod in pods:
        assert re.fullmatch(r"agent-[bcdfghjklmnpqrstvwxz2456789]{5}", pod["metadata"]["name"])
        assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [pod["spec"]["nodeName"]]}]}]}
        assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"]["tolerations"]
        assert pod["status"]["phase"] == "Running"
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    status = sim.get("DaemonSet", "agent", NS)["status"]
    assert status == {"currentNumberScheduled": 4, "numberMisscheduled": 0, "desiredNumberScheduled": 4,
                      "numberReady": 4, "observedGeneration": 1, "updatedNumberScheduled": 4, "numberAvailable": 4}
    assert sorted(_messages(sim, "DaemonSet")) == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)


def test_a_daemonset_skips_nodes_its_selector_or_their_taints_turn_away(sim):
    node = copy.deepcopy(sim.get("Node", "dgx-h100-02"))
    node["spec"]["taints"] = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    sim.lifecycle.update(node)
    h100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    sim.apply([TEMPLATE, daemonset("tainted", nodeSelector=h100), daemonset("everywhere")])
    placed = {p["metadata"]["labels"]["app"]: [] for p in _pods(sim).values()}
    for pod in _pods(sim).values():
        placed[pod["metadata"]["labels"]["app"]].append(pod["spec"]["nodeName"])
    assert "tainted" not in placed and len(placed["everywhere"]) == 3 and "dgx-h100-02" not in placed["everywhere"]
    assert sim.get("DaemonSet", "tainted", NS)["status"]["desiredNumberScheduled"] == 0


def test_deleting_a_statefulset_or_daemonset_deletes_their_pods_and_claims(sim):
    sim.apply([TEMPLATE, statefulset("db", 2, podManagementPolicy="Parallel"), daemonset("agent")])
    sim.sleep(2)
    sim.delete("StatefulSet", "db", NS)
    assert all(p["metadata"]["labels"]["app"] == "agent" for p in _pods(sim).values())
    sim.delete("DaemonSet", "agent", NS)
    assert _pods(sim) == {} and sim.list("ResourceClaim", NS) == []


def test_a_node_that_joins_gets_a_daemon_pod_which_waits_there_for_a_gpu_it_lacks(sim):
    sim.apply([TEMPLATE, daemonset("agent")])
    sim.sleep(2)
    joined = copy.deepcopy(sim.get("Node", "a100-sxm-node-01"))
    joined["metadata"] = {"name": "cpu-node-05", "labels": {"kubernetes.io/hostname": "cpu-node-05"}}
    sim.lifecycle.create(joined)  # a node without GPUs: no ResourceSlice
    sim.lifecycle.catch_up()
    [pod] = [p for p in _pods(sim).values()
             if p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["cpu-node-05"]]
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    [failed] = [e for e in sim.list("Event", NS) if e["reason"] == "FailedScheduling"
                and e["involvedObject"]["name"] == pod["metadata"]["name"]]
    assert failed["message"].startswith("0/5 nodes are available: 1 cannot allocate all claims, 4 node(s) didn't "
                                        "match Pod's node affinity/selector.")
    assert sim.get("DaemonSet", "agent", NS)["status"]["desiredNumberScheduled"] == 5
