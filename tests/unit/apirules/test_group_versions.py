"""The API server's verdict on resource.k8s.io group versions: refused where the target does not serve the
version (a default server of the minor, or a connected cluster's discovery), judged by that version's own
schema where it does; the simulated API server answers as the real one (404: no such resource)."""

from __future__ import annotations

import copy

import pytest
import yaml

from drawb.apirules import default_selector_compiler, schema_refusals
from drawb.apirules.served import CONVERTIBLE, unserved
from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.convert.facts import SOURCES
from drawb.render import validate_documents
from tests.conftest import DATA

BETA1 = [d for d in yaml.safe_load_all((DATA / "convert" / "v1beta1-claims.yaml").read_text()) if d]
BETA2 = [d for d in yaml.safe_load_all((DATA / "convert" / "v1beta2-claims.yaml").read_text()) if d]


class Cluster:
    """A connected cluster as validate reads it: what it serves of resource.k8s.io, its classes, its namespaces."""

    def __init__(self, served):
        self.served = served

    def group_versions(self, group):
        return list(self.served) if group == "resource.k8s.io" else []

    def list(self, kind, namespace=None):
        return [{"metadata": {"name": n}} for n in ("gpu.nvidia.com", "mig.nvidia.com")]

    def get(self, kind, name, namespace=None):
        return {"metadata": {"name": name}}


def errors(docs, **kwargs) -> list[str]:
    return [str(i) for i in validate_documents(copy.deepcopy(docs), compile_selector=default_selector_compiler,
                                               **kwargs) if i.level == "error"]


def test_the_convert_hint_names_exactly_what_convert_rewrites():
    assert CONVERTIBLE == SOURCES


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_a_default_server_refuses_the_betas_naming_the_api_version_and_the_way_out(version):
    found = errors([BETA2[0]], kubernetes_version=version)
    assert found == [f"{BETA2[0]['kind']}/{BETA2[0]['metadata']['name']} apiVersion: resource.k8s.io/v1beta2 is not "
                     f"served by a Kubernetes {version} API server with default settings: use v1, `{{prog}} convert "
                     "FILE` rewrites it (or start the API server with --runtime-config=resource.k8s.io/v1beta2=true)"]


def test_a_v1beta1_document_on_a_cluster_that_serves_v1beta1_is_judged_by_v1beta1():
    assert errors(BETA1, cluster=Cluster(["v1", "v1beta1"])) == []  # no "nest them under exactly:"
    nested = copy.deepcopy(BETA1[1])
    request = nested["spec"]["devices"]["requests"][1]
    request["exactly"] = {"deviceClassName": request.pop("deviceClassName"), "count": request.pop("count")}
    found = errors([nested], cluster=Cluster(["v1", "v1beta1"]))
    assert any("unknown field(s) 'exactly'" in e for e in found), found
    assert not any("nests them under" in e for e in found)
    both = copy.deepcopy(BETA1[1])
    both["spec"]["devices"]["requests"][2]["deviceClassName"] = "gpu.nvidia.com"
    assert any("exactly one of `deviceClassName` or `firstAvailable` is required, but both are set" in e
               for e in errors([both], cluster=Cluster(["v1", "v1beta1"])))


def test_a_v1beta1_slice_is_checked_inside_its_basic_devices():
    legacy = yaml.safe_load((DATA / "fixtures" / "resourceslices-legacy-v25.3-v1beta1.yaml").read_text())["items"]
    assert errors(legacy, cluster=Cluster(["v1", "v1beta1"])) == []
    crowded = copy.deepcopy(legacy[0])
    crowded["spec"]["devices"][0]["basic"]["attributes"].update({f"extra{i}": {"int": i} for i in range(32)})
    [refused] = errors([crowded], cluster=Cluster(["v1", "v1beta1"]))
    assert "spec.devices[0].basic:" in refused and "attributes and capacities: resource.k8s.io allows at most 32" in refused


def test_a_cluster_that_serves_v1_alone_refuses_v1beta1_and_says_what_it_serves():
    [refused] = errors([BETA1[0]], cluster=Cluster(["v1"]))
    assert refused.endswith("apiVersion: resource.k8s.io/v1beta1 is not served by the connected cluster (it serves "
                            "resource.k8s.io v1): use v1, `{prog} convert FILE` rewrites it")


def test_v1alpha2_is_said_to_be_removed_not_served_from_a_version_on():
    claim = {**copy.deepcopy(BETA1[1]), "apiVersion": "resource.k8s.io/v1alpha2"}
    [msg] = errors([claim], kubernetes_version="1.34")
    assert "resource.k8s.io/v1alpha2 is not served by a Kubernetes 1.34 API server with default settings: Kubernetes " \
           "removed it after 1.30; use v1" in msg and "served from" not in msg
    older = errors([claim], kubernetes_version="1.33")  # older than drawb models: the schemas alone say
    assert any("is not in the API of Kubernetes 1.33; Kubernetes 1.27 to 1.30 served it" in e for e in older), older


def test_stable_versions_are_left_to_the_schema_and_a_removed_beta_names_the_one_to_use():
    assert unserved({"apiVersion": "apps/v1", "kind": "Deployment"}, "x", "1.34") is None
    assert unserved({"apiVersion": "apps/v1beta1", "kind": "Deployment"}, "x", "1.34").message == (
        "apps/v1beta1 is not served by a Kubernetes 1.34 API server with default settings: Kubernetes 1.34 has no "
        "apps/v1beta1; its Deployment is apps/v1: use that")
    assert unserved({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass"}, "x", "1.37") is None
    assert schema_refusals({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
                            "spec": {}}, "1.34") == []


def test_the_simulated_api_server_answers_404_for_an_unserved_group_version():
    sim = SimCluster(build_scenario("default"), workloads=False)
    cls = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceClass", "metadata": {"name": "beta"},
           "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    with pytest.raises(ClusterError) as refused:
        sim.apply([cls], dry_run=True)
    assert refused.value.status == 404 and refused.value.reason == "NotFound"
    assert str(refused.value) == ("the server could not find the requested resource: resource.k8s.io/v1beta2 is not "
                                  "served by a Kubernetes 1.34 API server with default settings: use v1, `{prog} "
                                  "convert FILE` rewrites it (or start the API server with "
                                  "--runtime-config=resource.k8s.io/v1beta2=true)")
    assert sim.apply([{**cls, "apiVersion": "resource.k8s.io/v1"}], dry_run=True)
