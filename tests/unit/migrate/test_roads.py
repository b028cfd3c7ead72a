"""Which road fits: the gate, the classes that map a legacy name, conflicts, device-plugin overlap, and
whether the devices are free now (on the simulated cluster, gate off and on)."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.migrate import migrate, read_paths
from drawb.migrate.sources import Source
from drawb.migrate.roads import conflict_warnings, overlap_warnings
from tests.conftest import DATA

CORPUS = DATA / "migrate"


@pytest.fixture(scope="module")
def gate_on() -> SimCluster:
    scenario = build_scenario("default")
    scenario.feature_gates = {"DRAExtendedResource": True}
    return SimCluster(scenario, workloads=False)


def _roads(cluster, *names):
    result = migrate(read_paths([str(CORPUS / n) for n in names]), cluster, "default")
    return result, [result.roads[(f.source.name, i)] for f, i, _ in result.workloads()]


def test_gate_off_recommends_claims():
    result, [road] = _roads(SimCluster(workloads=False), "04-job-training.yaml")
    assert result.facts.gate == "off"
    assert road.extended.startswith("no: DRAExtendedResource is off")
    assert road.claims == "fits now on 2 of the 4 nodes it may run on (a100-sxm-node-01, hgx-h200-03)"
    assert road.recommended == "claims: apply the rewritten manifests"
    assert result.mapping_classes() == []


def test_gate_on_the_chart_class_serves_nvidia_com_gpu(gate_on):
    result, [road] = _roads(gate_on, "01-deployment-single-gpu.yaml")
    assert result.facts.gate == "on"
    assert road.extended.startswith("nvidia.com/gpu -> gpu.nvidia.com: fits now on 4 of the 4 nodes")
    assert road.recommended == "extended resource: runs unchanged through gpu.nvidia.com"


def test_gate_on_mig_needs_a_mapping_class(gate_on):
    result, [road] = _roads(gate_on, "10-mig-1g10gb-deployment.yaml")
    [cls] = result.mapping_classes()
    assert cls["metadata"]["name"] == "mig-1g-10gb.extended.gpu.nvidia.com"
    assert cls["spec"]["extendedResourceName"] == "nvidia.com/mig-1g.10gb"
    assert "profile == '1g.10gb'" in cls["spec"]["selectors"][0]["cel"]["expression"]
    assert road.extended.startswith("nvidia.com/mig-1g.10gb -> (new) mig-1g-10gb.extended.gpu.nvidia.com: fits now on 1")
    assert road.recommended == "claims: apply the rewritten manifests"
    assert "extendedResourceName: nvidia.com/mig-1g.10gb" in str(result)


def test_node_selector_narrows_where_it_fits():
    _, [road] = _roads(SimCluster(workloads=False), "19-deployment-node-selector.yaml")
    assert road.claims == "fits now on 1 of the 1 nodes it may run on (hgx-h200-03)"


def test_devices_held_by_other_claims_count():
    cluster = SimCluster(workloads=False)
    _, [road] = _roads(cluster, "12-mig-7g-job.yaml")
    assert road.claims.startswith("fits now on 1 of the 4")
    result = migrate(read_paths([str(CORPUS / "12-mig-7g-job.yaml")]), cluster, "gpu-demo")
    [f] = result.files
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "holder", "namespace": "gpu-demo"},
           "spec": next(o for o in result.to_apply("gpu-demo") if o["kind"] == "Job")["spec"]["template"]["spec"]}
    cluster.apply([*result.to_apply("gpu-demo")[:1], pod])
    cluster.sleep(5)
    _, [road] = _roads(cluster, "12-mig-7g-job.yaml")
    held = "the devices are in use: on dgx-h100-02 by claim(s) gpu-demo/holder-"
    assert road.claims.startswith("no: " + held) and road.claims.endswith(
        " (pod holder); they would fit on dgx-h100-02 once freed (0 of the 4 nodes it may run on has them free now)")
    assert road.recommended.startswith("claims: apply the rewritten manifests once this no longer holds: the devices "
                                       "are held by claim(s) gpu-demo/holder-")


def test_two_classes_with_one_extended_resource_name_warn():
    classes = [{"metadata": {"name": n}, "spec": {"extendedResourceName": "nvidia.com/gpu"}}
               for n in ("gpu.nvidia.com", "legacy.example.com")]
    [warning] = conflict_warnings(classes)
    assert warning.startswith("DeviceClasses gpu.nvidia.com, legacy.example.com all set extendedResourceName: "
                              "nvidia.com/gpu; only one of them can serve it")


def test_conflict_found_in_the_cluster(gate_on):
    extra = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "second.example.com"},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
                      "extendedResourceName": "nvidia.com/gpu"}}
    gate_on.apply([extra])
    try:
        result, [road] = _roads(gate_on, "01-deployment-single-gpu.yaml")
        assert any("gpu.nvidia.com, second.example.com all set" in w for w in result.warnings)
        assert "several classes claim one name" in road.extended
    finally:
        gate_on.delete("DeviceClass", "second.example.com")


def test_device_plugin_and_dra_on_one_node_warn():
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}
    other = {"metadata": {"name": "n2"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "devices": [{"name": "gpu-0"}]}}]
    [warning] = overlap_warnings([node, other], slices)
    assert warning.startswith("node n1 offers 8 nvidia.com/gpu through the device plugin and GPUs through gpu.nvidia.com")


def _pod(name: str, gpus: int = 1, **spec) -> Source:
    import yaml

    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {**spec, "containers": [{"name": "main", "image": "cuda",
                                             "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}
    return Source(f"{name}.yaml", yaml.safe_dump(doc, sort_keys=False))


def _road(cluster, source: Source):
    result = migrate([source], cluster, "default")
    [road] = result.roads.values()
    return road


def test_a_node_selector_no_node_matches_is_named():
    road = _road(SimCluster(workloads=False), _pod("typo", nodeSelector={"nvidia.com/gpu.product": "NVIDIA-H200-SXM"}))
    assert road.claims == ("no: no node with DRA devices admits the pod: its nodeSelector "
                           "nvidia.com/gpu.product=NVIDIA-H200-SXM matches no node (4 node(s) didn't match Pod's node "
                           "affinity/selector (a100-sxm-node-01, dgx-h100-02, gke-dra-l4-pool-5c7e8f21-q9zt, +1 more))")
    assert road.recommended == ("claims: apply the rewritten manifests once this no longer holds: its nodeSelector "
                                "nvidia.com/gpu.product=NVIDIA-H200-SXM matches no node")


def test_a_node_selector_that_keeps_the_pod_off_the_nodes_with_the_devices_is_named():
    road = _road(SimCluster(workloads=False),
                 _pod("eight", 8, nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-l4"}))
    assert road.claims == ("no: they would fit on a100-sxm-node-01, hgx-h200-03, which the pod may not use "
                           "(its nodeSelector cloud.google.com/gke-accelerator=nvidia-l4 (the node has no such label)); "
                           "none of the 1 nodes it may run on (gke-dra-l4-pool-5c7e8f21-q9zt) has enough matching devices")
    assert road.recommended.endswith("once this no longer holds: its nodeSelector cloud.google.com/gke-accelerator="
                                     "nvidia-l4 (the node has no such label) keeps it off a100-sxm-node-01, hgx-h200-03, "
                                     "the nodes with the devices")


def test_a_taint_no_node_tolerates_is_named():
    scenario = build_scenario("default")
    for node in scenario.nodes:
        node["spec"] = {"taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}
    road = _road(SimCluster(scenario, workloads=False), _pod("plain"))
    assert road.claims.startswith("no: no node with DRA devices admits the pod (4 node(s) had untolerated taint "
                                  "{dedicated: ml} (a100-sxm-node-01, ")
    assert road.recommended.endswith("no node with DRA devices admits the pod: node(s) had untolerated taint "
                                     "{dedicated: ml}")


def test_more_devices_than_any_node_has_is_said_so():
    road = _road(SimCluster(workloads=False), _pod("greedy", 9))
    assert road.claims == ("no: none of the 4 nodes it may run on has enough matching devices, even with every device "
                           "free")
    assert road.recommended.endswith("once this no longer holds: no node it may run on has that many matching devices")
