"""``pools``: each pool's counts as the allocator counts them, and the reasons a cluster's answer differs."""

from __future__ import annotations

import json

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.plan.pools import differences, pool_status
from drawb.session import Session

DRIVER = "gpu.example.com"


def slice_(name: str, pool: str, devices: list[dict], count: int = 1, counters: list | None = None, generation: int = 1) -> dict:
    spec: dict = {"driver": DRIVER, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                  "nodeName": "node-1"}
    if counters is not None:
        spec["sharedCounters"] = counters
    else:
        spec["devices"] = devices
    return {"metadata": {"name": name}, "spec": spec}


def consuming(name: str, memory: str, taints: list | None = None) -> dict:
    device = {"name": name, "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}]}
    if taints:
        device["taints"] = taints
    return device


def held(*devices: tuple[str, str], admin: bool = False) -> dict:
    return {"metadata": {"name": "c", "namespace": "n"}, "status": {"allocation": {"devices": {"results": [
        {"request": "r", "driver": DRIVER, "pool": pool, "device": device, **({"adminAccess": True} if admin else {})}
        for pool, device in devices]}}}}


PARTITIONED = [
    slice_("counters", "p", [], count=2, counters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]),
    slice_("devices", "p", [consuming("whole", "80Gi"), consuming("half-a", "40Gi"), consuming("half-b", "40Gi"),
                            {"name": "other", "taints": [{"key": "gpu.example.com/xid", "effect": "NoSchedule"}]},
                            {"name": "informational", "taints": [{"key": "k", "effect": "None"}]}], count=2),
]


def test_counters_used_up_and_blocking_taints_make_free_devices_unavailable():
    status = pool_status(PARTITIONED, [held(("p", "half-a"))], [], "1.37", None)
    [pool] = status.pools
    assert (pool.total, pool.allocated, pool.tainted, pool.counters, pool.available) == (5, 1, 1, 1, 2)
    api = status.to_api()
    assert api["poolCount"] == 1
    assert api["pools"][0] == {"driver": DRIVER, "poolName": "p", "generation": 1, "nodeName": "node-1",
                               "resourceSliceCount": 2, "totalDevices": 5, "allocatedDevices": 1,
                               "availableDevices": 2, "unavailableDevices": 2,
                               "drawb": {"tainted": 1, "sharedCountersUsedUp": 1}}


def test_a_rule_taints_devices_and_admin_access_allocates_nothing():
    rule = {"metadata": {"name": "r"}, "spec": {"deviceSelector": {"device": "half-b"}, "taint": {"key": "k", "effect": "NoExecute"}}}
    [pool] = pool_status(PARTITIONED, [held(("p", "half-a"), admin=True)], [rule], "1.37", None).pools
    assert (pool.allocated, pool.tainted, pool.counters, pool.results) == (0, 2, 0, 1)


def test_an_incomplete_pool_has_the_servers_validation_error_and_no_counts():
    [pool] = pool_status(PARTITIONED[1:], [], [], "1.37", None).pools
    assert pool.validation_error == f"pool {DRIVER}/p is incomplete: observed 1/2 slices at generation 1"
    assert pool.to_api().keys() == {"driver", "poolName", "generation", "nodeName", "validationError"}


def test_each_difference_from_a_136_answer_has_its_reason():
    ours = pool_status(PARTITIONED, [held(("p", "half-a")), held(("p", "half-a"))], [], "1.36", None)
    server = {"poolCount": 1, "pools": [{"driver": DRIVER, "poolName": "p", "generation": 1, "resourceSliceCount": 2,
                                         "totalDevices": 5, "allocatedDevices": 2, "availableDevices": 3,
                                         "unavailableDevices": 0}]}
    found = {d.field: d for d in differences(ours, server, counts_taints=False)}
    assert set(found) == {"allocatedDevices", "unavailableDevices", "availableDevices"}
    assert "counts allocation results (2), drawb devices (1)" in found["allocatedDevices"].why
    assert "1 tainted device(s)" in found["unavailableDevices"].why
    assert "shared counters" in found["unavailableDevices"].why
    assert differences(ours, {"poolCount": 1, "pools": [ours.to_api()["pools"][0]]}, False) == []


def test_pools_on_the_simulated_cluster_counts_what_a_taint_rule_takes():
    sim = SimCluster(clock=ManualClock(), kubernetes_version="1.37")
    session = Session(_cluster=sim)
    before = {(p["driver"], p["poolName"]): p for p in json.loads(run_line(session, "pools --json"))["status"]["pools"]}
    h200 = before[("gpu.nvidia.com", "hgx-h200-03")]
    assert (h200["totalDevices"], h200["allocatedDevices"], h200["availableDevices"]) == (8, 1, 7)
    run_line(session, "taint --driver gpu.nvidia.com --pool hgx-h200-03 --effect NoSchedule --apply")
    result = json.loads(run_line(session, "pools --json --driver gpu.nvidia.com"))
    after = {p["poolName"]: p for p in result["status"]["pools"]}
    assert (after["hgx-h200-03"]["unavailableDevices"], after["hgx-h200-03"]["availableDevices"]) == (7, 0)
    assert result["server"] is None and "serves no ResourcePoolStatusRequest" in result["note"]
