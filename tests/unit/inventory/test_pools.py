"""Pool rules: only the newest generation counts; incomplete pools are flagged, not dropped."""

from __future__ import annotations

import copy

from drawb.inventory import device_frame, slice_frame
from tests.conftest import load_fixture


def _dynmig():
    return copy.deepcopy(load_fixture("resourceslices-dynamic-mig-h100.yaml"))


def test_older_generation_is_left_out():
    slices = _dynmig()
    old = copy.deepcopy(slices[1])
    old["metadata"]["name"] = "stale-slice"
    old["spec"]["pool"]["generation"] = 0
    old["spec"]["devices"][0]["name"] = "stale-device"
    frame = device_frame(slices + [old])
    assert "stale-device" not in set(frame["device"])
    assert "stale-slice" not in set(frame["slice"])
    assert frame["pool_complete"].all()
    sf = slice_frame(slices + [old]).set_index("slice")
    assert not sf.loc["stale-slice", "current"]
    assert sf.loc[slices[1]["metadata"]["name"], "current"]


def test_newer_generation_replaces_the_pool():
    slices = _dynmig()
    newer = copy.deepcopy(slices[3])
    newer["metadata"]["name"] = "newer"
    newer["spec"]["pool"]["generation"] = 2
    frame = device_frame(slices + [newer])
    # generation 2 has one of its 9 slices: only it counts, flagged incomplete
    assert set(frame["slice"]) == {"newer"}
    assert len(frame) == len(newer["spec"]["devices"])
    assert not frame["pool_complete"].any()


def test_missing_slice_flags_the_pool_incomplete_and_keeps_rows():
    slices = _dynmig()
    del slices[4]
    frame = device_frame(slices)
    assert len(frame) == 208 - 26
    assert not frame["pool_complete"].any()
    sf = slice_frame(slices)
    assert not sf["pool_complete"].any() and sf["current"].all()


def test_pools_are_per_driver():
    slices = load_fixture("resourceslices.yaml")
    gpu = [s for s in slices if s["spec"]["driver"] == "gpu.nvidia.com"]
    frame = device_frame(slices)
    # the compute-domain pools share names with the GPU pools (node names) but are separate pools
    assert frame.groupby("driver")["pool"].nunique().to_dict() == {
        "compute-domain.nvidia.com": 4, "gpu.nvidia.com": 4}
    assert frame["pool_complete"].all()
    assert len(device_frame(gpu)) == 38


def test_not_node_local_slices_get_a_readable_node():
    slices = load_fixture("resourceslices.yaml")
    net = copy.deepcopy(slices[-1])
    net["metadata"]["name"] = "fabric"
    net["spec"]["driver"] = "net.example.com"
    net["spec"].pop("nodeName")
    net["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1", "r2"]},
        {"key": "gpu", "operator": "Exists"}]}]}
    everywhere = copy.deepcopy(net)
    everywhere["metadata"]["name"] = "everywhere"
    everywhere["spec"]["pool"]["name"] = "shared"
    everywhere["spec"].pop("nodeSelector")
    everywhere["spec"]["allNodes"] = True
    frame = device_frame([net, everywhere]).set_index("slice")
    assert set(frame.loc["fabric", "node"]) == {"<selector: rack in (r1,r2), gpu>"}
    assert set(frame.loc["everywhere", "node"]) == {"<all nodes>"}
    assert frame.attrs["drawb"]["problems"] == []
    assert "net.example.com/type" in frame.columns


def test_per_device_node_selection():
    slices = load_fixture("resourceslices.yaml")
    s = copy.deepcopy(slices[-1])
    s["spec"].pop("nodeName")
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0]["nodeName"] = "node-x"
    s["spec"]["devices"][1]["allNodes"] = True
    frame = device_frame([s])
    assert list(frame["node"]) == ["node-x", "<all nodes>"]


def test_taints_lists_and_policies_are_kept():
    s = copy.deepcopy(load_fixture("resourceslices.yaml")[0])
    dev = s["spec"]["devices"][0]
    dev["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    dev["attributes"]["resource.kubernetes.io/numaNode"] = {"ints": [0, 1]}
    dev["allowMultipleAllocations"] = True
    dev["capacity"]["memory"]["requestPolicy"] = {"default": "1Gi", "validRange": {"min": "1Mi", "step": "1Mi"}}
    dev["capacity"]["shares"] = {"value": "500m"}
    frame = device_frame([s])
    row = frame.set_index("device").loc[dev["name"]]
    assert row["taints"] == dev["taints"]
    assert row["resource.kubernetes.io/numaNode"] == [0, 1]
    assert frame.attrs["drawb"]["attributes"]["resource.kubernetes.io/numaNode"] == "list"
    assert frame.attrs["drawb"]["lists"]["resource.kubernetes.io/numaNode"] == "ints"
    assert bool(row["allow_multiple_allocations"]) is True
    assert row["request_policy"] == {"gpu.nvidia.com/memory": dev["capacity"]["memory"]["requestPolicy"]}
    assert row["capacity:gpu.nvidia.com/shares"] == "500m"
    assert frame["capacity:gpu.nvidia.com/shares:value"].dtype == "float64"
    assert row["capacity:gpu.nvidia.com/shares:value"] == 0.5
    others = frame[frame["device"] != dev["name"]]
    assert others["taints"].isna().all() and not others["allow_multiple_allocations"].any()


def test_pool_states_rules():
    from types import SimpleNamespace as H

    from drawb.inventory.pools import pool_states

    states = pool_states([
        H(name="a", driver="d", pool="p", generation=1, count=2),
        H(name="b", driver="d", pool="p", generation=2, count=2),
        H(name="c", driver="d", pool="p", generation=2, count=3),  # disagrees: the larger count is expected
        H(name="c", driver="d", pool="p", generation=2, count=3),  # listed twice: one slice
        H(name="x", driver="e", pool="p", generation=0, count=1),
    ])
    p, q = states[("d", "p")], states[("e", "p")]
    assert (p.generation, p.slices, p.expected, p.complete) == (2, 2, 3, False)
    assert (q.generation, q.slices, q.expected, q.complete) == (0, 1, 1, True)
