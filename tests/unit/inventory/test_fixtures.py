"""device_frame over the research fixtures: main, dynamic MIG (counters) and legacy v1beta1."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from drawb.inventory import device_frame
from tests.conftest import load_fixture

MAIN = "resourceslices.yaml"
DYNMIG = "resourceslices-dynamic-mig-h100.yaml"
LEGACY = "resourceslices-legacy-v25.3-v1beta1.yaml"


def _devices(slices: list[dict]) -> dict[tuple[str, str, str], dict]:
    """Every device of the input keyed by (driver, pool, device), v1beta1 `basic:` unwrapped."""
    out = {}
    for s in slices:
        spec = s["spec"]
        for dev in spec.get("devices", []):
            body = dev.get("basic", dev)
            out[(spec["driver"], spec["pool"]["name"], dev["name"])] = body
    return out


@pytest.mark.parametrize("name", [MAIN, DYNMIG, LEGACY])
def test_one_row_per_device(name):
    slices = load_fixture(name)
    frame = device_frame(slices)
    expected = _devices(slices)
    assert len(frame) == len(expected)
    assert set(zip(frame["driver"], frame["pool"], frame["device"])) == set(expected)
    assert frame.attrs["drawb"]["problems"] == []


@pytest.mark.parametrize("name", [MAIN, DYNMIG, LEGACY])
def test_every_attribute_and_capacity_is_in_the_frame(name):
    slices = load_fixture(name)
    frame = device_frame(slices).set_index(["driver", "pool", "device"])
    types = frame.attrs["drawb"]["attributes"]
    for (driver, pool, device), body in _devices(slices).items():
        row = frame.loc[(driver, pool, device)]
        for key, wrapped in body.get("attributes", {}).items():
            column = key if "/" in key else f"{driver}/{key}"
            ((kind, value),) = wrapped.items()
            assert types[column] == kind
            assert row[column] == value
        for key, cap in body.get("capacity", {}).items():
            column = "capacity:" + (key if "/" in key else f"{driver}/{key}")
            assert row[column] == cap["value"]


def test_column_types():
    frame = device_frame(load_fixture(MAIN))
    for column in ["node", "driver", "pool", "slice", "device", "gpu.nvidia.com/productName",
                   "gpu.nvidia.com/driverVersion", "capacity:gpu.nvidia.com/memory"]:
        assert isinstance(frame[column].dtype, pd.StringDtype), column
    assert frame["compute-domain.nvidia.com/id"].dtype == "Int64"
    assert frame["capacity:gpu.nvidia.com/memory:value"].dtype == "Int64"
    assert frame["allow_multiple_allocations"].dtype == "boolean"
    assert frame["pool_complete"].dtype == "boolean"
    types = frame.attrs["drawb"]["attributes"]
    assert types["gpu.nvidia.com/driverVersion"] == "version"
    assert types["gpu.nvidia.com/productName"] == "string"
    assert types["compute-domain.nvidia.com/id"] == "int"
    assert "gpu.nvidia.com/memory" in frame.attrs["drawb"]["capacities"]


def test_capacity_values_are_exact_bytes():
    frame = device_frame(load_fixture(MAIN)).set_index(["pool", "device"])
    h200 = frame.loc[("hgx-h200-03", "gpu-0")]
    assert h200["capacity:gpu.nvidia.com/memory"] == "143771Mi"
    assert h200["capacity:gpu.nvidia.com/memory:value"] == 143771 * 2**20
    a100 = frame.loc[("a100-sxm-node-01", "gpu-0")]
    assert a100["capacity:gpu.nvidia.com/memory:value"] == 40 * 2**30


def test_main_fixture_shape():
    frame = device_frame(load_fixture(MAIN))
    gpu = frame[frame["driver"] == "gpu.nvidia.com"]
    assert (gpu["gpu.nvidia.com/type"] == "mig").sum() == 14
    assert len(gpu) == 38
    assert set(frame["node"]) == set(frame["pool"])
    assert frame["pool_complete"].all()
    # unqualified keys of the two drivers land in different columns
    cd = frame[frame["driver"] == "compute-domain.nvidia.com"]
    assert cd["gpu.nvidia.com/type"].isna().all()
    assert set(cd["compute-domain.nvidia.com/type"]) == {"channel", "daemon"}


def test_dynamic_mig_keeps_counters_and_the_counter_slice():
    slices = load_fixture(DYNMIG)
    frame = device_frame(slices)
    assert len(frame) == 208
    assert frame["pool_complete"].all()
    assert frame["consumes_counters"].map(lambda c: isinstance(c, list) and len(c) == 1).all()
    first = frame.set_index("device").loc["gpu-0", "consumes_counters"][0]
    assert first["counterSet"] == "gpu-0-counter-set"
    # the counters-only slice contributes no rows
    counter_slice = slices[0]["metadata"]["name"]
    assert "devices" not in slices[0]["spec"] and counter_slice not in set(frame["slice"])


def test_legacy_v1beta1_basic_is_read_as_v1():
    frame = device_frame(load_fixture(LEGACY))
    assert frame.attrs["drawb"]["attributes"]["gpu.nvidia.com/index"] == "int"
    assert frame["gpu.nvidia.com/index"].dtype == "Int64"
    assert "gpu.nvidia.com/pcieBusID" in frame.columns
    # issue #719: the MIG-enabled GPU is listed as a gpu as well; both rows are kept
    assert {"gpu-7", "gpu-7-mig-14-0-2"} <= set(frame["device"])


def _rebuild(row: pd.Series, info: dict) -> dict:
    """A device's attributes and capacities as the API publishes them, read back from a frame row."""
    kinds = {"string": "string", "version": "version", "int": "int", "bool": "bool"}
    attributes = {}
    for column, kind in info["attributes"].items():
        value = row[column]
        if value is None or (not isinstance(value, list) and pd.isna(value)):
            continue
        key = info["lists"][column] if kind == "list" else kinds[kind]
        attributes[column] = {key: value.item() if hasattr(value, "item") else value}
    capacity = {qn: {"value": row["capacity:" + qn]} for qn in info["capacities"]
                if not pd.isna(row["capacity:" + qn])}
    return {"attributes": attributes, "capacity": capacity}


def _qualified(body: dict, driver: str) -> dict:
    def q(key: str) -> str:
        return key if "/" in key else f"{driver}/{key}"

    return {
        "attributes": {q(k): v for k, v in body.get("attributes", {}).items()},
        "capacity": {q(k): {"value": v["value"]} for k, v in body.get("capacity", {}).items()},
    }


@pytest.mark.parametrize("name", [MAIN, DYNMIG, LEGACY])
def test_each_row_rebuilds_its_device_exactly(name):
    slices = copy.deepcopy(load_fixture(name))
    # a list attribute and a bool, so every value type is covered
    first = slices[-1]["spec"]["devices"][0].get("basic", slices[-1]["spec"]["devices"][0])
    first["attributes"]["resource.kubernetes.io/numaNode"] = {"ints": [0, 1]}
    first["attributes"]["healthy"] = {"bool": True}
    frame = device_frame(slices)
    info = frame.attrs["drawb"]
    expected = _devices(slices)
    for _, row in frame.iterrows():
        driver = row["driver"]
        assert _rebuild(row, info) == _qualified(expected[(driver, row["pool"], row["device"])], driver)
