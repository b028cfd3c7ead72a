"""The public contract of drawb.alloc.allocate beyond the upstream table: versions and gates,
devices in use from allocated claims, and the result's shape."""

from __future__ import annotations

import pytest

from drawb.alloc import AllocationError, allocate
from drawb.alloc.versions import flavor

NODE = {"metadata": {"name": "node-1", "labels": {"region": "r1"}}}
GPU_CLASS = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def _slice(name: str, devices: list[dict], **where) -> dict:
    spec = {"driver": "gpu.example.com", "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}
    spec.update(where or {"nodeName": "node-1"})
    return {"metadata": {"name": name}, "spec": spec}


def _claim(name: str, count: int = 1, **exactly) -> dict:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count, **exactly}}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"devices": {"requests": [request]}}}


def _devices(n: int) -> list[dict]:
    return [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(n)]


@pytest.mark.parametrize(
    ("version", "gates", "impl"),
    [
        ("1.34", None, "experimental"),  # DRAResourceClaimDeviceStatus is on by default: only experimental has it
        ("1.34", {"DRAResourceClaimDeviceStatus": False}, "incubating"),
        ("1.34", {"DRAResourceClaimDeviceStatus": False, "DRAAdminAccess": False, "DRAPrioritizedList": False}, "stable"),
        ("1.35", None, "incubating"),
        ("1.35", {"DRAConsumableCapacity": True}, "experimental"),
        ("1.36", None, "incubating"),
        ("1.36", {"DRAListTypeAttributes": True}, "experimental"),
        ("v1.37.2", None, "incubating"),
    ],
)
def test_gates_pick_the_implementation(version, gates, impl):
    assert flavor(version, gates).impl == impl


def test_unknown_version_is_an_error():
    with pytest.raises(AllocationError, match="modelled for 1.34, 1.35, 1.36, 1.37"):
        allocate([], node=NODE, slices=[], classes=[], kubernetes_version="1.30")


def test_a_dra_gate_the_version_lacks_is_an_error_other_gates_are_ignored():
    with pytest.raises(AllocationError, match="'DRAListTypeAttributes' does not exist in Kubernetes 1.34"):
        allocate([], node=NODE, slices=[], classes=[], feature_gates={"DRAListTypeAttributes": True})
    with pytest.raises(AllocationError, match="'DRAPartitionableDevice' does not exist"):
        allocate([], node=NODE, slices=[], classes=[], feature_gates={"DRAPartitionableDevice": True})
    assert allocate([], node=NODE, slices=[], classes=[], feature_gates={"SchedulerAsyncAPICalls": True}) == []


def test_allocates_on_the_node_and_selects_it():
    result = allocate([_claim("c", 2)], node=NODE, slices=[_slice("node-1", _devices(3))], classes=[GPU_CLASS])
    assert result == [{
        "devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"},
        ]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
    }]  # fmt: skip


def test_devices_of_allocated_claims_are_in_use_but_admin_access_is_not():
    held = {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1", "adminAccess": True},
    ]}}}}  # fmt: skip
    result = allocate([_claim("c", 1)], node=NODE, slices=[_slice("node-1", _devices(2))], classes=[GPU_CLASS], allocated=[held])
    assert [r["device"] for r in result[0]["devices"]["results"]] == ["gpu-1"]
    assert allocate([_claim("c", 2)], node=NODE, slices=[_slice("node-1", _devices(2))], classes=[GPU_CLASS], allocated=[held]) is None


def test_other_nodes_devices_do_not_count():
    slices = [_slice("node-2", _devices(4), nodeName="node-2")]
    assert allocate([_claim("c")], node=NODE, slices=slices, classes=[GPU_CLASS]) is None


def test_selector_runtime_error_aborts_with_the_schedulers_message():
    claim = _claim("c", selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].missing == 1'}}])
    with pytest.raises(AllocationError) as info:
        allocate([claim], node=NODE, slices=[_slice("node-1", _devices(1))], classes=[GPU_CLASS])
    assert str(info.value) == "claim ns/c: selector #0: CEL runtime error: no such key: missing"


def test_admin_access_with_the_gate_off():
    with pytest.raises(AllocationError) as info:
        allocate([_claim("c", adminAccess=True)], node=NODE, slices=[_slice("node-1", _devices(1))],
                 classes=[GPU_CLASS], feature_gates={"DRAAdminAccess": False})  # fmt: skip
    assert str(info.value) == "claim ns/c, request gpu: admin access is requested, but the feature is disabled"


def test_all_nodes_pool_has_no_node_selector():
    result = allocate([_claim("c")], node=NODE, slices=[_slice("shared", _devices(1), allNodes=True)], classes=[GPU_CLASS])
    assert "nodeSelector" not in result[0]
