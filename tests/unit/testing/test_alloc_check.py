"""The independent allocation checker: a valid allocation passes, each broken rule is named."""

from __future__ import annotations

import copy

import pytest

from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.testing.alloc_check import node_selector_matches, problems, tolerates

NODE = {"metadata": {"name": "n1", "labels": {"rack": "a"}}}
GATES = {"DRADeviceTaints": True, "DRAPartitionableDevices": True}


def _gpu(name: str, product: str = "NVIDIA H200", root: str = "pci0000:15", **extra) -> dict:
    return {"name": name, "attributes": {"type": {"string": "gpu"}, "productName": {"string": product},
                                         "resource.kubernetes.io/pcieRoot": {"string": root}},
            "capacity": {"memory": {"value": "80Gi"}}, **extra}


def _slice(devices: list[dict], name: str = "s1", generation: int = 1, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1",
            "pool": {"name": "n1", "generation": generation, "resourceSliceCount": 1}, "devices": devices, **spec}}


def _claim(*requests: dict, constraints: list | None = None) -> dict:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": "c"}, "spec": {"devices": devices}}


def _alloc(*devices: str, request: str = "r") -> dict:
    return {"devices": {"results": [{"request": request, "driver": "gpu.nvidia.com", "pool": "n1", "device": d}
                                    for d in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}


def _check(claim, allocation, slices, allocated=(), version="1.34"):
    return problems([claim], [allocation], node=NODE, slices=slices, classes=nvidia_device_classes(),
                    allocated=allocated, feature_gates=GATES, kubernetes_version=version)


SLICES = [_slice([_gpu("gpu-0"), _gpu("gpu-1", root="pci0000:37"), _gpu("gpu-2", product="NVIDIA L4")])]
TWO = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}


def test_a_valid_allocation_has_no_problems():
    assert _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), SLICES) == []


@pytest.mark.parametrize(("allocation", "claim", "needle"), [
    (_alloc("gpu-0"), _claim(TWO), "1 devices, count is 2"),
    (_alloc("gpu-0", "gpu-9"), _claim(TWO), "not published"),
    (_alloc("gpu-0", "gpu-0"), _claim(TWO), "allocated twice"),
    (_alloc("gpu-0", "gpu-2"), _claim(TWO, constraints=[{"matchAttribute": "gpu.nvidia.com/productName"}]),
     "matchAttribute gpu.nvidia.com/productName: values differ"),
    (_alloc("gpu-0", "gpu-2"), _claim(TWO, constraints=[{"distinctAttribute": "gpu.nvidia.com/productName"}]), ""),
    (_alloc("gpu-0", "gpu-1"), _claim({"name": "r", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "count": 2,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"}}]}}),
     "does not match"),
    (_alloc("gpu-0", "gpu-1"), _claim({"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}),
     "All, but not ['gpu.nvidia.com/n1/gpu-2']"),
    (_alloc("gpu-0", request="r/big"), _claim({"name": "r", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 2},
        {"name": "small", "deviceClassName": "gpu.nvidia.com"}]}), "1 devices, count is 2"),
    (_alloc("gpu-0", request="r/small"), _claim({"name": "r", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 2},
        {"name": "small", "deviceClassName": "gpu.nvidia.com"}]}), ""),
])
def test_each_broken_rule_is_named(allocation, claim, needle):
    found = _check(claim, allocation, SLICES)
    if needle:
        assert any(needle in p for p in found), found
    else:
        assert found == []


def test_devices_in_use_count_unless_admin_access():
    held = {"status": {"allocation": _alloc("gpu-1", request="x")}}
    assert any("already allocated" in p for p in _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), SLICES, [held]))
    admin_held = copy.deepcopy(held)
    admin_held["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    assert _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), SLICES, [admin_held]) == []


def test_taints_need_tolerations():
    tainted = [_slice([_gpu("gpu-0", taints=[{"key": "gpu.nvidia.com/xid", "value": "48", "effect": "NoSchedule"}])])]
    one = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
    assert any("not tolerated" in p for p in _check(_claim(one), _alloc("gpu-0"), tainted))
    tolerant = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                         "tolerations": [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}]}}
    assert _check(_claim(tolerant), _alloc("gpu-0"), tainted) == []


def test_shared_counters_bound_what_devices_consume():
    counters = [{"name": "set", "counters": {"memory": {"value": "80Gi"}}}]
    eat = [{"counterSet": "set", "counters": {"memory": {"value": "50Gi"}}}]
    shared = [_slice([_gpu("gpu-0", consumesCounters=eat), _gpu("gpu-1", consumesCounters=eat)], sharedCounters=counters)]
    found = _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), shared)
    assert any("counter s1/set/memory" in p for p in found), found


def test_from_1_35_counter_sets_come_from_another_slice_of_the_pool():
    counters = {"name": "set", "counters": {"memory": {"value": "80Gi"}}}
    pool = {"name": "n1", "generation": 1, "resourceSliceCount": 2}
    counter_slice = {"metadata": {"name": "s0"}, "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": pool,
                                                          "sharedCounters": [counters]}}

    def devices(memory: str) -> dict:
        eat = [{"counterSet": "set", "counters": {"memory": {"value": memory}}}]
        return _slice([_gpu("gpu-0", consumesCounters=eat), _gpu("gpu-1", consumesCounters=eat)],
                      pool=dict(pool))

    assert _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), [counter_slice, devices("40Gi")], version="1.37") == []
    found = _check(_claim(TWO), _alloc("gpu-0", "gpu-1"), [counter_slice, devices("50Gi")], version="1.37")
    assert found == ["counter n1/set/memory: 100Gi consumed, 80Gi available"], found


def test_only_the_newest_pool_generation_counts():
    slices = [_slice([_gpu("gpu-0")], name="old"), _slice([_gpu("gpu-1")], name="new", generation=2)]
    one = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
    assert any("not published" in p for p in _check(_claim(one), _alloc("gpu-0"), slices))
    assert _check(_claim(one), _alloc("gpu-1"), slices) == []


def test_tolerations_and_node_selectors():
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert tolerates({"key": "k", "operator": "Equal", "value": "v"}, taint)
    assert not tolerates({"key": "k", "operator": "Equal", "value": "w"}, taint)
    assert tolerates({"operator": "Exists"}, taint)
    assert not tolerates({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, taint)
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["b"]}]},
                                      {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert node_selector_matches(selector, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": selector["nodeSelectorTerms"][:1]}, NODE)


def test_distinct_attribute_compares_values_from_1_35():
    claim = _claim(TWO, constraints=[{"distinctAttribute": "gpu.nvidia.com/productName"}])
    assert _check(claim, _alloc("gpu-0", "gpu-1"), SLICES) == []  # 1.34 compares addresses
    assert any("distinctAttribute" in p for p in _check(claim, _alloc("gpu-0", "gpu-1"), SLICES, version="1.35"))
