"""Kubernetes' own allocator test table (``structured/internal/allocatortesting``), as data.

``cases/upstream-<version>.json`` holds every TestAllocator case of that release of
k8s.io/dynamic-resource-allocation with the result each implementation (stable, incubating,
experimental) produced while the upstream test passed; ``upstream/generate`` rebuilds them. Each
case runs here against the same implementation, with the same features, through drawb.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from drawb.alloc import AllocationError, allocate
from drawb.alloc.allocator import allocate_with
from drawb.alloc.state import AllocatedState
from drawb.alloc.pools import random_pool_order
from drawb.alloc.versions import Flavor, choose, gate_values
from drawb.api.quantity import Quantity
from drawb.versions import parse

CASES = pathlib.Path(__file__).parent / "cases"
FIXED_SHARE_ID = "<share-id>"

# Go feature field -> the gates that turn it on (for driving the public API).
FEATURE_GATES = {
    "AdminAccess": ["DRAAdminAccess"],
    "PrioritizedList": ["DRAPrioritizedList"],
    "PartitionableDevices": ["DRAPartitionableDevices"],
    "DeviceTaints": ["DRADeviceTaints"],
    "ConsumableCapacity": ["DRAConsumableCapacity"],
    "DeviceBinding": ["DRADeviceBindingConditions"],
    "DeviceStatus": ["DRAResourceClaimDeviceStatus"],
    "DeviceBindingAndStatus": ["DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"],
    "ListTypeAttributes": ["DRAListTypeAttributes"],
    "FractionalCapacityRange": ["DRAFractionalCapacityRange"],
    "OptionalNodeOperations": ["DRAOptionalNodeOperations"],
    "DerivedAttributes": ["DRADerivedAttributes"],
    "CompatibilityGroups": ["DRADeviceCompatibilityGroups"],
}
ALL_GATES = sorted({g for gates in FEATURE_GATES.values() for g in gates})

# Where the upstream test harness differs from a real scheduler, and drawb speaks as the scheduler.
# The test's class lister answers NotFound for an empty GroupResource; the scheduler's informer
# lister names the resource.
HARNESS_MESSAGES = [(':  "not found" not found', ': deviceclass.resource.k8s.io "{class}" not found')]


# Errors wrapping ErrFailedAllocationOnNode (1.35+) fail only the node: the scheduler reports the
# node as unschedulable, and drawb's allocate returns None.
NODE_FAILURES = ("invalid resource pools were encountered",)


# Cases whose inputs cannot survive JSON (the form every object drawb sees has): the upstream test
# builds them in memory. They are expected to fail here (strict: should one pass, the mark is stale).
TRANSCRIPTION_LIMITS = {
    ("1.37", "consumable-capacity-requests-are-not-modified"):
        "quantities of 1e21 marshal as \"1\" (apimachinery's Quantity.MarshalJSON drops the exponent)",
    ("1.37", "list-attributes-distinct-constaint-with-empty-or-unknown-type"):
        "an empty list attribute (strings: []) marshals as {} (omitempty), like an attribute of unknown type; "
        "1.37 names the device that failed, and that is the other one",
}  # fmt: skip


def _load() -> list[tuple[str, str, dict, str]]:
    params = []
    for path in sorted(CASES.glob("upstream-*.json")):
        data = json.loads(path.read_text())
        for case in data["cases"]:
            marks = []
            limit = TRANSCRIPTION_LIMITS.get((data["version"], case["name"]))
            if limit:
                marks = [pytest.mark.xfail(strict=True, reason=limit)]
            release = "v1." + data["module"].rsplit(" v0.", 1)[1]  # the Kubernetes release of the module's tag
            for impl in sorted(case["outcomes"]):
                case_id = f"{data['version']}-{impl}-{case['name']}"
                params.append(pytest.param(release, impl, case, id=case_id, marks=marks))
    return params


PARAMS = _load()


def _features(case: dict) -> frozenset[str]:
    return frozenset(k for k, v in (case.get("features") or {}).items() if v)


def _device_id(text: str) -> tuple[str, str, str]:
    driver, rest = text.split("/", 1)
    pool, device = rest.rsplit("/", 1)
    return driver, pool, device


def _shared_id(text: str) -> tuple[str, str, str, str]:
    driver, rest = text.split("/", 1)
    pool, device, share = rest.rsplit("/", 2)
    return driver, pool, device, share


def _state(case: dict) -> AllocatedState:
    state = AllocatedState()
    state.allocated = {_device_id(d) for d in case.get("allocated") or []}
    state.shared = {_shared_id(d) for d in case.get("shared") or []}
    for device, consumed in (case.get("capacity") or {}).items():
        state.capacity[_device_id(device)] = {k: Quantity.parse(v) for k, v in consumed.items()}
    return state


def _gates(minor: int, features: frozenset[str]) -> dict[str, bool]:
    """The case's features as gate values, every other gate of the version off."""
    on = {g for f in features for g in FEATURE_GATES.get(f, [])}
    return {g: g in on for g in ALL_GATES if g in gate_values(minor, None)}


def _quantity(text: str) -> str:
    return Quantity.parse(text).canonical()


def _selector(selector: dict | None) -> Any:
    if not selector:
        return None
    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        norm = {}
        for kind in ("matchExpressions", "matchFields"):
            reqs = [
                (r.get("key"), r.get("operator"), tuple(sorted(r.get("values") or []))) for r in term.get(kind) or []
            ]
            norm[kind] = sorted(reqs)
        terms.append(json.dumps(norm, sort_keys=True))
    return sorted(terms)


def _result(result: dict) -> str:
    norm = {k: v for k, v in result.items() if v not in (None, [], {}, False)}
    if "shareID" in norm:
        norm["shareID"] = FIXED_SHARE_ID
    if "consumedCapacity" in norm:
        norm["consumedCapacity"] = {k: _quantity(v) for k, v in norm["consumedCapacity"].items()}
    return json.dumps(norm, sort_keys=True)


def normalize(allocations: list[dict] | None) -> Any:
    """What the upstream matchers compare: results in any order, selector terms and values as sets."""
    if allocations is None:
        return None
    out = []
    for allocation in allocations:
        devices = allocation.get("devices") or {}
        config = [{k: v for k, v in c.items() if v not in (None, [])} for c in devices.get("config") or []]
        out.append({
            "results": sorted(_result(r) for r in devices.get("results") or []),
            "config": config,
            "nodeSelector": _selector(allocation.get("nodeSelector")),
        })  # fmt: skip
    return sorted(out, key=lambda a: json.dumps(a, sort_keys=True))


def expected_error(case: dict, outcome: dict) -> str:
    message = outcome["error"]
    for go, drawb in HARNESS_MESSAGES:
        if go in message:
            class_name = message.split("could not retrieve device class ", 1)[1].split(":", 1)[0]
            message = message.replace(go, drawb.format(**{"class": class_name}))
    return message


def run(version: str, impl: str, case: dict, public: bool = False, stats: dict | None = None):
    minor = int(version.split(".")[1])
    features = _features(case)
    kwargs = {"node": case.get("node"), "slices": case.get("slices") or [], "classes": case.get("classes") or []}
    if public:
        claims = []
        for device in case.get("allocated") or []:
            driver, pool, name = _device_id(device)
            claims.append({"status": {"allocation": {"devices": {"results": [{"driver": driver, "pool": pool, "device": name}]}}}})
        return allocate(case.get("claims") or [], allocated=claims, kubernetes_version=version,
                        feature_gates=_gates(minor, features), **kwargs)  # fmt: skip
    gates = tuple(sorted(_gates(minor, features).items()))
    flavor = Flavor(minor, impl, features, gates, parse(version).patch)
    return allocate_with(flavor, case.get("claims") or [], state=_state(case), stats=stats, **kwargs)


@pytest.mark.parametrize(("version", "impl", "case"), PARAMS)
def test_upstream_case(version: str, impl: str, case: dict) -> None:
    outcome = case["outcomes"][impl]
    if outcome["error"] in NODE_FAILURES:
        assert run(version, impl, case) is None
        return
    if outcome["error"] is not None:
        with pytest.raises(AllocationError) as info:
            run(version, impl, case)
        assert str(info.value) == expected_error(case, outcome)
        return
    stats: dict = {}
    assert normalize(run(version, impl, case, stats=stats)) == normalize(outcome["results"])
    if case.get("expectNumAllocateOneInvocations") and outcome.get("numAllocateOneInvocations") is not None:
        assert stats["invocations"] == outcome["numAllocateOneInvocations"]


def _public_cases():
    for param in PARAMS:
        version, impl, case = param.values
        minor = int(version.split(".")[1])
        features = _features(case)
        try:
            chosen = choose(minor, features)
        except AllocationError:
            continue
        if chosen == impl and not case.get("capacity") and not case.get("shared") and not (case.get("claims") is None):
            yield param


@pytest.mark.parametrize(("version", "impl", "case"), list(_public_cases()))
def test_upstream_case_through_allocate(version: str, impl: str, case: dict) -> None:
    """The public contract with the case's gates picks the same implementation and gives the same answer."""
    outcome = case["outcomes"][impl]
    if outcome["error"] in NODE_FAILURES:
        assert run(version, impl, case, public=True) is None
        return
    if outcome["error"] is not None:
        with pytest.raises(AllocationError) as info:
            run(version, impl, case, public=True)
        assert str(info.value) == expected_error(case, outcome)
        return
    assert normalize(run(version, impl, case, public=True)) == normalize(outcome["results"])


def _order_cases():
    for param in PARAMS:
        version, impl, case = param.values
        minor = int(version.split(".")[1])
        if random_pool_order(Flavor(minor, impl, frozenset(), ())) and len({(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in case.get("slices") or []}) > 1:
            yield param


@pytest.mark.parametrize(("version", "impl", "case"), list(_order_cases()))
def test_upstream_expectation_does_not_depend_on_random_pool_order(version: str, impl: str, case: dict) -> None:
    """Where Go tries pools in map order, the upstream answer must not depend on it: drawb gets the
    same answer with its pool order reversed (cases where it would are listed in the data's
    ``poolOrderDependent``; none are, so far)."""
    minor = int(version.split(".")[1])
    features = _features(case)
    flavor = Flavor(minor, impl, features, tuple(sorted(_gates(minor, features).items())))
    kwargs = {"node": case.get("node"), "slices": case.get("slices") or [], "classes": case.get("classes") or []}

    def outcome(reverse: bool) -> Any:
        try:
            return normalize(allocate_with(flavor, case.get("claims") or [], state=_state(case),
                                           reverse_random_order=reverse, **kwargs))  # fmt: skip
        except AllocationError as err:
            return str(err)

    if case.get("poolOrderDependent"):
        assert outcome(True) != outcome(False)
    else:
        assert outcome(True) == outcome(False)
