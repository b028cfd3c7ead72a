"""The DRAExtendedResource road on the real control plane and on the simulated cluster of the same version and
gates: a legacy pod (``nvidia.com/gpu`` in its limits) on nodes that only publish ResourceSlices is served by
DeviceClass ``gpu.nvidia.com`` (``extendedResourceName: nvidia.com/gpu``). Both make the same claim for it (its
generateName, annotation, owner, requests, the number of devices allocated), write the same
``status.extendedResourceClaimStatus`` and bind it to the same node; where devices are short, or no class maps
the resource, both say the same FailedScheduling text.

At 1.34 and 1.35 the gate is alpha: the module starts a control plane with it on. Run at 1.37 (GA) with
``DRAWB_K8S_VERSION=v1.37.2``.
"""

from __future__ import annotations

import pytest

from drawb import versions
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.testing.api import path_for
from drawb.testing.build import target_k8s_version
from drawb.testing.waiting import wait_for
from tests.live.planes import plane_with_gate

pytestmark = pytest.mark.live

GATE = "DRAExtendedResource"
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
A100 = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}  # the only A100 node: 8 full GPUs


@pytest.fixture(scope="module")
def control_plane(control_plane, start_control_plane):
    """The session's control plane if the gate is on there, else one started with it (conftest's ``namespace``
    makes the tests' namespaces there)."""
    with plane_with_gate(control_plane, start_control_plane, GATE, True) as cp:
        yield cp


def legacy_pod(name: str, namespace: str, limits: dict[str, str], selector: dict | None = None) -> dict:
    spec = {"restartPolicy": "Never",
            "containers": [{"name": "main", "image": "ubuntu:24.04", "command": ["sleep", "infinity"],
                            "resources": {"limits": {"cpu": "1", **limits}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def simulated(control_plane, namespace: str, pod: dict) -> SimCluster:
    sim = SimCluster("default", kubernetes_version=target_k8s_version(), feature_gates={GATE: True},
                     clock=ManualClock())
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, pod])
    sim.sleep(1)
    return sim


def _failed(api, namespace: str, name: str) -> str | None:
    pod = api.get(path_for("Pod", name, namespace))
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond["type"] == "PodScheduled" and cond["status"] == "False" and cond.get("message"):
            return cond["message"]
    return None


def _sim_message(sim: SimCluster, namespace: str, name: str) -> str:
    pod = sim.get("Pod", name, namespace)
    return next(c["message"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")


def _shape(claim: dict) -> dict:
    """What the two clusters must agree on (names, uids and device choices aside)."""
    meta = claim["metadata"]
    allocation = claim["status"]["allocation"]
    return {"generateName": meta["generateName"], "annotations": meta.get("annotations"),
            "owners": [{k: v for k, v in ref.items() if k != "uid"} for ref in meta["ownerReferences"]],
            "finalizers": meta.get("finalizers"), "requests": claim["spec"]["devices"]["requests"],
            "results": sorted(r["request"] for r in allocation["devices"]["results"]),
            "reservedFor": [r["name"] for r in claim["status"]["reservedFor"]]}


def _bound_alike(control_plane, namespace: str, pod: dict) -> tuple[dict, dict, SimCluster]:
    """Create ``pod`` and wait until it is bound with its claim; the simulated cluster must bind it to the same
    node with the same request mappings and an alike claim. The real pod and claim, and the simulated cluster."""
    api = control_plane.api()
    name = pod["metadata"]["name"]
    api.create(pod)
    real = wait_for(lambda: (p := api.get(path_for("Pod", name, namespace)))["status"].get("extendedResourceClaimStatus")
                    and p["spec"].get("nodeName") and p, timeout=60, what=f"{name} bound with its claim")
    sim = simulated(control_plane, namespace, pod)
    mine = sim.get("Pod", name, namespace)
    assert mine["spec"]["nodeName"] == real["spec"]["nodeName"]
    real_status, sim_status = real["status"]["extendedResourceClaimStatus"], mine["status"]["extendedResourceClaimStatus"]
    assert sim_status["requestMappings"] == real_status["requestMappings"]
    real_claim = api.get(path_for("ResourceClaim", real_status["resourceClaimName"], namespace))
    assert _shape(sim.get("ResourceClaim", sim_status["resourceClaimName"], namespace)) == _shape(real_claim)
    return real, real_claim, sim


def test_a_device_class_serves_the_legacy_pod(control_plane, namespace):
    api = control_plane.api()
    real, real_claim, sim = _bound_alike(control_plane, namespace,
                                         legacy_pod("legacy-dra", namespace, {"nvidia.com/gpu": "3"}, A100))
    assert real["spec"]["nodeName"] == "a100-sxm-node-01"
    assert real["status"]["extendedResourceClaimStatus"]["requestMappings"] == [
        {"containerName": "main", "resourceName": "nvidia.com/gpu",
         "requestName": "container-0-request-1"}]  # after cpu, sorted
    assert real_claim["metadata"]["annotations"][ANNOTATION] == "true"
    assert real_claim["metadata"]["name"].startswith("legacy-dra-extended-resources-")
    assert len(real_claim["status"]["allocation"]["devices"]["results"]) == 3
    assert sim.get("Pod", "legacy-dra", namespace)["status"]["phase"] == "Running"
    assert wait_for(lambda: api.get(path_for("Pod", "legacy-dra", namespace))["status"].get("phase") == "Running",
                    timeout=60, what="legacy-dra Running")
    # the simulated nvidia-smi in such a pod lists the GPUs allocated to its claim
    smi = legacy_pod("smi", namespace, {"nvidia.com/gpu": "2"}, A100)
    smi["spec"]["containers"][0]["command"] = ["nvidia-smi", "-L"]
    sim.apply([smi])
    sim.sleep(5)
    log = sim.lifecycle.container_log((namespace, "smi"), "main")
    assert [line.split(":")[0] for line in log] == ["GPU 0", "GPU 1"]


def test_containers_and_an_init_container_get_their_requests(control_plane, namespace):
    """One request per container (1.34), or the init container reusing the devices of the one after it (1.35 on)."""
    pod = legacy_pod("multi", namespace, {"nvidia.com/gpu": "2"}, A100)
    spec = pod["spec"]
    spec["initContainers"] = [{"name": "init", "image": "ubuntu:24.04", "command": ["true"],
                               "resources": {"limits": {"nvidia.com/gpu": "1"}}}]
    spec["containers"].append({"name": "side", "image": "ubuntu:24.04", "command": ["sleep", "infinity"],
                               "resources": {"requests": {"memory": "1Gi", "nvidia.com/gpu": "1"},
                                             "limits": {"memory": "1Gi", "nvidia.com/gpu": "1"}}})
    _bound_alike(control_plane, namespace, pod)


def _unschedulable_alike(control_plane, namespace: str, name: str, limits: dict[str, str]) -> str:
    """Create a legacy pod no node takes; the scheduler's FailedScheduling message, which the simulated cluster
    must give word for word."""
    pod = legacy_pod(name, namespace, limits)
    control_plane.api().create(pod)
    real = wait_for(lambda: _failed(control_plane.api(), namespace, name), timeout=60, what=f"{name} FailedScheduling")
    assert _sim_message(simulated(control_plane, namespace, pod), namespace, name) == real
    return real


def test_devices_short_on_every_node(control_plane, namespace):
    message = _unschedulable_alike(control_plane, namespace, "too-many", {"nvidia.com/gpu": "9"})
    assert message.startswith("0/4 nodes are available: 4 cannot allocate all claims.")
    assert not [c for c in control_plane.api().get(path_for("ResourceClaim", namespace=namespace))["items"]]


def test_a_resource_no_class_maps_is_insufficient(control_plane, namespace):
    message = _unschedulable_alike(control_plane, namespace, "fpga", {"example.com/fpga": "1"})
    assert message.startswith("0/4 nodes are available: 4 Insufficient example.com/fpga.")


def test_a_class_by_its_implicit_name(control_plane, namespace):
    """``deviceclass.resource.kubernetes.io/gpu.nvidia.com``: from 1.35 on the scheduler serves it through DRA; at
    1.34 NodeResourcesFit leaves it to DynamicResources (a class maps it) and DynamicResources does not take it (not
    an extended resource name there), so the pod is bound with no claim at all."""
    api = control_plane.api()
    pod = legacy_pod("implicit", namespace, {"deviceclass.resource.kubernetes.io/gpu.nvidia.com": "1"}, A100)
    del pod["spec"]["containers"][0]["resources"]["limits"]["cpu"]
    api.create(pod)
    real = wait_for(lambda: (p := api.get(path_for("Pod", "implicit", namespace)))["spec"].get("nodeName") and p,
                    timeout=60, what="implicit bound")
    sim = simulated(control_plane, namespace, pod)
    mine = sim.get("Pod", "implicit", namespace)
    assert mine["spec"]["nodeName"] == real["spec"]["nodeName"]
    real_status = wait_for(lambda: api.get(path_for("Pod", "implicit", namespace))["status"]
                           .get("extendedResourceClaimStatus")
                           or "none", timeout=10, what="implicit's status")
    sim_status = mine["status"].get("extendedResourceClaimStatus") or "none"
    assert (sim_status == "none") == (real_status == "none") == (versions.rules(target_k8s_version()).number <= 34)
    if real_status != "none":
        assert sim_status["requestMappings"] == real_status["requestMappings"]
        real_claim = api.get(path_for("ResourceClaim", real_status["resourceClaimName"], namespace))
        assert _shape(sim.get("ResourceClaim", sim_status["resourceClaimName"], namespace)) == _shape(real_claim)
