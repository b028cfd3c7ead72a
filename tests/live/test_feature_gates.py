"""Feature gates set per cluster: DRAExtendedResource both ways on the real scheduler."""

from __future__ import annotations

import pytest

from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.live.test_dra_scheduling import DRIVER, attr, follow_logs, published_device, running

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


@pytest.fixture(scope="module")
def extended_resource_cluster(start_control_plane):
    cp = start_control_plane({"DRAExtendedResource": True})
    assert cp.feature_enabled("DRAExtendedResource")
    yield cp
    cp.cluster.down()


def test_gate_off_keeps_extended_resource_pods_pending(control_plane, namespace):
    if control_plane.feature_enabled("DRAExtendedResource"):
        pytest.skip("DRAExtendedResource is on in this session's cluster (set, or this version's default)")
    api = control_plane.api()
    assert "extendedResourceName" not in api.get(path_for("DeviceClass", "gpu.nvidia.com"))["spec"]
    api.create(extended_resource_pod("classic", namespace))

    def failed_scheduling():
        return [e for e in api.get(path_for("Event", namespace=namespace))["items"] if e["reason"] == "FailedScheduling"]

    assert "Insufficient nvidia.com/gpu" in wait_for(failed_scheduling, what="FailedScheduling")[0]["message"]


def test_gate_on_serves_nvidia_com_gpu_through_dra(extended_resource_cluster):
    cp = extended_resource_cluster
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
