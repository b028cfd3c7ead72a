"""Feature gates set per cluster, each probed both ways on the real API server and scheduler:
DRAExtendedResource (``nvidia.com/gpu: 1`` served through DRA) and DRAPartitionableDevices
(counters shared by a GPU and its partitions)."""

from __future__ import annotations

import pytest

from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.live.test_dra_scheduling import DRIVER, attr, claim, follow_logs, pod, published_device, running

pytestmark = pytest.mark.live


def extended_resource_pod(name: str, namespace: str) -> dict:
    """A pod asking for ``nvidia.com/gpu: 1`` the classic way (no claims)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{
            "name": "ctr", "image": "ubuntu:22.04", "command": ["bash", "-c"],
            "args": ["nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait"],
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        }]},
    }


GATES = ("DRAExtendedResource", "DRAPartitionableDevices")


@pytest.fixture(scope="module")
def gates_on(start_control_plane):
    """A second cluster with the DRA alpha gates of 1.34 under test turned on."""
    cp = start_control_plane(dict.fromkeys(GATES, True))
    assert all(cp.feature_enabled(g) for g in GATES)
    yield cp
    cp.cluster.down()


def partitioned_gpu(node: str, minor: int) -> list[dict]:
    """A node and its slices: one GPU and two halves of it, all consuming one counter set.

    Kubernetes 1.34 keeps counters and devices in one slice; 1.35 and later require the counters
    in a slice of their own (``only one of `sharedCounters` or `devices` is allowed``).
    """
    def device(name: str, kind: str, memory: str, uuid: str, profile: str = "") -> dict:
        attributes = {"type": {"string": kind}, "uuid": {"string": uuid}, "productName": {"string": "NVIDIA H100 80GB HBM3"}}
        if profile:
            attributes["profile"] = {"string": profile}
            attributes["parentUUID"] = {"string": "GPU-0c0c0c0c-0000-4000-8000-000000000000"}
        return {"name": name, "attributes": attributes,
                "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}]}

    counters = [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]
    devices = [
        device("gpu-0", "gpu", "80Gi", "GPU-0c0c0c0c-0000-4000-8000-000000000000"),
        device("gpu-0-mig-a", "mig", "40Gi", "MIG-0c0c0c0c-0000-4000-8000-00000000000a", "3g.40gb"),
        device("gpu-0-mig-b", "mig", "40Gi", "MIG-0c0c0c0c-0000-4000-8000-00000000000b", "3g.40gb"),
    ]
    parts = [{"sharedCounters": counters}, {"devices": devices}] if minor >= 35 else [
        {"sharedCounters": counters, "devices": devices}]
    pool = {"name": node, "generation": 1, "resourceSliceCount": len(parts)}
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}] + [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu-{i}"},
         "spec": {"driver": DRIVER, "nodeName": node, "pool": pool, **part}}
        for i, part in enumerate(parts)
    ]


def server_minor(cp) -> int:
    """The API server's minor version."""
    return int(cp.api().get("/version")["minor"].rstrip("+"))


def test_gate_off_keeps_extended_resource_pods_pending(control_plane, namespace):
    if control_plane.feature_enabled("DRAExtendedResource"):
        pytest.skip("DRAExtendedResource is on in this session's cluster (set, or this version's default)")
    api = control_plane.api()
    assert "extendedResourceName" not in api.get(path_for("DeviceClass", "gpu.nvidia.com"))["spec"]
    api.create(extended_resource_pod("classic", namespace))

    def failed_scheduling():
        return [e for e in api.get(path_for("Event", namespace=namespace))["items"] if e["reason"] == "FailedScheduling"]

    assert "Insufficient nvidia.com/gpu" in wait_for(failed_scheduling, what="FailedScheduling")[0]["message"]


def test_gate_on_serves_nvidia_com_gpu_through_dra(gates_on):
    cp = gates_on
    api = cp.api()
    assert api.get(path_for("DeviceClass", "gpu.nvidia.com"))["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    namespace = cp.create_namespace("extended")
    api.create(extended_resource_pod("classic", namespace))
    pod = wait_for(lambda: running(api, namespace, "classic"), what="extended-resource pod Running")

    status = pod["status"]["extendedResourceClaimStatus"]
    assert status["requestMappings"][0]["containerName"] == "ctr"
    claim = api.get(path_for("ResourceClaim", status["resourceClaimName"], namespace))
    result, = claim["status"]["allocation"]["devices"]["results"]
    node, device = published_device(api, result)
    assert (result["driver"], attr(device, "type"), pod["spec"]["nodeName"]) == (DRIVER, "gpu", node)
    assert attr(device, "uuid") in follow_logs(cp, namespace, "classic", "ctr", until=attr(device, "uuid"))


def test_gate_off_drops_counters_from_slices(control_plane):
    if control_plane.feature_enabled("DRAPartitionableDevices"):
        pytest.skip("DRAPartitionableDevices is on in this session's cluster (set, or this version's default)")
    for rs in partitioned_gpu("partition-node", server_minor(control_plane))[1:]:
        stored = control_plane.api().create(rs, dryRun="All")
        assert "sharedCounters" not in stored["spec"]
        assert not any("consumesCounters" in d for d in stored["spec"].get("devices", []))


def test_gate_on_shared_counters_limit_what_the_scheduler_allocates(gates_on):
    cp = gates_on
    api = cp.api()
    node, *slices = partitioned_gpu("partition-node", server_minor(cp))
    api.create(node)
    for rs in slices:
        assert api.create(rs)["spec"] == rs["spec"], "the API server changed the published slice"

    def node_schedulable():
        n = api.get(path_for("Node", "partition-node"))
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))
        return ready and not n["spec"].get("taints")

    wait_for(node_schedulable, what="partition-node Ready without taints")
    namespace = cp.create_namespace("partitions")
    on_node = "device.attributes['gpu.nvidia.com'].uuid.startsWith('GPU-0c0c0c0c') || " \
              "device.attributes['gpu.nvidia.com'].uuid.startsWith('MIG-0c0c0c0c')"
    api.create(claim("whole", namespace, "gpu.nvidia.com", on_node))
    api.create(claim("half", namespace, "mig.nvidia.com", on_node))
    api.create(pod("whole", namespace, {"resourceClaimName": "whole"}))
    wait_for(lambda: running(api, namespace, "whole"), what="pod with the whole GPU Running")

    api.create(pod("half", namespace, {"resourceClaimName": "half"}))

    def failed_scheduling():
        events = api.get(path_for("Event", namespace=namespace))["items"]
        return [e for e in events if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "half"]

    wait_for(failed_scheduling, what="FailedScheduling for the half while the whole GPU is taken")
    assert api.get(path_for("Pod", "half", namespace))["status"]["phase"] == "Pending"

    api.delete(path_for("Pod", "whole", namespace), gracePeriodSeconds="0")
    half = wait_for(lambda: running(api, namespace, "half"), what="half Running once the whole GPU is free")
    result, = api.get(path_for("ResourceClaim", "half", namespace))["status"]["allocation"]["devices"]["results"]
    assert (result["pool"], result["device"][:len("gpu-0-mig")]) == ("partition-node", "gpu-0-mig")
    assert half["spec"]["nodeName"] == "partition-node"
