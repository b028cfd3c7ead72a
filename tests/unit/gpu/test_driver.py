"""The NVIDIA DRA driver's publishing rules (drawb.gpu.driver) on plain facts."""

from __future__ import annotations

import pytest

from drawb.gpu import driver


@pytest.mark.parametrize(
    ("text", "expected"),
    [("580.159.04", "580.159.4"), ("570.124.06", "570.124.6"), ("9.0", "9.0.0"), ("13.0", "13.0.0"), ("12", "12.0.0")],
)
def test_versions_are_normalised_as_the_driver_writes_them(text, expected):
    assert driver.normalize_version(text) == expected


@pytest.mark.parametrize(("value", "expected"), [(13000, "13.0"), (12080, "12.8"), (12020, "12.2"), (11040, "11.4")])
def test_cuda_driver_version_integer(value, expected):
    assert driver.cuda_driver_version(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(150754820096, "143771Mi"), (85094039552, "81152Mi"), (80 * 2**30, "80Gi"), (1, "1"), (1500, "1500"), (0, "0"), (3 * 2**10, "3Ki")],
)
def test_bytes_quantity_is_the_canonical_binary_si_form(value, expected):
    assert driver.bytes_quantity(value) == expected


def test_binary_si_takes_mib():
    assert driver.binary_si(40960) == "40Gi" and driver.binary_si(40448) == "40448Mi"


@pytest.mark.parametrize(
    ("nvml", "expected"), [("00000000:00:06.0", "0000:00:06.0"), ("00000000:3B:00.0", "0000:3b:00.0"), ("0000:5d:00.0", "0000:5d:00.0")]
)
def test_pci_bus_id_is_lower_case_with_a_four_digit_domain(nvml, expected):
    assert driver.pci_bus_id(nvml) == expected


def test_a_pci_bus_id_the_driver_would_reject_is_an_error():
    with pytest.raises(ValueError, match="DDDD:BB:DD.F"):
        driver.pci_bus_id("GPU 0")


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("../../../devices/pci0000:00/0000:00:06.0", "pci0000:00"),
        ("../../../devices/pci0000:5a/0000:5a:00.0/0000:5b:00.0/0000:5d:00.0", "pci0000:5a"),
        ("../../../devices/platform/0000:00:06.0", None),
        ("../../../devices/pci0000:00/0000:00:07.0", None),
        (None, None),
    ],
)
def test_pcie_root_is_the_first_path_element_under_devices(link, expected):
    assert driver.pcie_root(link, "0000:00:06.0" if link is None or "5d" not in link else "0000:5d:00.0") == expected


@pytest.mark.parametrize(
    ("profile", "expected"),
    [("1g.18gb", "gpu-0-mig-1g18gb-19-3"), ("1g.18gb+me", "gpu-0-mig-1g18gb-me-19-3"), ("1c.2g.35gb", "gpu-0-mig-1c2g35gb-19-3")],
)
def test_mig_device_names_drop_dots_and_are_rfc1123(profile, expected):
    assert driver.mig_device_name(0, profile, 19, 3) == expected


def _facts(**changes) -> driver.GpuFacts:
    base = dict(
        minor=2, uuid="GPU-1", product_name="NVIDIA H200", brand="Nvidia", architecture="Hopper",
        compute_capability="9.0", driver_version="580.159.04", cuda_driver_version="13.0",
        pci_bus_id="0000:5d:00.0", memory_bytes=150754820096,
    )  # fmt: skip
    return driver.GpuFacts(**{**base, **changes})


def test_full_gpu_without_optional_facts_has_no_optional_attributes():
    device = driver.full_gpu_device(_facts())
    assert device["name"] == "gpu-2"
    assert "addressingMode" not in device["attributes"] and "resource.kubernetes.io/pcieRoot" not in device["attributes"]
    assert device["capacity"] == {"memory": {"value": "143771Mi"}}


def test_memory_capacity_is_left_out_when_nvml_does_not_report_it():
    assert "capacity" not in driver.full_gpu_device(_facts(memory_bytes=None))


def test_mig_device_without_uuid_leaves_it_out():
    profile = driver.MigProfile("1g.18gb", 19, 16, 1, 1, 0, 1, 0, 16384, 1)
    device = driver.mig_device(_facts(), profile, 5, None)
    assert "uuid" not in device["attributes"]
    assert device["attributes"]["parentUUID"] == {"string": "GPU-1"}
    assert device["capacity"]["memorySlice5"] == {"value": "1"} and device["capacity"]["memory"] == {"value": "16Gi"}
