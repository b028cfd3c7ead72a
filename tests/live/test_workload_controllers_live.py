"""Deployments and StatefulSets on the real control plane (kube-controller-manager, kube-scheduler, kwok
nodes with the fake driver's slices) and on the simulated cluster of the same scenario: the same manifests
end in the same pods (how many, their names' patterns, their owners), the same claims, phases and nodes
where only one node fits, and the same FailedScheduling reason where none does."""

from __future__ import annotations

import re

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.live.claims import claim_template
from tests.live.corpus_run import dra_gates

pytestmark = pytest.mark.live

H200 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'  # one node of the scenario has them
_HASH = r"[bcdf4-9]{6,10}"
_SUFFIX = r"[bcdfghjklmnpqrstvwxz2456789]{5}"


def _pod_template(app: str, claim_template: str) -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim_template}],
                     "containers": [{"name": "ctr", "image": "ubuntu:24.04", "command": ["sleep", "infinity"],
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def manifests(namespace: str) -> list[dict]:
    """A Deployment and a StatefulSet that fit only the H200 node, and a StatefulSet that fits none."""
    return [
        claim_template("one-h200", namespace, count=1, selector=H200),
        claim_template("sixteen-gpus", namespace, count=16),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": namespace},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": _pod_template("web", "one-h200")}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": namespace},
         "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                  "template": _pod_template("db", "one-h200")}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "huge", "namespace": namespace},
         "spec": {"replicas": 2, "serviceName": "huge", "selector": {"matchLabels": {"app": "huge"}},
                  "template": _pod_template("huge", "sixteen-gpus")}},
    ]


def _scheduled_false(pod: dict) -> str | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return condition.get("message")
    return None


def _settled(pods: list[dict]) -> bool:
    names = {p["metadata"]["name"]: p for p in pods}
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    return (len(running) == 4 and "db-1" in names and "huge-0" in names and _scheduled_false(names["huge-0"]) is not None)


def summary(pods: list[dict], replicasets: list[dict], claims: list[dict]) -> dict:
    """What both clusters must agree on, names reduced to their patterns (hashes and random suffixes differ)."""
    by_uid = {rs["metadata"]["uid"]: rs for rs in replicasets}
    claim_owner = {c["metadata"]["name"]: c["metadata"]["ownerReferences"][0]["uid"] for c in claims}
    found = {}
    for pod in pods:
        meta = pod["metadata"]
        [owner] = meta["ownerReferences"]
        chain = [(owner["kind"], owner["controller"])]
        name = meta["name"]
        if owner["kind"] == "ReplicaSet":
            rs = by_uid[owner["uid"]]
            hashed = rs["metadata"]["labels"]["pod-template-hash"]
            assert re.fullmatch(rf"web-{_HASH}", rs["metadata"]["name"]) and rs["metadata"]["name"] == f"web-{hashed}"
            assert re.fullmatch(rf"web-{hashed}-{_SUFFIX}", name), name
            [deploy] = rs["metadata"]["ownerReferences"]
            chain.append((deploy["kind"], deploy["name"], deploy["controller"]))
            name = "web-<hash>-<suffix>"
        [status] = (pod.get("status") or {}).get("resourceClaimStatuses") or [{}]
        claim = status.get("resourceClaimName")
        assert claim is None or claim.startswith(f"{meta['name']}-gpu-") and claim_owner[claim] == meta["uid"]
        key = name if name != "web-<hash>-<suffix>" else f"{name} #{sum(k.startswith('web-') for k in found)}"
        found[key] = {"owners": chain, "phase": pod["status"]["phase"], "node": pod["spec"].get("nodeName"),
                      "claim": claim is not None, "unschedulable": _scheduled_false(pod)}
    return found


def _real(control_plane, namespace: str) -> dict:
    api = control_plane.api()
    for obj in manifests(namespace):
        api.create(obj)
    pods = wait_for(lambda: (lambda items: items if _settled(items) else None)(
        api.get(path_for("Pod", namespace=namespace))["items"]), timeout=180, what="the workloads' pods")
    replicasets = api.get(f"/apis/apps/v1/namespaces/{namespace}/replicasets")["items"]
    claims = api.get(path_for("ResourceClaim", namespace=namespace))["items"]
    return summary(pods, replicasets, claims)


def _simulated(control_plane, namespace: str) -> dict:
    """The same manifests on a simulated cluster of the control plane's version and DRA gates."""
    sim = SimCluster("default", workloads=False, clock=ManualClock(), feature_gates=dra_gates(control_plane),
                     kubernetes_version=control_plane.api().get("/version")["gitVersion"])
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, *manifests(namespace)])
    for _ in range(20):
        sim.sleep(0.5)
    pods = sim.list("Pod", namespace)
    assert _settled(pods)
    return summary(pods, sim.list("ReplicaSet", namespace), sim.list("ResourceClaim", namespace))


def test_deployments_and_statefulsets_end_alike(control_plane, namespace):
    if control_plane.scenario != "default":
        pytest.fail(f"this test compares with the simulated 'default' scenario; the control plane runs {control_plane.scenario!r}")
    real = _real(control_plane, namespace)
    simulated = _simulated(control_plane, namespace)
    assert sorted(real) == ["db-0", "db-1", "huge-0", "web-<hash>-<suffix> #0", "web-<hash>-<suffix> #1"]
    assert simulated == real
    assert real["db-1"] == {"owners": [("StatefulSet", True)], "phase": "Running", "node": "hgx-h200-03", "claim": True,
                            "unschedulable": None}
    assert real["huge-0"]["unschedulable"].startswith("0/")  # OrderedReady: huge-1 waits for huge-0
