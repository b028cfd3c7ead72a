"""Namespaces in the simulated cluster: they must exist, as on a real cluster; kinds drawb does not model
are stored and listed."""

from __future__ import annotations

import pytest

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster

CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team"},
             "data": {"epochs": "3"}}
TEAM = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}


@pytest.fixture(scope="module")
def seeded() -> SimCluster:
    return SimCluster(workloads=True)


def test_the_default_scenario_has_the_usual_namespaces(seeded):
    names = {n["metadata"]["name"] for n in seeded.list("Namespace")}
    assert {"default", "gpu-test", "gpu-demo", "kube-system"} <= names
    default = seeded.get("Namespace", "default")
    assert default["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}
    assert default["status"] == {"phase": "Active"} and default["spec"] == {"finalizers": ["kubernetes"]}


def test_an_object_in_a_missing_namespace_is_refused_as_the_api_server_does():
    sim = SimCluster(workloads=False)
    with pytest.raises(ClusterError) as caught:
        sim.apply([CONFIGMAP], dry_run=True)
    assert (str(caught.value), caught.value.status, caught.value.reason) == ('namespaces "team" not found', 404, "NotFound")
    assert "apply a Namespace named 'team'" in caught.value.hint


def test_a_namespace_applied_first_holds_the_objects_after_it_and_deleting_it_deletes_them():
    sim = SimCluster(workloads=False)
    sim.apply([TEAM, CONFIGMAP])
    assert sim.get("Namespace", "team")["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team"
    assert [c["data"] for c in sim.list("ConfigMap", "team")] == [{"epochs": "3"}]
    with pytest.raises(ClusterError, match='namespaces "team" not found'):
        SimCluster(workloads=False).apply([CONFIGMAP, TEAM])  # the Namespace comes too late
    sim.delete("Namespace", "team")
    assert sim.get("Namespace", "team") is None and sim.list("ConfigMap") == []


def test_unmodelled_kinds_are_stored_listed_and_still_checked_against_their_schema():
    sim = SimCluster(workloads=False)
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"ports": [{"port": 80}]}}
    sim.apply([high, service])
    assert sim.get("PriorityClass", "high")["value"] == 1000
    assert [s["metadata"]["name"] for s in sim.list("Service", "default")] == ["web"]
    with pytest.raises(ClusterError, match="unknown field.*'valeu'"):
        sim.apply([{**high, "metadata": {"name": "low"}, "valeu": 1}])
