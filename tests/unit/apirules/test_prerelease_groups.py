"""Alpha and beta versions of Kubernetes' own groups beyond resource.k8s.io: a default API server of
1.34 to 1.37 serves none of them (404), so validate and the simulated API server refuse them, naming the
apiVersion and what to do; where the connected cluster serves one, or the simulated cluster's gates need
it served, the document is judged by its schema."""

from __future__ import annotations

import copy

import pytest

from drawb.apirules import default_selector_compiler
from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.validate import check_schema
from drawb.render import validate_documents

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
POD_GROUP = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "g", "namespace": "team"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
ATTRIBUTES_CLASS = {"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass",
                    "metadata": {"name": "fast"}, "driverName": "csi.example.com"}


class Cluster:
    """A connected cluster's discovery: the versions it serves of each group."""

    def __init__(self, served: dict[str, list[str]]):
        self.served = served

    def group_versions(self, group):
        return self.served.get(group, [])

    def list(self, kind, namespace=None):
        return []

    def get(self, kind, name, namespace=None):
        return {"metadata": {"name": name}}


def errors(docs, **kwargs) -> list[str]:
    return [str(i) for i in validate_documents(copy.deepcopy(docs), compile_selector=default_selector_compiler, **kwargs)
            if i.level == "error"]


def test_a_default_1_36_server_refuses_the_alpha_pod_group_and_says_how_to_serve_it():
    assert errors([POD_GROUP], kubernetes_version="v1.36.3") == [
        "PodGroup/g apiVersion: scheduling.k8s.io/v1alpha2 is not served by a Kubernetes 1.36 API server with default "
        "settings: it is an alpha API, off by default: start kube-apiserver with "
        "--runtime-config=scheduling.k8s.io/v1alpha2=true and the GenericWorkload feature gate on"]


@pytest.mark.parametrize(("version", "fix"), [
    ("1.37", "Kubernetes 1.37 has no scheduling.k8s.io/v1alpha2; its PodGroup is scheduling.k8s.io/v1alpha3 or "
             "scheduling.k8s.io/v1beta1: use one of those"),
    ("1.35", "Kubernetes 1.35 has no PodGroup; scheduling.k8s.io/v1alpha2 PodGroup is in Kubernetes 1.36: "
             "target such a version"),
])  # fmt: skip
def test_a_minor_without_the_version_names_the_ones_it_has(version, fix):
    assert errors([POD_GROUP], kubernetes_version=version) == [
        f"PodGroup/g apiVersion: scheduling.k8s.io/v1alpha2 is not served by a Kubernetes {version} API server with "
        f"default settings: {fix}"]


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_every_beta_of_another_group_is_off_by_default_too(version):
    found = errors([ATTRIBUTES_CLASS], kubernetes_version=version)
    assert len(found) == 1 and "storage.k8s.io/v1beta1 is not served by a Kubernetes" in found[0], found
    assert errors([{**ATTRIBUTES_CLASS, "apiVersion": "storage.k8s.io/v1"}], kubernetes_version=version) == []


def test_a_connected_cluster_that_serves_the_version_gets_it_judged_by_its_schema():
    assert errors([POD_GROUP], kubernetes_version="1.36",
                  cluster=Cluster({"scheduling.k8s.io": ["v1", "v1alpha2"], "": ["v1"]})) == []
    assert errors([POD_GROUP], kubernetes_version="1.36", cluster=Cluster({"scheduling.k8s.io": ["v1"]})) == [
        "PodGroup/g apiVersion: scheduling.k8s.io/v1alpha2 is not served by the connected cluster (it serves "
        "scheduling.k8s.io v1): it is an alpha API, off by default: start the cluster's kube-apiserver with "
        "--runtime-config=scheduling.k8s.io/v1alpha2=true and the GenericWorkload feature gate on"]


def test_the_simulated_api_server_serves_it_only_where_its_gates_need_it():
    with pytest.raises(ClusterError, match="could not find the requested resource: scheduling.k8s.io/v1alpha2 is not "
                                          "served by a Kubernetes 1.36 API server") as refused:
        check_schema(copy.deepcopy(POD_GROUP), "1.36")
    assert refused.value.status == 404
    check_schema(copy.deepcopy(POD_GROUP), "1.36", ("scheduling.k8s.io/v1alpha2",))
    default = SimCluster("synthetic:2x2", workloads=False, kubernetes_version="1.36")
    assert (default.apis, default.group_versions("scheduling.k8s.io")) == ((), ["v1"])
    assert errors([POD_GROUP], kubernetes_version="1.36", cluster=default)  # validate against it agrees
    workloads = SimCluster("synthetic:2x2", workloads=False, kubernetes_version="1.36",
                           feature_gates={"DRAWorkloadResourceClaims": True})  # needs GenericWorkload, so v1alpha2
    assert (workloads.apis, workloads.group_versions("scheduling.k8s.io")) == (("scheduling.k8s.io/v1alpha2",),
                                                                               ["v1", "v1alpha2"])
    assert errors([POD_GROUP], kubernetes_version="1.36", cluster=workloads) == []
