"""Nodes grouped by signature give exactly the naive answers: every node allocated on its own with
the public ``drawb.alloc.allocate``, copies counted one allocation at a time."""

from __future__ import annotations

import copy
import random

import pytest

from drawb.alloc import AllocationError, allocate
from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.cluster.sim.scenarios import synthetic
from drawb.plan import PlanState, capacity, preview
from drawb.plan.workload import Workload
from drawb.testing.alloc_scenarios import GATES, generate, nvidia_classes
from tests.unit.plan.naive import naive_capacity, naive_preview

GPU = "gpu.nvidia.com"


def _claim(name: str, requests: list[dict], constraints: list | None = None) -> dict:
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "t"}, "spec": {"devices": devices}}


def _exactly(name: str, device_class: str, count: int = 1, selector: str | None = None, mode: str = "ExactCount") -> dict:
    spec: dict = {"deviceClassName": device_class, "allocationMode": mode}
    if mode == "ExactCount":
        spec["count"] = count
    if selector:
        spec["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": spec}


CLAIMS = {
    "one-gpu": [_claim("a", [_exactly("gpu", GPU)])],
    "three-gpus-one-root": [_claim("b", [_exactly("gpu", GPU, 3)],
                                   [{"requests": ["gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}])],
    "mig-profile": [_claim("c", [_exactly("mig", "mig.nvidia.com", 2,
                                          "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")])],
    "by-uuid": [_claim("d", [_exactly("gpu", GPU, 1, "device.attributes['gpu.nvidia.com'].uuid.startsWith('GPU-')")])],
    "all-and-two-claims": [_claim("e", [_exactly("gpu", GPU, mode="All")]), _claim("f", [_exactly("mig", "mig.nvidia.com")])],
    "iterates-attributes": [_claim("g", [_exactly("gpu", GPU, 2, "device.attributes.exists(d, d == 'gpu.nvidia.com')")])],
}


def _held(name: str, devices: list[tuple[str, str]]) -> dict:
    return {"metadata": {"name": name, "namespace": "t"}, "spec": {},
            "status": {"allocation": {"devices": {"results": [
                {"request": "r", "driver": GPU, "pool": pool, "device": device} for pool, device in devices]}}}}


def _synthetic_with_holes(seed: int) -> dict:
    """synthetic(24, 8) with a random third of the devices of a random half of the nodes in use."""
    cluster = synthetic(24, 8)
    rng = random.Random(seed)
    held = []
    for rs in cluster.resource_slices:
        if rs["spec"]["driver"] != GPU or rng.random() < 0.5:
            continue
        devices = [(rs["spec"]["pool"]["name"], d["name"]) for d in rs["spec"]["devices"] if rng.random() < 0.33]
        if devices:
            held.append(_held(f"held-{rs['spec']['nodeName']}", devices))
    return {"nodes": cluster.nodes, "slices": cluster.resource_slices, "classes": nvidia_device_classes(),
            "claims": held, "version": {"kubernetes_version": "1.34"}}


def _state(scenario: dict) -> PlanState:
    return PlanState(nodes=scenario["nodes"], slices=scenario["slices"], classes=scenario["classes"],
                     claims=scenario["claims"], kubernetes_version=scenario["version"]["kubernetes_version"],
                     feature_gates=scenario["version"].get("feature_gates"))


def _workload(claims: list[dict]) -> Workload:
    return Workload("ResourceClaim", claims[0]["metadata"]["name"], "t", {"spec": {}}, claims, [True] * len(claims))


def _compare(scenario: dict, claims: list[dict], limit: int = 200) -> None:
    try:
        naive = naive_preview({"spec": {}}, claims, scenario)
    except AllocationError as err:
        result = preview(_workload(claims), _state(scenario))
        assert result.error == str(err)
        return
    state = _state(scenario)
    result = preview(_workload(claims), state)
    assert result.error is None
    assert {f.node: f.allocations for f in result.fits} == naive
    counted = capacity(_workload(claims), state)
    try:
        naive_counts = naive_capacity({"spec": {}}, claims, scenario, limit)
    except AllocationError as err:  # a later copy reaches a device its selector cannot evaluate
        assert counted.error == str(err)
        return
    assert counted.error is None
    assert {n.node: min(n.copies, limit) for n in counted.nodes} == naive_counts


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_synthetic_cluster_with_devices_in_use(case, seed):
    _compare(_synthetic_with_holes(seed), CLAIMS[case])


def _clone(scenario, copies: int, rng: random.Random) -> dict:
    """The scenario's nodes ``copies`` times under new names (UUIDs changed too), each clone holding the
    scenario's allocated claims or not."""
    nodes, slices, held = list(scenario.nodes), list(scenario.slices), list(scenario.allocated)
    for i in range(copies):
        renames = {n["metadata"]["name"]: f"{n['metadata']['name']}-k{i}" for n in scenario.nodes}
        for node in scenario.nodes:
            twin = copy.deepcopy(node)
            twin["metadata"]["name"] = renames[node["metadata"]["name"]]
            twin["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = twin["metadata"]["name"]
            nodes.append(twin)
        for rs in scenario.slices:
            twin = copy.deepcopy(rs)
            spec = twin["spec"]
            twin["metadata"]["name"] += f"-k{i}"
            spec["nodeName"] = renames.get(spec.get("nodeName"), spec.get("nodeName"))
            spec["pool"]["name"] = renames.get(spec["pool"]["name"], spec["pool"]["name"] + f"-k{i}")
            for device in spec.get("devices") or []:
                for key, value in (device.get("attributes") or {}).items():
                    if key.endswith("uuid") and "string" in value:
                        value["string"] += f"-k{i}"
            slices.append(twin)
        pools = {rs["spec"]["pool"]["name"]: renamed["spec"]["pool"]["name"]
                 for rs, renamed in zip(scenario.slices, slices[-len(scenario.slices):])}
        if rng.random() < 0.5:
            for claim in scenario.allocated:
                twin = copy.deepcopy(claim)
                twin["metadata"]["name"] += f"-k{i}"
                for result in twin["status"]["allocation"]["devices"]["results"]:
                    result["pool"] = pools.get(result["pool"], result["pool"])
                held.append(twin)
    return {"nodes": nodes, "slices": slices, "classes": [*nvidia_classes(), *scenario.classes], "claims": held,
            "version": {"kubernetes_version": "1.34", "feature_gates": GATES}}


@pytest.mark.parametrize("seed", range(0, 60))
def test_generated_scenarios_cloned(seed):
    scenario = generate(seed, prefix="pg")
    _compare(_clone(scenario, 3, random.Random(seed)), scenario.claims, limit=40)


@pytest.mark.parametrize("seed", range(0, 60, 2))
def test_claims_changing_between_calls(seed):
    """The same nodes and slices while claims go and come back (the views and signatures kept for the
    pools that did not change): every call still gives the naive answers."""
    scenario = generate(seed, prefix="pc")
    cluster = _clone(scenario, 2, random.Random(seed))
    held = list(cluster["claims"])
    rng = random.Random(seed)
    for step in range(6):
        if held and step < 5:
            del held[rng.randrange(len(held))]
        else:
            held = list(cluster["claims"])
        _compare({**cluster, "claims": held}, scenario.claims, limit=40)


def _synthetic_with_odd_attributes(seed: int) -> dict:
    """synthetic(24, 8) where a random third of the GPUs carry another product name or PCIe root: nodes
    that differ only in an attribute a selector or constraint reads must not be taken as alike."""
    scenario = _synthetic_with_holes(seed)
    rng = random.Random(seed)
    slices = copy.deepcopy(scenario["slices"])
    for rs in slices:
        for device in rs["spec"]["devices"] if rs["spec"]["driver"] == GPU else ():
            attributes = device.get("attributes") or {}
            if "productName" in attributes and rng.random() < 0.3:
                attributes["productName"] = {"string": "NVIDIA H200"}
            if "resource.kubernetes.io/pcieRoot" in attributes and rng.random() < 0.3:
                attributes["resource.kubernetes.io/pcieRoot"] = {"string": rng.choice(["pci0000:15", "pci0000:9d"])}
    return {**scenario, "slices": slices}


ODD_ATTRIBUTE_CLAIMS = {
    "by-product": [_claim("h", [_exactly("gpu", GPU, 2, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'")])],
    "three-gpus-one-root": CLAIMS["three-gpus-one-root"],
}


@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("case", sorted(ODD_ATTRIBUTE_CLAIMS))
def test_nodes_differing_in_a_read_attribute(case, seed):
    _compare(_synthetic_with_odd_attributes(seed), ODD_ATTRIBUTE_CLAIMS[case])
