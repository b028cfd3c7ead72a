"""Legacy extended-resource pods (``nvidia.com/gpu`` in container limits) on the simulated cluster: the
NodeResourcesFit filter as kube-scheduler runs it, node allocatable from scenarios, and the request sums."""

from __future__ import annotations

import copy

import pytest

from drawb.api.resourcefit import extended_requests, in_use, resource_fit
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.cluster.sim.scenarios.loader import _from_file
from drawb.cluster.sim.scenarios.scenario import ScenarioError

A100 = "a100-sxm-node-01"
PREEMPTION = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."


def legacy(name: str, gpus: int = 1, node_selector: dict | None = None, **limits) -> dict:
    spec = {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "ubuntu", "command": ["sleep", "infinity"],
                            "resources": {"limits": {"nvidia.com/gpu": gpus, **limits}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def cluster(plugin_gpus: dict[str, int] | None = None, gates: dict | None = None) -> SimCluster:
    scenario = copy.deepcopy(build_scenario("default"))
    scenario.feature_gates = dict(gates or {})
    for node in scenario.nodes:
        count = (plugin_gpus or {}).get(node["metadata"]["name"])
        if count is not None:
            for key in ("capacity", "allocatable"):
                node["status"][key]["nvidia.com/gpu"] = str(count)
    return SimCluster(scenario, clock=ManualClock())


def scheduled(sim: SimCluster, name: str) -> tuple[str, str | None, str]:
    sim.sleep(1)  # past the image pull
    pod = sim.get("Pod", name, "default")
    cond = next((c for c in pod["status"].get("conditions") or () if c["type"] == "PodScheduled"), {})
    return pod["status"].get("phase"), pod["spec"].get("nodeName"), cond.get("message", "")


def test_no_node_offers_it_the_pod_stays_pending_with_the_schedulers_words():
    sim = cluster()
    sim.apply([legacy("legacy-gpu")])
    phase, node, message = scheduled(sim, "legacy-gpu")
    assert (phase, node) == ("Pending", None)
    assert message == f"0/4 nodes are available: 4 Insufficient nvidia.com/gpu. no new claims to deallocate, {PREEMPTION}"
    events = [e["message"] for e in sim.list("Event", "default") if e.get("reason") == "FailedScheduling"]
    assert events == [message]


def test_the_only_node_with_the_device_plugin_takes_it_until_its_gpus_are_taken():
    sim = cluster({"hgx-h200-03": 2})
    sim.apply([legacy("a", gpus=2)])
    assert scheduled(sim, "a")[:2] == ("Running", "hgx-h200-03")
    sim.apply([legacy("b")])
    phase, node, message = scheduled(sim, "b")
    assert (phase, node) == ("Pending", None)
    assert message == ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: "
                       "0/4 nodes are available: 1 No preemption victims found for incoming pod, "
                       "3 Preemption is not helpful for scheduling.")
    sim.delete("Pod", "a", "default")
    sim.sleep(60)  # the deleted pod's grace period ends and its GPUs are free again
    assert scheduled(sim, "b")[:2] == ("Running", "hgx-h200-03")


def test_every_short_resource_is_counted():
    sim = cluster({A100: 1})
    sim.apply([legacy("two", **{"example.com/fpga": 1})])
    # one reason per short resource, the counted reasons sorted as strings (as FitError sorts them)
    assert scheduled(sim, "two")[2].startswith("0/4 nodes are available: 3 Insufficient nvidia.com/gpu, "
                                               "4 Insufficient example.com/fpga.")


def test_filters_before_resource_fit_name_the_node_first():
    sim = cluster({A100: 8})
    sim.apply([legacy("pinned", node_selector={"kubernetes.io/hostname": "hgx-h200-03"})])
    assert scheduled(sim, "pinned")[2].startswith("0/4 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                                  "3 node(s) didn't match Pod's node affinity/selector.")


def test_a_pod_asking_for_more_than_a_node_has_waits():
    sim = cluster({A100: 8})
    sim.apply([legacy("nine", gpus=9)])
    assert scheduled(sim, "nine")[:2] == ("Pending", None)
    sim.apply([legacy("eight", gpus=8)])
    assert scheduled(sim, "eight")[:2] == ("Running", A100)


def test_a_pod_that_ended_frees_what_it_took():
    sim = cluster({A100: 1})
    done = legacy("done")
    done["spec"]["containers"][0]["command"] = ["true"]
    sim.apply([done])
    sim.sleep(30)
    assert sim.get("Pod", "done", "default")["status"]["phase"] == "Succeeded"
    sim.apply([legacy("next")])
    assert scheduled(sim, "next")[:2] == ("Running", A100)


def test_scenario_nodes_declare_device_plugin_resources():
    text = """
nodes:
  - name: plugin-node
    model: L4
    driver_version: 570.172.08
    cuda_driver_version: "12.8"
    extended_resources: {nvidia.com/gpu: 4}
    gpus: [{minor: 0, pci: "0000:00:03.0"}]
"""
    scenario = _from_file("plugin", text, where="test")
    node = scenario.nodes[0]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == node["status"]["capacity"]["nvidia.com/gpu"] == "4"
    sim = SimCluster(scenario, clock=ManualClock())
    sim.apply([legacy("p", gpus=4)])
    assert scheduled(sim, "p")[:2] == ("Running", "plugin-node")
    for bad, words in (("{cpu: 4}", "'cpu' is not an extended resource name"),
                       ("{nvidia.com/gpu: -1}", "-1 is not a whole number of at least 0"),
                       ("[nvidia.com/gpu]", "extended_resources must be a mapping")):
        with pytest.raises(ScenarioError, match="node #0: extended_resources") as err:
            _from_file("plugin", text.replace("{nvidia.com/gpu: 4}", bad), where="test")
        assert words in str(err.value)


def test_requests_sum_containers_and_take_the_largest_init_container():
    spec = {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "2"}}},
                           {"resources": {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}}],
            "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "4", "example.com/fpga": "1"}}},
                               {"restartPolicy": "Always", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    # 3 in the containers plus 1 in the sidecar; the first init container alone asks for 4
    assert extended_requests({"spec": spec}) == {"example.com/fpga": 1, "nvidia.com/gpu": 4}
    spec["initContainers"].reverse()  # the sidecar runs beside the other init container: 1 + 4
    assert extended_requests({"spec": spec}) == {"example.com/fpga": 1, "nvidia.com/gpu": 5}
    assert extended_requests({"spec": {"containers": [{"resources": {"limits": {"memory": "1Gi",
                                                                               "hugepages-2Mi": "1Gi"}}}]}}) == {}


def test_only_bound_pods_that_have_not_ended_count():
    pods = [{"metadata": {"uid": str(i)}, "spec": {"nodeName": node, **legacy("x", gpus=i)["spec"]},
             "status": {"phase": phase}}
            for i, (node, phase) in enumerate([(A100, "Running"), (A100, "Pending"), (A100, "Succeeded"), (None, "Pending")], 1)]
    assert in_use(pods) == {A100: {"nvidia.com/gpu": 3}}
    assert resource_fit({"spec": {"containers": []}}, pods) is None


def test_with_the_gate_on_a_mapped_resource_is_left_to_dra_but_an_unmapped_one_is_not():
    mapped = {"metadata": {"name": "gpu.nvidia.com"}, "spec": {"extendedResourceName": "nvidia.com/gpu"}}
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {}}}
    pod = legacy("p")
    assert resource_fit(pod, [], [mapped], extended_resource_gate=True).exclusion(node) is None
    assert resource_fit(pod, [], [mapped], extended_resource_gate=False).exclusion(node).scheduler == \
        "Insufficient nvidia.com/gpu"
    assert resource_fit(pod, [], [], extended_resource_gate=True).exclusion(node).scheduler == \
        "Insufficient nvidia.com/gpu"


@pytest.mark.parametrize("offers, gpus, node", [({}, 1, None), ({"hgx-h200-03": 2, A100: 2}, 2, "hgx-h200-03"),
                                                ({A100: 4}, 3, A100), ({A100: 4}, 4, None)])
def test_preview_and_why_agree_with_the_simulated_scheduler(offers, gpus, node, tmp_path):
    import yaml

    from drawb.commands.registry import run_line
    from drawb.session import Session

    sim = cluster(offers)
    session = Session()
    session._cluster = sim
    sim.apply([legacy("other", gpus=1, node_selector={"kubernetes.io/hostname": A100})])  # takes one where offered
    pod = legacy("p", gpus=gpus)
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(pod))
    previewed = run_line(session, f"preview -f {manifest}")  # before the pod exists
    sim.apply([pod])
    phase, bound, message = scheduled(sim, "p")
    assert bound == node
    explained = run_line(session, "why pod/p")
    if node is None:
        assert previewed.data["fits"] == [] and previewed.exit_status == 1
        assert previewed.data["rejected"] == {"Insufficient nvidia.com/gpu": 4}
        assert "0/4 nodes are available: 4 Insufficient nvidia.com/gpu." in explained.scheduler
        assert message.startswith("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
        assert explained.state == "pending" and explained.fits_on == []
    else:
        assert previewed.data["pick"] == node
        assert explained.state == "allocated" and f"node {node}" in explained.summary


# --- DRAExtendedResource: a DeviceClass serves the legacy pod through a claim the scheduler makes ----------------


def gated(version: str = "1.34", plugin_gpus: dict[str, int] | None = None) -> SimCluster:
    gates = {"DRAExtendedResource": True} if version in ("1.34", "1.35") else {}
    scenario = copy.deepcopy(build_scenario("default"))
    for node in scenario.nodes:
        count = (plugin_gpus or {}).get(node["metadata"]["name"])
        if count is not None:
            for key in ("capacity", "allocatable"):
                node["status"][key]["nvidia.com/gpu"] = str(count)
    return SimCluster(scenario, kubernetes_version=version, feature_gates=gates, clock=ManualClock())


def smi_pod(name: str, gpus: int, node_selector: dict | None = None) -> dict:
    pod = legacy(name, gpus, node_selector)
    pod["spec"]["containers"][0].update(command=["nvidia-smi", "-L"], resources={"limits": {"cpu": "1", "nvidia.com/gpu": gpus}})
    return pod


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_the_scheduler_makes_a_claim_allocates_it_and_names_it_in_the_pod(version):
    sim = gated(version)
    sim.apply([smi_pod("smi", 2)])
    sim.sleep(0.1)  # bound, not ended yet
    pod = sim.get("Pod", "smi", "default")
    assert pod["spec"]["nodeName"] == A100
    status = pod["status"]["extendedResourceClaimStatus"]
    assert status["requestMappings"] == [{"containerName": "c", "resourceName": "nvidia.com/gpu",
                                          "requestName": "container-0-request-1"}]  # cpu sorts first
    claim = sim.get("ResourceClaim", status["resourceClaimName"], "default")
    meta = claim["metadata"]
    assert meta["name"].startswith("smi-extended-resources-") and len(meta["name"]) == len("smi-extended-resources-") + 5
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "smi", "uid": pod["metadata"]["uid"], "controller": True}
    if version == "1.34":
        owner["blockOwnerDeletion"] = True
    assert meta["ownerReferences"] == [owner]
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [r["device"] for r in results] == ["gpu-0", "gpu-1"]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["smi"]
    sim.sleep(5)
    pod = sim.get("Pod", "smi", "default")
    log = sim.lifecycle.container_log(("default", "smi"), "c")
    assert [line.split(" (UUID")[0] for line in log] == ["GPU 0: NVIDIA A100-SXM4-40GB", "GPU 1: NVIDIA A100-SXM4-40GB"]
    # the pod ended: from 1.35 on the resourceclaim controller deletes the claim; at 1.34 it stays until the pod goes
    assert pod["status"]["phase"] == "Succeeded"
    left = [c["metadata"]["name"] for c in sim.list("ResourceClaim", "default")]
    assert (status["resourceClaimName"] in left) == (version == "1.34")
    sim.delete("Pod", "smi", "default")
    sim.sleep(60)
    assert status["resourceClaimName"] not in [c["metadata"]["name"] for c in sim.list("ResourceClaim", "default")]


def test_devices_short_everywhere_read_as_the_scheduler_words_it():
    sim = gated()
    sim.apply([legacy("nine", gpus=9)])
    phase, node, message = scheduled(sim, "nine")
    assert (phase, node) == ("Pending", None)
    assert message == ("0/4 nodes are available: 4 cannot allocate all claims. still not schedulable, "
                       f"{PREEMPTION}")
    assert not sim.list("ResourceClaim", "default") or all(
        "extended" not in c["metadata"]["name"] for c in sim.list("ResourceClaim", "default"))


def test_gate_on_but_no_class_maps_the_resource():
    sim = gated()
    sim.apply([legacy("fpga", gpus=0, **{"example.com/fpga": 1})])
    assert scheduled(sim, "fpga")[2] == (f"0/4 nodes are available: 4 Insufficient example.com/fpga. "
                                         f"no new claims to deallocate, {PREEMPTION}")


def test_a_device_plugin_node_serves_it_without_a_claim():
    sim = gated("1.34", {A100: 8})
    sim.apply([smi_pod("plugin", 3, {"kubernetes.io/hostname": A100})])
    sim.sleep(5)
    pod = sim.get("Pod", "plugin", "default")
    assert pod["spec"]["nodeName"] == A100 and "extendedResourceClaimStatus" not in pod["status"]
    log = sim.lifecycle.container_log(("default", "plugin"), "c")
    assert [line.split(":")[0] for line in log] == ["GPU 0", "GPU 1", "GPU 2"]


def test_a_device_plugin_hands_each_pod_its_own_gpus():
    sim = cluster({A100: 8})
    first, second = legacy("first", gpus=2), legacy("second", gpus=3)
    sim.apply([first, second])
    sim.sleep(2)
    devices = [[d["name"] for d in sim.lifecycle.container_devices(sim.get("Pod", n, "default"),
                                                                    sim.get("Pod", n, "default")["spec"]["containers"][0])]
               for n in ("first", "second")]
    assert devices == [["gpu-0", "gpu-1"], ["gpu-2", "gpu-3", "gpu-4"]]


def test_requests_per_container_and_init_containers_by_version():
    from drawb.alloc.extended import extended_claim

    classes = [{"metadata": {"name": "gpu.nvidia.com"}, "spec": {"extendedResourceName": "nvidia.com/gpu"}}]
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": {"initContainers": [{"name": "init", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                    "containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "2"}}},
                                   {"name": "b", "resources": {"requests": {"memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {}}}
    old = extended_claim(pod, classes, "1.34", {"DRAExtendedResource": True}).for_node(node)
    assert [(r["name"], r["exactly"]["count"]) for r in old.claim["spec"]["devices"]["requests"]] == [
        ("container-0-request-0", 1), ("container-1-request-0", 2), ("container-2-request-1", 1)]
    new = extended_claim(pod, classes, "1.37", {}).for_node(node)
    # from 1.35 on the init container takes the devices of the container after it
    assert [(r["name"], r["exactly"]["count"]) for r in new.claim["spec"]["devices"]["requests"]] == [
        ("container-1-request-0", 2), ("container-2-request-1", 1)]
    assert [(m["containerName"], m["requestName"]) for m in new.mappings] == [
        ("a", "container-1-request-0"), ("b", "container-2-request-1"), ("init", "container-1-request-0")]
    # a node whose device plugin offers it gets no claim; from 1.35 on an allocatable of 0 offers nothing
    zero = {"metadata": {"name": "z"}, "status": {"allocatable": {"nvidia.com/gpu": "0"}}}
    assert old.claim and extended_claim(pod, classes, "1.34", {"DRAExtendedResource": True}).for_node(zero) is None
    assert extended_claim(pod, classes, "1.37", {}).for_node(zero) is not None
    assert extended_claim(pod, classes, "1.34", {}) is None  # the gate is off by default at 1.34


def test_class_mapping_by_version():
    from drawb.api.resourcefit import class_mapping

    classes = [{"metadata": {"name": "old", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"extendedResourceName": "nvidia.com/gpu"}},
               {"metadata": {"name": "new", "creationTimestamp": "2026-02-01T00:00:00Z"},
                "spec": {"extendedResourceName": "nvidia.com/gpu"}},
               {"metadata": {"name": "plain", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}}]
    assert class_mapping(classes, 34) == {"nvidia.com/gpu": "new", "deviceclass.resource.kubernetes.io/plain": "plain"}
    assert class_mapping(classes, 37) == {"nvidia.com/gpu": "new", "deviceclass.resource.kubernetes.io/plain": "plain",
                                          "deviceclass.resource.kubernetes.io/old": "old",
                                          "deviceclass.resource.kubernetes.io/new": "new"}


@pytest.mark.parametrize("gpus, node", [(8, A100), (9, None)])
def test_preview_and_why_agree_with_the_scheduler_on_the_dra_road(gpus, node, tmp_path):
    import yaml

    from drawb.commands.registry import run_line
    from drawb.session import Session

    sim = gated()
    session = Session()
    session._cluster = sim
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(legacy("p", gpus=gpus)))
    previewed = run_line(session, f"preview -f {manifest}")
    sim.apply([legacy("p", gpus=gpus)])
    phase, bound, message = scheduled(sim, "p")
    assert bound == node and previewed.data["pick"] == node
    explained = run_line(session, "why pod/p")
    if node is None:
        assert previewed.data["rejected"] == {"cannot allocate all claims": 4}
        assert explained.state == "pending" and explained.fits_on == []
    else:
        assert explained.state == "allocated" and "through DRA" in explained.summary


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_a_class_by_its_implicit_name(version):
    sim = gated(version)
    pod = legacy("implicit", gpus=0, node_selector={"node.kubernetes.io/instance-type": "p4d.24xlarge"})
    pod["spec"]["containers"][0]["resources"]["limits"] = {"deviceclass.resource.kubernetes.io/gpu.nvidia.com": "1"}
    sim.apply([pod])
    phase, node, _ = scheduled(sim, "implicit")
    status = sim.get("Pod", "implicit", "default")["status"].get("extendedResourceClaimStatus")
    assert node == A100
    if version == "1.34":  # bound with no claim: NodeResourcesFit leaves it to DRA, which does not take it at 1.34
        assert status is None
    else:
        claim = sim.get("ResourceClaim", status["resourceClaimName"], "default")
        assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
