"""DeviceInventory: after any sequence of slice events, the frame equals a full rebuild."""

from __future__ import annotations

import copy
from unittest import mock

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from drawb.inventory import _overwrite, device_frame
from drawb.inventory.live import DeviceInventory
from tests.conftest import load_fixture

MAIN = load_fixture("resourceslices.yaml")
DYNMIG = load_fixture("resourceslices-dynamic-mig-h100.yaml")
LEGACY = load_fixture("resourceslices-legacy-v25.3-v1beta1.yaml")


def assert_matches_rebuild(inv: DeviceInventory) -> None:
    expected = device_frame(inv.slices())
    got = inv.frame
    pd.testing.assert_frame_equal(got, expected)
    for key in ("attributes", "lists", "capacities"):
        assert got.attrs["drawb"][key] == expected.attrs["drawb"][key], key
    assert sorted(got.attrs["drawb"]["problems"]) == sorted(expected.attrs["drawb"]["problems"])


def test_initial_frame_is_device_frame():
    inv = DeviceInventory(MAIN + DYNMIG)
    assert_matches_rebuild(inv)
    assert len(inv.frame) == 46 + 208


def test_update_add_delete():
    inv = DeviceInventory(MAIN)
    s = copy.deepcopy(MAIN[3])
    s["spec"]["devices"][0]["attributes"]["productName"] = {"string": "NVIDIA H200 NVL"}
    inv.upsert(s)
    assert_matches_rebuild(inv)
    assert (inv.frame["gpu.nvidia.com/productName"] == "NVIDIA H200 NVL").sum() == 1
    s = copy.deepcopy(s)
    del s["spec"]["devices"][2:]
    inv.apply("MODIFIED", s)
    assert_matches_rebuild(inv)
    inv.apply("DELETED", MAIN[0])
    assert_matches_rebuild(inv)
    assert "a100-sxm-node-01" not in set(inv.frame.loc[inv.frame["driver"] == "gpu.nvidia.com", "pool"])
    inv.apply("ADDED", MAIN[0])
    assert_matches_rebuild(inv)
    assert len(inv.frame) == 46 - 6


def test_new_and_vanishing_columns():
    inv = DeviceInventory(MAIN[:1])
    assert "gpu.nvidia.com/profile" not in inv.frame.columns
    inv.upsert(MAIN[1])  # the H100 node brings MIG attributes and capacities
    assert "gpu.nvidia.com/profile" in inv.frame.columns
    assert "capacity:gpu.nvidia.com/multiprocessors:value" in inv.frame.columns
    assert_matches_rebuild(inv)
    inv.delete(MAIN[1]["metadata"]["name"])
    assert "gpu.nvidia.com/profile" not in inv.frame.columns
    assert "capacity:gpu.nvidia.com/multiprocessors" not in inv.frame.columns
    assert_matches_rebuild(inv)


def test_fractional_capacity_coming_and_going():
    a, b = copy.deepcopy(MAIN[0]), copy.deepcopy(MAIN[3])
    a["spec"]["devices"][0]["capacity"]["shares"] = {"value": "500m"}
    b["spec"]["devices"][0]["capacity"]["shares"] = {"value": "2"}
    inv = DeviceInventory([b])
    assert inv.frame["capacity:gpu.nvidia.com/shares:value"].dtype == "Int64"
    inv.upsert(a)
    assert inv.frame["capacity:gpu.nvidia.com/shares:value"].dtype == "float64"
    assert_matches_rebuild(inv)
    inv.delete(a["metadata"]["name"])
    assert inv.frame["capacity:gpu.nvidia.com/shares:value"].dtype == "Int64"
    assert_matches_rebuild(inv)


def test_generation_change_swaps_the_pool():
    inv = DeviceInventory(DYNMIG)
    newer = copy.deepcopy(DYNMIG[2])
    newer["metadata"]["name"] = "gen2-slice"
    newer["spec"]["pool"]["generation"] = 2
    inv.upsert(newer)
    assert set(inv.frame["slice"]) == {"gen2-slice"}
    assert not inv.frame["pool_complete"].any()
    assert_matches_rebuild(inv)
    inv.delete("gen2-slice")
    assert len(inv.frame) == 208 and inv.frame["pool_complete"].all()
    assert_matches_rebuild(inv)


def test_problems_follow_their_slice():
    inv = DeviceInventory(MAIN)
    bad = copy.deepcopy(MAIN[0])
    bad["spec"]["devices"][1]["capacity"]["memory"]["value"] = "forty"
    inv.upsert(bad)
    assert len(inv.frame.attrs["drawb"]["problems"]) == 1
    assert_matches_rebuild(inv)
    inv.upsert(MAIN[0])
    assert inv.frame.attrs["drawb"]["problems"] == []
    broken = copy.deepcopy(MAIN[2])
    del broken["spec"]["driver"]
    inv.upsert(broken)
    assert_matches_rebuild(inv)
    assert "spec.driver" in inv.frame.attrs["drawb"]["problems"][0]


def _mutations(slices):
    """Hypothesis strategy: (event, slice) pairs made from fixture slices with small edits."""
    base = st.sampled_from(slices)

    def edit(s, kind, n):
        s = copy.deepcopy(s)
        devices = s["spec"].get("devices", [])
        if kind == "drop" and devices:
            del devices[n % len(devices)]
        elif kind == "attr" and devices:
            devices[n % len(devices)].setdefault("attributes", {})["extra"] = {"int": n}
        elif kind == "cap" and devices:
            devices[n % len(devices)].setdefault("capacity", {})["shares"] = {"value": f"{n}m"}
        elif kind == "gen":
            s["spec"]["pool"]["generation"] += n % 3
        elif kind == "rename":
            s["metadata"]["name"] += f"-{n}"
        elif kind == "bad" and devices:
            devices[n % len(devices)]["capacity"] = {"memory": {"value": "lots"}}
        elif kind == "values" and devices:  # the common update: values change, the rows stay
            device = devices[n % len(devices)]
            for attribute in (device.get("attributes") or {}).values():
                if "string" in attribute:
                    attribute["string"] += f"-{n % 3}"
                elif "int" in attribute:
                    attribute["int"] = n % 4
            for quantity in (device.get("capacity") or {}).values():
                quantity["value"] = f"{n % 5}Gi"
        elif kind == "unset" and devices:
            device = devices[n % len(devices)]
            for key in sorted(device.get("attributes") or {})[n % 3:n % 3 + 1]:
                del device["attributes"][key]
        elif kind == "taint" and devices:
            devices[n % len(devices)]["taints"] = [{"key": f"k{n % 2}", "effect": "NoSchedule"}]
        elif kind == "multiple" and devices:
            devices[n % len(devices)]["allowMultipleAllocations"] = bool(n % 2)
        return s

    return st.tuples(
        st.sampled_from(["MODIFIED", "MODIFIED", "DELETED"]),
        st.builds(edit, base, st.sampled_from(["none", "drop", "attr", "cap", "gen", "rename", "bad", "values",
                                               "values", "unset", "taint", "multiple"]),
                  st.integers(0, 40)),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_mutations(MAIN + DYNMIG[:3] + LEGACY), st.booleans()), max_size=12))
def test_any_event_sequence_matches_rebuild_and_leaves_frames_handed_out_alone(events):
    handed_out = []
    with mock.patch.object(_overwrite, "CHUNK_ROWS", 4):  # rows overwritten across string chunks
        inv = DeviceInventory(MAIN + DYNMIG[:3])
        for (event, obj), look in events:
            inv.apply(event, obj)
            if look:
                frame = inv.frame
                handed_out.append((frame, frame.copy(deep=True)))
                assert_matches_rebuild(inv)
        assert_matches_rebuild(inv)
    for frame, as_it_was in handed_out:
        pd.testing.assert_frame_equal(frame, as_it_was)


def test_changing_a_returned_frame_leaves_the_inventory_alone():
    inv = DeviceInventory(MAIN)
    frame = inv.frame
    frame.loc[0, "gpu.nvidia.com/productName"] = "changed"
    frame.loc[0, "taints"] = "x"
    frame.loc[0, "capacity:gpu.nvidia.com/memory:value"] = 1
    assert_matches_rebuild(inv)
    inv.upsert(MAIN[1])
    assert_matches_rebuild(inv)


def test_other_events_and_unknown_names_are_ignored():
    inv = DeviceInventory(MAIN)
    before = inv.frame
    inv.apply("BOOKMARK", {"metadata": {"resourceVersion": "9"}})
    inv.delete("no-such-slice")
    pd.testing.assert_frame_equal(inv.frame, before)


def test_an_attribute_retyped_by_a_later_slice_keeps_the_first_type_and_reports():
    inv = DeviceInventory(MAIN)
    s = copy.deepcopy(MAIN[-1])
    s["metadata"]["name"] = "other-cd"
    s["spec"]["pool"]["name"] = "other-pool"
    for device in s["spec"]["devices"]:
        device["attributes"]["id"] = {"string": "zero"}
    inv.upsert(s)
    assert inv.frame.attrs["drawb"]["attributes"]["compute-domain.nvidia.com/id"] == "int"
    problems = inv.frame.attrs["drawb"]["problems"]
    assert [p.split(":")[0] for p in problems] == [
        "ResourceSlice 'other-cd' device 'channel-0'", "ResourceSlice 'other-cd' device 'daemon-0'"]
    assert "compute-domain.nvidia.com/id is string here but int on other devices" in problems[0]
    assert inv.frame.set_index("slice").loc["other-cd", "compute-domain.nvidia.com/id"].isna().all()
    assert inv.frame["compute-domain.nvidia.com/id"].notna().sum() == 8
