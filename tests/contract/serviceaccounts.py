"""ServiceAccounts, as functions of a cluster and a fresh namespace: the ``default`` one the serviceaccount
controller makes, the account the admission plugin writes into a pod, its refusal of a pod whose account does
not exist (words and status as kube-apiserver's), and a ReplicaSet whose pods are refused until the account is
created. Run against the simulated cluster (tests/unit/sim) and the real control plane (tests/live)."""

from __future__ import annotations

import pytest

from drawb.cluster.protocol import Cluster, ClusterError
from drawb.testing.waiting import wait_for


def _pod(name: str, namespace: str, account: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "ctr", "image": "busybox"}]}
    if account:
        spec["serviceAccountName"] = account
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _account(name: str, namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}


def _refusal(pod: str, namespace: str, account: str) -> str:
    return (f'pods "{pod}" is forbidden: error looking up service account {namespace}/{account}: '
            f'serviceaccount "{account}" not found')


def a_pod_runs_as_the_namespaces_default_service_account(cluster: Cluster, namespace: str) -> None:
    assert cluster.get("ServiceAccount", "default", namespace) is not None
    cluster.apply([_pod("plain", namespace)])
    spec = cluster.get("Pod", "plain", namespace)["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")


def a_pod_whose_service_account_does_not_exist_is_refused(cluster: Cluster, namespace: str) -> None:
    for dry_run in (True, False):
        with pytest.raises(ClusterError) as refused:
            cluster.apply([_pod("nobodys", namespace, "nobody")], dry_run=dry_run)
        assert _refusal("nobodys", namespace, "nobody") in str(refused.value)
        assert refused.value.status == 403 and refused.value.index == 0
    assert cluster.get("Pod", "nobodys", namespace) is None


def a_pod_after_its_new_service_account_is_created(cluster: Cluster, namespace: str) -> None:
    cluster.apply([_account("runner", namespace), _pod("runs", namespace, "runner")])
    assert cluster.get("Pod", "runs", namespace)["spec"]["serviceAccountName"] == "runner"
    with pytest.raises(ClusterError) as refused:  # the account comes too late: nothing is left
        cluster.apply([_pod("early", namespace, "late"), _account("late", namespace)])
    assert _refusal("early", namespace, "late") in str(refused.value)
    assert cluster.get("Pod", "early", namespace) is None and cluster.get("ServiceAccount", "late", namespace) is None


def _replica_failure(cluster: Cluster, name: str, namespace: str) -> dict | None:
    status = (cluster.get("ReplicaSet", name, namespace) or {}).get("status") or {}
    return next((c for c in status.get("conditions") or () if c["type"] == "ReplicaFailure"), None)


def a_replicaset_makes_no_pod_until_its_service_account_exists(cluster: Cluster, namespace: str) -> None:
    template = {"metadata": {"labels": {"app": "robot"}}, "spec": _pod("", namespace, "robot")["spec"]}
    cluster.apply([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "robot", "namespace": namespace},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "robot"}}, "template": template}}])
    refusal = _refusal("robot-", namespace, "robot")  # the controller creates from generateName
    failed = wait_for(lambda: [e for e in cluster.list("Event", namespace) if e["reason"] == "FailedCreate"],
                      timeout=60, what="a FailedCreate event")
    assert {(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["source"].get("component"),
             e["message"]) for e in failed} == {
        ("ReplicaSet", "robot", "Warning", "replicaset-controller", f"Error creating: {refusal}")}
    condition = wait_for(lambda: _replica_failure(cluster, "robot", namespace), timeout=60, what="ReplicaFailure")
    assert (condition["status"], condition["reason"], condition["message"]) == ("True", "FailedCreate", refusal)
    assert cluster.list("Pod", namespace) == []
    cluster.apply([_account("robot", namespace)])
    pods = wait_for(lambda: cluster.list("Pod", namespace), timeout=120, what="the ReplicaSet's pod")
    assert [p["spec"]["serviceAccountName"] for p in pods] == ["robot"]
    wait_for(lambda: _replica_failure(cluster, "robot", namespace) is None, timeout=60, what="ReplicaFailure gone")



def a_daemonset_records_failed_create_in_the_replicasets_words(cluster: Cluster, namespace: str) -> None:
    template = {"metadata": {"labels": {"app": "agent"}}, "spec": _pod("", namespace, "watcher")["spec"]}
    cluster.apply([{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": namespace},
                    "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template}}])
    failed = wait_for(lambda: [e for e in cluster.list("Event", namespace) if e["reason"] == "FailedCreate"],
                      timeout=60, what="a FailedCreate event")
    assert {(e["involvedObject"]["kind"], e["type"], e["source"].get("component"), e["message"]) for e in failed} == {
        ("DaemonSet", "Warning", "daemonset-controller", f"Error creating: {_refusal('agent-', namespace, 'watcher')}")}
    assert cluster.list("Pod", namespace) == []


SERVICE_ACCOUNT_CASES = [
    a_pod_runs_as_the_namespaces_default_service_account,
    a_pod_whose_service_account_does_not_exist_is_refused,
    a_pod_after_its_new_service_account_is_created,
    a_replicaset_makes_no_pod_until_its_service_account_exists,
    a_daemonset_records_failed_create_in_the_replicasets_words,
]
