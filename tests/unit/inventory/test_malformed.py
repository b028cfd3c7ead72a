"""Malformed input: a clear problem names the object and field; nothing else in the frame is lost."""

from __future__ import annotations

import copy

import pytest

from drawb.inventory import InventoryError, device_frame
from tests.conftest import load_fixture


@pytest.fixture()
def slices():
    return copy.deepcopy(load_fixture("resourceslices.yaml"))


def _slice(slices, pool, driver="gpu.nvidia.com"):
    return next(s for s in slices if s["spec"]["pool"]["name"] == pool and s["spec"]["driver"] == driver)


def _rows(frame):
    return set(zip(frame["driver"], frame["pool"], frame["device"]))


def test_capacity_that_is_not_a_quantity(slices):
    clean = device_frame(slices)
    s = _slice(slices, "a100-sxm-node-01")
    s["spec"]["devices"][3]["capacity"]["memory"]["value"] = "40GB"
    name, device = s["metadata"]["name"], s["spec"]["devices"][3]["name"]
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert problem.startswith(f"ResourceSlice '{name}' spec.devices[3].capacity")
    assert "'40GB' is not a quantity" in problem
    assert _rows(frame) == _rows(clean)
    row = frame.set_index(["pool", "device"]).loc[("a100-sxm-node-01", device)]
    assert row["capacity:gpu.nvidia.com/memory"] is None or str(row["capacity:gpu.nvidia.com/memory"]) == "<NA>"
    assert row["gpu.nvidia.com/productName"] == "NVIDIA A100-SXM4-40GB"
    with pytest.raises(InventoryError, match=r"spec.devices\[3\].capacity.*'40GB' is not a quantity"):
        device_frame(slices, strict=True)


def test_attributes_not_a_map(slices):
    clean = device_frame(slices)
    s = _slice(slices, "hgx-h200-03")
    s["spec"]["devices"][2]["attributes"] = ["productName", "NVIDIA H200"]
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert f"ResourceSlice '{s['metadata']['name']}' spec.devices[2].attributes: not a map" in problem
    assert _rows(frame) == _rows(clean)
    device = s["spec"]["devices"][2]["name"]
    row = frame.set_index(["pool", "device"]).loc[("hgx-h200-03", device)]
    assert str(row["gpu.nvidia.com/productName"]) == "<NA>"
    assert row["capacity:gpu.nvidia.com/memory"] == "143771Mi"  # the rest of the device is kept
    with pytest.raises(InventoryError, match="not a map"):
        device_frame(slices, strict=True)


def test_attribute_with_two_value_types(slices):
    s = _slice(slices, "dgx-h100-02")
    s["spec"]["devices"][0]["attributes"]["productName"] = {"string": "H100", "int": 3}
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert "spec.devices[0].attributes.productName: must have exactly one of" in problem
    assert "has int, string" in problem
    assert len(frame) == len(device_frame(load_fixture("resourceslices.yaml")))


def test_attribute_value_of_the_wrong_type(slices):
    s = _slice(slices, "a100-sxm-node-01", driver="compute-domain.nvidia.com")
    s["spec"]["devices"][0]["attributes"]["id"] = {"int": "0"}
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert "spec.devices[0].attributes.id.int: '0' is not a int" in problem
    assert frame["compute-domain.nvidia.com/id"].dtype == "Int64"
    assert frame["compute-domain.nvidia.com/id"].notna().sum() == 7


def test_same_attribute_with_different_types_on_two_devices(slices):
    s = _slice(slices, "a100-sxm-node-01", driver="compute-domain.nvidia.com")
    s["spec"]["devices"][1]["attributes"]["id"] = {"string": "zero"}
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert "spec.devices[1].attributes.id: string value 'zero'" in problem
    assert "as int" in problem
    assert frame.attrs["drawb"]["attributes"]["compute-domain.nvidia.com/id"] == "int"


def test_missing_driver_loses_only_that_slice(slices):
    clean = device_frame(slices)
    s = _slice(slices, "gke-dra-l4-pool-5c7e8f21-q9zt")
    del s["spec"]["driver"]
    frame = device_frame(slices)
    (problem,) = frame.attrs["drawb"]["problems"]
    assert problem.startswith(f"ResourceSlice '{s['metadata']['name']}' spec.driver: missing")
    lost = {r for r in _rows(clean) if r[0] == "gpu.nvidia.com" and r[1] == "gke-dra-l4-pool-5c7e8f21-q9zt"}
    assert len(lost) == 4
    assert _rows(frame) == _rows(clean) - lost
    with pytest.raises(InventoryError, match="spec.driver"):
        device_frame(slices, strict=True)


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d.pop("name"), "spec.devices[1].name: missing"),
        (lambda d: d.__setitem__("capacity", "80Gi"), "spec.devices[1].capacity: not a map"),
        (lambda d: d["capacity"].__setitem__("memory", {"value": 80}), "capacity.memory.value: 80 is not a quantity"),
        (lambda d: d["attributes"].__setitem__("type", "gpu"), "attributes.type: not an object"),
        (lambda d: d["attributes"].__setitem__("type", {"float": 1.5}), "unknown value type 'float'"),
        (lambda d: d.__setitem__("allowMultipleAllocations", "yes"), "allowMultipleAllocations: 'yes' is not"),
    ],
)
def test_bad_device_fields_are_reported_with_their_path(slices, mutate, fragment):
    s = _slice(slices, "hgx-h200-03")
    mutate(s["spec"]["devices"][1])
    frame = device_frame(slices)
    problems = frame.attrs["drawb"]["problems"]
    assert len(problems) == 1 and fragment in problems[0], problems
    assert problems[0].startswith(f"ResourceSlice '{s['metadata']['name']}' ")
    others = frame[frame["pool"] != "hgx-h200-03"]
    clean = device_frame(load_fixture("resourceslices.yaml"))
    assert others.reset_index(drop=True).equals(clean[clean["pool"] != "hgx-h200-03"].reset_index(drop=True))


def test_unknown_fields_are_ignored(slices):
    clean = device_frame(slices)
    s = _slice(slices, "hgx-h200-03")
    s["spec"]["futureField"] = {"x": 1}
    s["spec"]["devices"][0]["someNewField"] = [1, 2]
    s["futureTopLevel"] = True
    frame = device_frame(slices)
    assert frame.attrs["drawb"]["problems"] == []
    assert frame.equals(clean)


def test_not_a_slice_at_all(slices):
    frame = device_frame(slices + ["oops", {"metadata": {"name": "empty"}}])
    assert frame.attrs["drawb"]["problems"] == [
        "ResourceSlice '<item 8>': not an object but str; left out",
        "ResourceSlice 'empty' spec: missing or not an object; slice left out",
    ]
    assert len(frame) == 46
