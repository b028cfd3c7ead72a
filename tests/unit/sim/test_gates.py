"""The simulated API server's gate-dependent field dropping (kube-apiserver's dropDisabledFields)."""

from __future__ import annotations

import copy

from drawb import versions
from drawb.cluster.sim.gates import GatedFields

DRA_GATES = versions.rules(versions.DEFAULT).field_gates  # the gates whose fields the API server drops


def default_gates(minor: int) -> dict[str, bool]:
    """The defaults of DRA_GATES in Kubernetes 1.<minor>."""
    rules = versions.rules(f"1.{minor}")
    return {gate: rules.gates[gate].default for gate in DRA_GATES}


def drop_disabled_fields(new: dict, old: dict | None, gates: dict[str, bool], minor: str = versions.DEFAULT) -> None:
    GatedFields(versions.rules(minor), gates).drop(new, old)


OFF = dict.fromkeys(DRA_GATES, False)
ON = dict.fromkeys(DRA_GATES, True)


def slice_with(**device) -> dict:
    return {"kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "sharedCounters": [{"name": "c", "counters": {"m": {"value": "1"}}}],
                     "devices": [{"name": "x", **device}]}}


DEVICE = {"taints": [{"key": "k", "effect": "NoSchedule"}], "consumesCounters": [{"counterSet": "c", "counters": {}}],
          "bindsToNode": True, "bindingConditions": ["a"], "allowMultipleAllocations": True,
          "capacity": {"m": {"value": "1", "requestPolicy": {"default": "1"}}}}


def test_every_gated_slice_field_is_dropped_with_its_gate_off_and_kept_with_it_on():
    off, on = slice_with(**copy.deepcopy(DEVICE)), slice_with(**copy.deepcopy(DEVICE))
    drop_disabled_fields(off, None, OFF)
    drop_disabled_fields(on, None, ON)
    assert "sharedCounters" not in off["spec"] and off["spec"]["devices"][0] == {"name": "x", "capacity": {"m": {"value": "1"}}}
    assert on == slice_with(**DEVICE)


def test_binding_conditions_need_device_status_too():
    obj = slice_with(bindsToNode=True, bindingConditions=["a"])
    drop_disabled_fields(obj, None, {**ON, "DRAResourceClaimDeviceStatus": False})
    assert "bindingConditions" not in obj["spec"]["devices"][0]


def test_an_update_keeps_fields_the_stored_object_already_uses():
    stored = slice_with(taints=[{"key": "k", "effect": "NoSchedule"}])
    new = copy.deepcopy(stored)
    drop_disabled_fields(new, stored, OFF)
    assert new["spec"]["devices"][0]["taints"] and "sharedCounters" in new["spec"]


def test_claims_lose_first_available_admin_access_and_capacity_but_not_distinct_attribute():
    claim = {"kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {
        "requests": [{"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "g", "capacity": {}}]},
                     {"name": "b", "exactly": {"deviceClassName": "g", "adminAccess": True, "capacity": {}}}],
        "constraints": [{"distinctAttribute": "d/uuid"}]}}}
    drop_disabled_fields(claim, None, OFF)
    assert claim["spec"]["devices"] == {"requests": [{"name": "a"}, {"name": "b", "exactly": {"deviceClassName": "g"}}],
                                        "constraints": [{"distinctAttribute": "d/uuid"}]}


def test_class_extended_resource_name_and_the_134_defaults():
    cls = {"kind": "DeviceClass", "metadata": {"name": "g"}, "spec": {"extendedResourceName": "nvidia.com/gpu"}}
    drop_disabled_fields(cls, None, default_gates(34))
    assert cls["spec"] == {}
    assert {g for g, on in default_gates(34).items() if on} == {
        "DRAAdminAccess", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus"}
    assert all(default_gates(36).values()) and versions.rules("1.34").gate_values({"DRAExtendedResource": True})["DRAExtendedResource"]


def test_slices_drawb_builds_hold_no_gated_field_so_seeding_skips_the_drop():
    # SimCluster seeds a scenario's slices without dropping gated fields when Scenario.slices_as_built says
    # they come from drawb.gpu.driver; with every gate off nothing may be left to drop in them.
    from drawb.cluster.sim.scenarios import build_scenario

    for name in ("default", "synthetic:8x200"):
        scenario = build_scenario(name)
        assert scenario.slices_as_built
        for obj in scenario.resource_slices:
            dropped = copy.deepcopy(obj)
            drop_disabled_fields(dropped, None, OFF)
            assert dropped == obj, obj["metadata"]["name"]


NEWEST = versions.rules(versions.newest())
NEWEST_OFF = dict.fromkeys(NEWEST.gates, False)


def newer_slice() -> dict:
    """A slice with every field the gates added after the first known minor guard (as the newest minor names them)."""
    return {"kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "partitionTypeAttribute": "d/type", "skipNodeOperations": ["Prepare"],
                     "sharedCounters": [{"name": "c", "counters": {"m": {"value": "1"}}}],
                     "devices": [{"name": "x", "attributes": {"cores": {"ints": [1, 2]}, "model": {"string": "h"}},
                                  "nodeAllocatableResources": {"cpu": {"allocationMultiplier": "1"}},
                                  "consumesCounters": [{"counterSet": "c", "counters": {}, "compatibilityGroups": ["a"]}]}]}}


def test_the_newer_gates_fields_go_with_their_gate_off_and_stay_with_it_on():
    off, on = newer_slice(), newer_slice()
    drop_disabled_fields(off, None, {**NEWEST_OFF, "DRAPartitionableDevices": True}, versions.newest())
    drop_disabled_fields(on, None, dict.fromkeys(NEWEST.gates, True), versions.newest())
    assert on == newer_slice()
    assert "partitionTypeAttribute" not in off["spec"] and "skipNodeOperations" not in off["spec"]
    assert off["spec"]["devices"][0] == {"name": "x", "attributes": {"cores": {}, "model": {"string": "h"}},
                                         "consumesCounters": [{"counterSet": "c", "counters": {}}]}


def test_list_valued_attributes_follow_dra_list_type_attributes_alone():
    for on in (True, False):
        obj = slice_with(attributes={"cores": {"ints": [1]}, "names": {"strings": ["a"]}})
        drop_disabled_fields(obj, None, {**NEWEST_OFF, "DRAListTypeAttributes": on}, versions.newest())
        assert bool(obj["spec"]["devices"][0]["attributes"]["cores"]) is on
        assert bool(obj["spec"]["devices"][0]["attributes"]["names"]) is on


def test_an_update_keeps_list_valued_attributes_the_stored_slice_used():
    stored = slice_with(attributes={"cores": {"ints": [1]}})
    new = copy.deepcopy(stored)
    drop_disabled_fields(new, stored, NEWEST_OFF, versions.newest())
    assert new["spec"]["devices"][0]["attributes"]["cores"] == {"ints": [1]}


def claim() -> dict:
    return {"kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {
        "requests": [{"name": "a", "exactly": {"deviceClassName": "g", "tolerations": [{"operator": "Exists"}],
                                               "derivedAttributes": [{"name": "x"}]}}],
        "constraints": [{"distinctAttribute": "d/uuid"}]}}}


def test_tolerations_and_distinct_attribute_are_dropped_from_the_minor_that_drops_them():
    for minor in versions.known():
        rules = versions.rules(minor)
        obj = claim()
        drop_disabled_fields(obj, None, dict.fromkeys(rules.gates, False), minor)
        exactly, constraint = obj["spec"]["devices"]["requests"][0]["exactly"], obj["spec"]["devices"]["constraints"][0]
        assert ("tolerations" in exactly) is not rules.has("api.tolerations_gated"), minor
        assert ("distinctAttribute" in constraint) is not rules.has("api.distinct_attribute_gated"), minor
        assert "derivedAttributes" not in exactly
        kept = claim()
        drop_disabled_fields(kept, None, dict.fromkeys(rules.gates, True), minor)
        assert kept == claim() or "DRADerivedAttributes" not in rules.gates
