"""drawb.alloc.Allocator: one pod's claims tried node after node. Its answer on every node is the
full search's (the pre-check in front of the search turns a node away only where the search
would answer None), proven on the transcribed upstream cases and on the differential's generated
NVIDIA scenarios, with the pre-check's edges (admin access, failing selectors, 1.34's invalid
pools, ``All``, unparsable node selectors) one by one."""

from __future__ import annotations

import functools

import pytest

from drawb.alloc import AllocationError, Allocator, allocate
from drawb.alloc.versions import Flavor
from drawb.testing.alloc_scenarios import GATES, generate_many, nvidia_classes
from tests.unit.alloc.test_upstream import PARAMS, _features, _gates, _state

NODE = {"metadata": {"name": "node-1"}}
OTHER = {"metadata": {"name": "node-2"}}
DRIVER = "gpu.example.com"
GPU_CLASS = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def _slice(name: str, devices: list[str], pool: str | None = None, **where) -> dict:
    spec = {"driver": DRIVER, "pool": {"name": pool or name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": d, "attributes": {"ok": {"bool": True}}} for d in devices]}
    spec.update(where or {"nodeName": "node-1"})
    return {"metadata": {"name": name}, "spec": spec}


def _claim(name: str = "c", count: int = 1, class_name: str = "gpu", **exactly) -> dict:
    request = {"name": "gpu", "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                          "count": count, **exactly}}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"devices": {"requests": [request]}}}


def _held(*devices: tuple[str, str]) -> dict:
    results = [{"request": "gpu", "driver": DRIVER, "pool": pool, "device": d} for pool, d in devices]
    return {"metadata": {"name": "held", "namespace": "ns"}, "status": {"allocation": {"devices": {"results": results}}}}


def _answer(fn):
    try:
        return fn()
    except AllocationError as err:
        return f"error: {err}"


def _same_as_search(allocator: Allocator, node: dict | None) -> bool:
    """Whether the pre-check rejected the node; fails if allocate(node) differs from the full search."""
    rejected = allocator.rejects(node)
    full = _answer(lambda: allocator.search(node))
    if rejected:
        assert full is None, f"the pre-check turned away {node}, where the search says {full}"
    assert _answer(lambda: allocator.allocate(node)) == full
    return rejected


UNMARKED = [pytest.param(*p.values, id=p.id) for p in PARAMS]  # the upstream xfails are about results, not this


def upstream_allocator(version: str, impl: str, case: dict) -> Allocator:
    """The allocator of one upstream case at ``version`` with the ``impl`` implementation."""
    minor = int(version.split(".")[1])
    features = _features(case)
    flavor = Flavor(minor, impl, features, tuple(sorted(_gates(minor, features).items())))
    return Allocator.for_flavor(flavor, case.get("claims") or [], slices=case.get("slices") or [],
                                classes=case.get("classes") or [], state=_state(case))


@pytest.mark.parametrize(("version", "impl", "case"), UNMARKED)
def test_the_precheck_never_turns_away_what_the_upstream_case_allocates(version, impl, case):
    _same_as_search(upstream_allocator(version, impl, case), case.get("node"))


@functools.cache
def _clusters() -> list[tuple]:
    """The differential's 160 scenarios, ten to a cluster: (scenarios, slices, allocated, classes)."""
    out = []
    for first in range(0, 160, 10):
        scenarios = generate_many(10, first)
        out.append((scenarios, [s for scenario in scenarios for s in scenario.slices],
                    [c for scenario in scenarios for c in scenario.allocated],
                    [*nvidia_classes(), *(c for scenario in scenarios for c in scenario.classes)]))
    return out


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_allocator_answers_like_the_search_on_every_node_of_the_generated_scenarios(version):
    rejected = tried = 0
    for scenarios, slices, allocated, classes in _clusters():
        for scenario in scenarios:
            allocator = Allocator(scenario.claims, slices=slices, classes=classes, allocated=allocated,
                                  kubernetes_version=version, feature_gates=GATES)
            for node in scenario.nodes:
                tried += 1
                rejected += _same_as_search(allocator, node)
    print(f"{version}: {rejected} of {tried} nodes turned away by the pre-check")
    assert tried >= 250 and rejected >= 20, (tried, rejected)


def test_a_node_whose_devices_are_all_held_is_turned_away_without_a_search():
    slices = [_slice("s1", ["gpu-0", "gpu-1"]), _slice("s2", ["gpu-0"], nodeName="node-2")]
    allocator = Allocator([_claim()], slices=slices, classes=[GPU_CLASS], allocated=[_held(("s1", "gpu-0"), ("s1", "gpu-1"))])
    assert _same_as_search(allocator, NODE)
    assert not _same_as_search(allocator, OTHER)
    assert allocator.allocate(OTHER)[0]["devices"]["results"][0]["device"] == "gpu-0"


def test_free_devices_of_another_class_only_are_turned_away():
    other_class = {"metadata": {"name": "other"}, "spec": {"selectors": [{"cel": {"expression": 'device.driver == "x"'}}]}}
    slices = [_slice("s1", ["gpu-0"])]
    allocator = Allocator([_claim(class_name="other")], slices=slices, classes=[GPU_CLASS, other_class])
    assert _same_as_search(allocator, NODE)
    assert not _same_as_search(Allocator([_claim()], slices=slices, classes=[GPU_CLASS]), NODE)


def test_admin_access_may_take_held_devices_so_the_node_is_searched():
    slices = [_slice("s1", ["gpu-0"])]
    allocator = Allocator([_claim(adminAccess=True)], slices=slices, classes=[GPU_CLASS], allocated=[_held(("s1", "gpu-0"))])
    assert not _same_as_search(allocator, NODE)
    assert allocator.allocate(NODE)[0]["devices"]["results"][0]["adminAccess"] is True


def test_a_class_selector_failing_on_a_free_device_is_left_to_the_search_and_raises():
    failing = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": 'device.attributes["x"].missing'}}]}}
    slices = [_slice("s1", ["gpu-0", "gpu-1"])]
    allocator = Allocator([_claim()], slices=slices, classes=[failing], allocated=[_held(("s1", "gpu-0"))])
    assert not _same_as_search(allocator, NODE)
    with pytest.raises(AllocationError, match="CEL runtime error"):
        allocator.allocate(NODE)
    # with every device held, the search never evaluates the selector: None, and so says the pre-check
    allocator = Allocator([_claim()], slices=slices, classes=[failing], allocated=[_held(("s1", "gpu-0"), ("s1", "gpu-1"))])
    assert _same_as_search(allocator, NODE)


def test_134_invalid_pool_raises_even_with_every_device_held():
    slices = [_slice("s1", ["gpu-0"], pool="p"), _slice("s2", ["gpu-0"], pool="p")]
    for s in slices:
        s["spec"]["pool"]["resourceSliceCount"] = 2
    allocator = Allocator([_claim()], slices=slices, classes=[GPU_CLASS], allocated=[_held(("p", "gpu-0"))])
    assert not _same_as_search(allocator, NODE)
    with pytest.raises(AllocationError, match="pool p is invalid"):
        allocator.allocate(NODE)
    later = Allocator([_claim()], slices=slices, classes=[GPU_CLASS], allocated=[_held(("p", "gpu-0"))],
                      kubernetes_version="1.35")
    assert _same_as_search(later, NODE)


def test_all_mode_and_unparsable_selectors_disable_the_precheck():
    held = [_held(("s1", "gpu-0"))]
    everything = _claim(allocationMode="All")
    del everything["spec"]["devices"]["requests"][0]["exactly"]["count"]
    allocator = Allocator([everything], slices=[_slice("s1", ["gpu-0"])], classes=[GPU_CLASS], allocated=held)
    assert not _same_as_search(allocator, NODE)
    broken = _slice("net", ["nic-0"], nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In"}]}]})
    allocator = Allocator([_claim()], slices=[_slice("s1", ["gpu-0"]), broken], classes=[GPU_CLASS], allocated=held)
    assert not _same_as_search(allocator, NODE)
    with pytest.raises(AllocationError, match="failed to parse node selector"):
        allocator.allocate(NODE)


def test_an_invalid_claim_raises_on_every_node():
    allocator = Allocator([_claim(class_name="nope")], slices=[_slice("s1", ["gpu-0"])], classes=[GPU_CLASS],
                          allocated=[_held(("s1", "gpu-0"))])
    assert not allocator.rejects(NODE)
    for node in (NODE, OTHER):
        with pytest.raises(AllocationError, match='deviceclass.resource.k8s.io "nope" not found'):
            allocator.allocate(node)


def test_allocate_is_one_allocator_call():
    slices = [_slice("s1", ["gpu-0", "gpu-1"])]
    args = dict(slices=slices, classes=[GPU_CLASS], allocated=[_held(("s1", "gpu-0"))])
    assert allocate([_claim()], node=NODE, **args) == Allocator([_claim()], **args).allocate(NODE)


def test_unknown_versions_fail_when_the_allocator_is_made():
    with pytest.raises(AllocationError, match="modelled for"):
        Allocator([_claim()], slices=[], classes=[], kubernetes_version="1.30")
