"""The allocator's trace (``drawb.alloc.trace``) agrees with its search.

Every device the search allocates passes every stage of the trace for its request, on the upstream
cases and on the generated scenarios; the stages that turn a device away name it with their detail.
"""

from __future__ import annotations

import pytest

from drawb.alloc import AllocationError, Allocator
from drawb.alloc.trace import Stage
from drawb.testing.alloc_scenarios import GATES, generate_many, nvidia_classes
from tests.unit.alloc.test_allocator import DRIVER, GPU_CLASS, NODE, UNMARKED, _claim, _held, _slice, upstream_allocator


def _chosen_pass_the_trace(allocator: Allocator, node: dict | None) -> int:
    """How many allocated devices were checked; fails where the trace turns an allocated device away."""
    try:
        allocations = allocator.search(node)
    except AllocationError:
        return 0
    if allocations is None:
        return 0
    traced = allocator.trace(node, every=True)
    checked = 0
    for claim_i, allocation in enumerate(allocations):
        by_name = {r.name: r for r in traced.requests if r.key[0] == claim_i}
        for result in allocation["devices"]["results"]:
            device_id = (result["driver"], result["pool"], result["device"])
            rejections = by_name[result["request"]].rejections[device_id]
            assert rejections == (), f"{device_id} was allocated for {result['request']}, but the trace says {rejections}"
            checked += 1
    return checked


@pytest.mark.parametrize(("version", "impl", "case"), UNMARKED)
def test_every_device_the_upstream_case_allocates_passes_the_trace(version, impl, case):
    _chosen_pass_the_trace(upstream_allocator(version, impl, case), case.get("node"))


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_every_device_allocated_in_the_generated_scenarios_passes_the_trace(version):
    checked = 0
    for scenario in generate_many(40, 0):
        classes = [*nvidia_classes(), *scenario.classes]
        allocator = Allocator(scenario.claims, slices=scenario.slices, classes=classes, allocated=scenario.allocated,
                              kubernetes_version=version, feature_gates=GATES)
        for node in scenario.nodes:
            checked += _chosen_pass_the_trace(allocator, node)
    assert checked >= 25, checked


def _trace(claims, slices, classes=(GPU_CLASS,), allocated=(), every=False, gates=None):
    allocator = Allocator(claims, slices=slices, classes=classes, allocated=allocated, feature_gates=gates)
    return allocator.trace(NODE, every=every).requests[0].rejections


def test_the_first_stage_that_turns_a_device_away_is_in_the_search_order():
    other = {"metadata": {"name": "other"}, "spec": {"selectors": [{"cel": {"expression": "false"}}]}}
    rejections = _trace([_claim(class_name="other")], [_slice("s", ["a"])], classes=(other,),
                        allocated=[_held(("s", "a"))])
    assert [r.stage for r in rejections[(DRIVER, "s", "a")]] == [Stage.IN_USE]
    every = _trace([_claim(class_name="other")], [_slice("s", ["a"])], classes=(other,),
                   allocated=[_held(("s", "a"))], every=True)
    assert [(r.stage, r.code) for r in every[(DRIVER, "s", "a")]] == [
        (Stage.IN_USE, "Allocated"), (Stage.CLASS_SELECTORS, "NotSelected")]
    assert every[(DRIVER, "s", "a")][0].users == ((DRIVER, "s", "a"),)


def test_a_selector_error_is_a_rejection_with_the_schedulers_message():
    claim = _claim(selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].missing == 1'}}])
    (rejection,) = _trace([claim], [_slice("s", ["a"])])[(DRIVER, "s", "a")]
    assert (rejection.stage, rejection.code, rejection.error) == (Stage.REQUEST_SELECTORS, "SelectorError", True)
    assert "claim ns/c: selector #0" in rejection.detail and "CEL runtime error" in rejection.detail


def test_an_untolerated_taint_is_named():
    slice_ = _slice("s", ["a"])
    slice_["spec"]["devices"][0]["taints"] = [{"key": "broken", "value": "yes", "effect": "NoSchedule"}]
    taints_on = {"DRADeviceTaints": True}
    assert _trace([_claim()], [slice_])[(DRIVER, "s", "a")] == ()  # the gate is off by default at 1.34
    (rejection,) = _trace([_claim()], [slice_], gates=taints_on)[(DRIVER, "s", "a")]
    assert (rejection.stage, rejection.detail) == (Stage.TAINTS, "taint broken=yes:NoSchedule not tolerated")
    assert rejection.taints == ({"key": "broken", "value": "yes", "effect": "NoSchedule"},)
    tolerated = _claim(tolerations=[{"key": "broken", "operator": "Exists"}])
    assert _trace([tolerated], [slice_], gates=taints_on)[(DRIVER, "s", "a")] == ()


def test_a_device_without_the_constrained_attribute_is_turned_away_at_the_constraint():
    claim = _claim(count=2)
    claim["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    slice_ = _slice("s", ["a", "b"])
    slice_["spec"]["devices"][0]["attributes"]["model"] = {"string": "x"}
    rejections = _trace([claim], [slice_])
    assert rejections[(DRIVER, "s", "a")] == ()
    (rejection,) = rejections[(DRIVER, "s", "b")]
    assert (rejection.stage, rejection.code) == (Stage.CONSTRAINT, "AttributeMissing")
    assert rejection.detail == f"matchAttribute {DRIVER}/model: the device has no such attribute"


def test_an_invalid_claim_raises_from_the_trace_as_from_the_search():
    allocator = Allocator([_claim(class_name="missing")], slices=[_slice("s", ["a"])], classes=[GPU_CLASS])
    with pytest.raises(AllocationError) as traced:
        allocator.trace(NODE)
    with pytest.raises(AllocationError) as searched:
        allocator.search(NODE)
    assert str(traced.value) == str(searched.value)
