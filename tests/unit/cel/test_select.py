"""select over inventory frames: the scheduler's order of selectors, device-level errors, rebuilt devices."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drawb.cel import compile_selector, preview, select
from drawb.cel.device import from_json as device_variables
from drawb.cel.vector import FrameColumns, row_device
from drawb.inventory import device_frame

from .helpers import device, frame_of, resource_slice

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
GPU = 'device.attributes["gpu.nvidia.com"]'


@pytest.fixture(scope="module")
def slices() -> list[dict]:
    return yaml.safe_load((FIXTURES / "resourceslices.yaml").read_text())["items"]


@pytest.fixture(scope="module")
def frame(slices):
    return device_frame(slices)


def test_class_false_stops_before_the_request_selector(frame):
    result = select(frame, f'{GPU}.profile == "1g.10gb"', class_selectors=['device.driver == "gpu.nvidia.com"'])
    assert result.match_count == 9
    assert result.error_count == 24  # full GPUs; compute-domain devices stop at the class selector
    assert set(result.errors["driver"]) == {"gpu.nvidia.com"}


def test_a_class_selector_error_makes_the_device_an_error(frame):
    result = select(frame, "false", class_selectors=[f'{GPU}.profile.startsWith("1g")'])
    assert result.match_count == 0
    assert result.error_count == 24 + 8


def test_an_unparsable_version_fails_the_device_whatever_the_expression(slices):
    devices = [device("ok", {"driverVersion": {"version": "580.95.5"}}), device("bad", {"driverVersion": {"version": "580.95.05"}})]
    frame = frame_of([resource_slice(devices, "gpu.nvidia.com")])
    result = select(frame, "true")
    assert list(result.matches["device"]) == ["ok"]
    assert list(result.errors["error"]) == [
        'attribute driverVersion: parse semantic version: Patch number must not contain leading zeroes "05"'
    ]
    selector = compile_selector("true")
    with pytest.raises(Exception, match="leading zeroes"):
        selector.matches(devices[1], "gpu.nvidia.com")


def test_rebuilt_rows_are_the_same_cel_device(slices, frame):
    selector = compile_selector("true")
    originals = {(s["metadata"]["name"], d["name"]): d for s in slices for d in s["spec"].get("devices", [])}
    for row in range(len(frame)):
        rebuilt, driver = row_device(frame, row)
        original = originals[(frame["slice"].iat[row], rebuilt["name"])]
        expected = device_variables(original, driver, selector.spec)
        assert device_variables(rebuilt, driver, selector.spec) == expected
        assert FrameColumns.of(frame).variables(row, None, selector.spec) == expected


@pytest.mark.parametrize(
    "expression",
    [
        f'{GPU}.productName in ["NVIDIA H200", "NVIDIA L4"]',
        f'{GPU}.productName.matches("H[0-9]+")',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
        f'{GPU}.cudaComputeCapability.isGreaterThan(semver("8.0.0"))',
        f'{GPU}.?profile.orValue("full") == "full"',
        'device.attributes.exists(d, d == "compute-domain.nvidia.com")',
        f'cel.bind(g, {GPU}, g.type == "mig" && g.profile.startsWith("3g"))',
        'size(device.capacity["gpu.nvidia.com"]) > 2 || "compute-domain.nvidia.com" in device.attributes',
        f'{GPU}.productName.size() > 10 ? {GPU}.architecture == "Hopper" : false',
        # a string attribute against a string constant: one Arrow pass (missing attributes are errors)
        f'{GPU}.profile == "1g.10gb"',
        f'"Hopper" != {GPU}.architecture',
        f'{GPU}["uuid"] != "" && {GPU}.type == "gpu"',
        f'{GPU}.exists(k, {GPU}[k] == "Hopper")',
        f'{GPU}.cudaComputeCapability == "9.0.0"',
    ],
)
def test_select_agrees_with_matches_on_the_fixtures(slices, frame, expression):
    selector = compile_selector(expression, kubernetes_version="1.36")
    result = select(frame, selector)
    got = {(s, n): True for s, n in zip(result.matches["slice"], result.matches["device"])}
    got.update({(s, n): e for s, n, e in zip(result.errors["slice"], result.errors["device"], result.errors["error"])})
    for s in slices:
        driver = s["spec"]["driver"]
        for dev in s["spec"].get("devices", []):
            try:
                expected = selector.matches(dev, driver)
            except Exception as err:  # noqa: BLE001 - CELEvalError, compared by message
                expected = str(err)
            assert got.get((s["metadata"]["name"], dev["name"]), False) == expected


def test_preview_returns_the_compile_error_instead_of_raising(frame):
    result = preview(frame, "device.driver ==")
    assert result.compile_error is not None and result.compile_error.reason == "syntax"
    assert result.match_count == 0 and result.matches.empty
    assert "Syntax error" in result._repr_html_()


def test_preview_with_a_device_class(frame):
    classes = yaml.safe_load((FIXTURES / "deviceclasses.yaml").read_text())
    items = classes["items"] if isinstance(classes, dict) and "items" in classes else classes
    result = preview(frame, f'{GPU}.profile == "1g.10gb"', device_classes=items, class_name="mig.nvidia.com")
    assert result.match_count == 9 and result.error_count == 0
    with pytest.raises(KeyError, match="no DeviceClass 'nope'"):
        preview(frame, "true", device_classes=items, class_name="nope")


def test_rows_subset_works_but_a_column_subset_is_refused(frame):
    rows = frame[frame["node"] == "dgx-h100-02"]
    assert select(rows, f'{GPU}.type == "mig"').match_count == 14
    with pytest.raises(ValueError, match="lacks .* inventory columns"):
        select(frame[["node", "driver", "pool", "slice", "device", "gpu.nvidia.com/type"]], "true")
