"""The fake NVIDIA driver's pure parts: inventories, allocated devices per container, CRI logs."""

from __future__ import annotations

from datetime import UTC, datetime

from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing.fake_driver import Inventory, _clean, allocated_devices, cri_log, runs_nvidia_smi


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


def test_cri_log_lines_and_nvidia_smi_detection():
    now = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
    assert cri_log(["GPU 0: X", "  MIG"], now) == (
        "2026-01-02T03:04:05.600000Z stdout F GPU 0: X\n2026-01-02T03:04:05.600000Z stdout F   MIG\n"
    )
    assert runs_nvidia_smi({"command": ["bash", "-c"], "args": ["nvidia-smi -L; sleep 1"]})
    assert not runs_nvidia_smi({"command": ["sleep", "inf"]})
