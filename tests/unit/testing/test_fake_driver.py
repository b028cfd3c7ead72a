"""The fake NVIDIA driver's pure parts: inventories, allocated devices per container, CRI logs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing.fake_driver import (
    Inventory,
    NodesNotReady,
    _clean,
    allocated_devices,
    completed_status,
    container_runs,
    cri_log,
    node_ready,
    ready_timeout,
)


def _devices(scenario) -> dict[tuple[str, str], dict]:
    return {
        (s["spec"]["pool"]["name"], d["name"]): d
        for s in scenario.resource_slices if s["spec"]["driver"] == "gpu.nvidia.com"
        for d in s["spec"]["devices"]
    }


def _claim(*results: tuple[str, str, str]) -> dict:
    return {"status": {"allocation": {"devices": {"results": [
        {"request": r, "driver": "gpu.nvidia.com", "pool": p, "device": d} for r, p, d in results
    ]}}}}


def test_inventory_from_objects_makes_up_missing_nodes(fixture_slices):
    inv = Inventory.from_objects(fixture_slices)
    assert len(inv.resource_slices) == 8
    assert sorted(n["metadata"]["name"] for n in inv.nodes) == sorted({s["spec"]["nodeName"] for s in fixture_slices})


def test_clean_drops_server_fields_and_labels_drawb():
    scenario = build_scenario("default")
    node = _clean(scenario.nodes[0], "Node", "v1")
    assert "uid" not in node["metadata"]
    assert node["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "drawb"
    assert set(node["status"]) == {"capacity", "allocatable"}
    rs = _clean(scenario.resource_slices[0], "ResourceSlice", "resource.k8s.io/v1")
    assert "ownerReferences" not in rs["metadata"] and "generateName" not in rs["metadata"]
    assert rs["spec"] == scenario.resource_slices[0]["spec"]


def test_two_containers_naming_one_claim_see_the_same_device():
    scenario = build_scenario("default")
    devices = _devices(scenario)
    pool, name = next(iter(devices))
    pod = {"spec": {"containers": [
        {"name": "a", "resources": {"claims": [{"name": "gpu"}]}},
        {"name": "b", "resources": {"claims": [{"name": "gpu"}]}},
        {"name": "c"},
    ]}}
    got = allocated_devices(pod, {"gpu": _claim(("gpu", pool, name))}, devices)
    assert got == {"a": [devices[pool, name]], "b": [devices[pool, name]], "c": []}


def test_container_naming_a_request_sees_only_its_devices():
    devices = _devices(build_scenario("default"))
    (p1, d1), (p2, d2) = list(devices)[:2]
    claim = _claim(("big", p1, d1), ("small/mig-1g", p2, d2))
    pod = {"spec": {"containers": [{"name": "x", "resources": {"claims": [{"name": "c", "request": "small"}]}}]}}
    assert allocated_devices(pod, {"c": claim}, devices) == {"x": [devices[p2, d2]]}


def test_cri_log_lines():
    now = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
    assert cri_log(["GPU 0: X", "  MIG"], now) == (
        "2026-01-02T03:04:05.600000Z stdout F GPU 0: X\n2026-01-02T03:04:05.600000Z stdout F   MIG\n"
    )


def _pod(policy: str, *commands: list[str]) -> dict:
    return {"spec": {"restartPolicy": policy,
                     "containers": [{"name": f"c{i}", "command": c} for i, c in enumerate(commands)]}}


def test_a_pod_ends_as_its_commands_and_restart_policy_say():
    gpu = next(iter(_devices(build_scenario("default")).values()))
    smi, sleeper, failing = ["nvidia-smi", "-L"], ["sh", "-c", "nvidia-smi -L && sleep infinity"], ["false"]
    runs = container_runs(_pod("Never", smi), {"c0": [gpu]})
    assert runs["c0"].lines[0].startswith("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-") and runs["c0"].exit_code == 0
    assert completed_status(_pod("Never", smi), runs)["phase"] == "Succeeded"
    assert completed_status(_pod("Always", smi), runs) is None
    both = _pod("Never", smi, sleeper)
    assert completed_status(both, container_runs(both, {"c0": [gpu], "c1": [gpu]})) is None
    no_gpu = container_runs(_pod("Never", smi), {"c0": []})
    assert no_gpu["c0"].lines == ["No devices were found"]
    assert completed_status(_pod("Never", smi), no_gpu)["phase"] == "Failed"
    assert completed_status(_pod("OnFailure", failing), container_runs(_pod("OnFailure", failing), {"c0": []})) is None


def test_readiness_wait_grows_with_the_cluster():
    assert ready_timeout(4) == pytest.approx(60.24)
    assert ready_timeout(10000) == pytest.approx(660)


def test_nodes_not_ready_says_how_many_and_why():
    nodes = {
        "n1": {"metadata": {"name": "n1"}, "spec": {}, "status": {}},
        "n2": {"metadata": {"name": "n2"}, "spec": {}, "status": {"conditions": [
            {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}},
        "n3": {"metadata": {"name": "n3"}, "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
    }
    assert node_ready(nodes["n3"]) and not node_ready(nodes["n2"])
    err = NodesNotReady({"n1", "n2", "n4"}, 500, 90, nodes)
    message = str(err)
    assert "\n" not in message
    assert message.startswith("3 of 500 nodes not Ready after 90s, e.g. n1: ")
    assert "no Ready condition yet (kwok has not initialised them" in message
    assert "Ready=Unknown (NodeStatusUnknown" in message
    assert "1 not found (first: n4)" in message
