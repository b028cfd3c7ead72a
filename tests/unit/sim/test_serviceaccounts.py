"""ServiceAccounts in the simulated cluster: the contract cases (run against the real control plane too, in
tests/live/test_contract_kube.py), and what the other workload controllers do with a pod the API server refuses,
in the words the real 1.34 controllers use."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.contract.serviceaccounts import SERVICE_ACCOUNT_CASES

NAMESPACE = "accounts"


@pytest.mark.parametrize("case", SERVICE_ACCOUNT_CASES, ids=lambda c: c.__name__)
def test_sim_cluster_keeps_service_accounts_as_the_api_server_does(case):
    cluster = SimCluster(workloads=False)
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    case(cluster, NAMESPACE)


def test_every_namespace_has_its_default_service_account_and_loses_it_with_the_namespace():
    sim = SimCluster()
    namespaces = {n["metadata"]["name"] for n in sim.list("Namespace")}
    assert {(a["metadata"]["namespace"], a["metadata"]["name"]) for a in sim.list("ServiceAccount")} == {
        (n, "default") for n in namespaces}
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    assert sim.get("ServiceAccount", "default", NAMESPACE) is not None
    sim.delete("Namespace", NAMESPACE)
    assert sim.get("ServiceAccount", "default", NAMESPACE) is None


def _workloads(account: str) -> list[dict]:
    def template(app: str) -> dict:
        return {"metadata": {"labels": {"app": app}},
                "spec": {"serviceAccountName": account, "restartPolicy": "Never" if app == "job" else "Always",
                         "containers": [{"name": "ctr", "image": "busybox", "command": ["sleep", "3600"]}]}}

    def selected(app: str) -> dict:
        return {"selector": {"matchLabels": {"app": app}}, "template": template(app)}

    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NAMESPACE},
         "spec": {"replicas": 1, **selected("web")}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": NAMESPACE},
         "spec": {"template": {"spec": template("job")["spec"]}}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": NAMESPACE},
         "spec": {"replicas": 1, **selected("db")}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": NAMESPACE},
         "spec": selected("agent")},
    ]


def test_each_controller_records_failed_create_until_the_account_exists_then_makes_its_pods():
    sim = SimCluster(workloads=False, clock=ManualClock())
    sim.apply(_workloads("robot"))
    sim.sleep(5)
    refusal = 'is forbidden: error looking up service account accounts/robot: serviceaccount "robot" not found'
    failed = {(e["involvedObject"]["kind"], e["message"].replace(refusal, "...")): e
              for e in sim.list("Event", NAMESPACE) if e["reason"] == "FailedCreate"}
    rs = sim.list("ReplicaSet", NAMESPACE)[0]["metadata"]["name"]
    assert set(failed) == {
        ("ReplicaSet", f'Error creating: pods "{rs}-" ...'),
        ("Job", 'Error creating: pods "job-" ...'),
        ("StatefulSet", 'create Pod db-0 in StatefulSet db failed error: pods "db-0" ...'),
        ("DaemonSet", 'Error creating: pods "agent-" ...'),
    }
    assert all(e["type"] == "Warning" and e["count"] >= 1 for e in failed.values())  # counted, not repeated
    assert len(sim.list("Event", NAMESPACE)) == len(failed) + 1  # and the Deployment's ScalingReplicaSet
    conditions = sim.get("Deployment", "web", NAMESPACE)["status"]["conditions"]
    failure = next(c for c in conditions if c["type"] == "ReplicaFailure")  # the ReplicaSet's, copied
    assert (failure["reason"], failure["message"]) == ("FailedCreate", f'pods "{rs}-" {refusal}')
    assert sim.list("Pod", NAMESPACE) == []

    sim.apply([{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": NAMESPACE}}])
    sim.sleep(5)
    owners = {p["metadata"]["ownerReferences"][0]["kind"] for p in sim.list("Pod", NAMESPACE)}
    assert owners == {"ReplicaSet", "Job", "StatefulSet", "DaemonSet"}
    assert {p["spec"]["serviceAccountName"] for p in sim.list("Pod", NAMESPACE)} == {"robot"}
    assert all(c["type"] != "ReplicaFailure" for c in sim.get("Deployment", "web", NAMESPACE)["status"]["conditions"])
