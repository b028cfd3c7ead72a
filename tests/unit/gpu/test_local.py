"""`local` conversion on real NVML readings from an H200, compared with nvidia-smi from the same run.

captures/h200-local/ holds one device run (see its README): drawb's raw NVML readings
(nvml.json), nvidia-smi -q -x, --query-gpu CSV, -L, mig -lgip and -lgipp, and what
`drawb local` printed there. nvml/h200-mig-constructed.json is built, not captured (its note
says how), because MIG mode is never changed on a real GPU.
"""

from __future__ import annotations

import json
import re

import pytest

from drawb.cluster.sim.catalog import model
from drawb.commands.local import LocalReport, slice_yaml
from drawb.gpu import driver
from drawb.gpu.local import convert, mig_memory_gb, profile_name
from drawb.gpu.smi_parse import number, parse_list, parse_mig_profiles, parse_query_csv, parse_xml
from tests.conftest import CAPTURES, DATA, load_fixture

RUN = CAPTURES / "h200-local"


@pytest.fixture(scope="module")
def readings() -> dict:
    return json.loads((RUN / "nvml.json").read_text())


@pytest.fixture(scope="module")
def local(readings):
    return convert(readings)


@pytest.fixture(scope="module")
def gpu0(local) -> dict:
    (device,) = local.devices
    return {"name": device["name"], **{k: next(iter(v.values())) for k, v in device["attributes"].items()}, "capacity": device["capacity"]}


@pytest.fixture(scope="module")
def smi():
    xml = parse_xml((RUN / "nvidia-smi-q.xml").read_text())
    (csv_row,) = parse_query_csv((RUN / "nvidia-smi-query.csv").read_text())
    (listed,) = parse_list((RUN / "nvidia-smi-L.txt").read_text())
    return xml, xml.gpus[0], csv_row, listed


def test_the_h200_publishes_one_full_gpu_with_the_driver_attribute_set(local, gpu0):
    assert local.problems == [] and gpu0["name"] == "gpu-0" and gpu0["type"] == "gpu"
    assert set(gpu0) - {"name", "capacity"} == {
        "type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
        "cudaDriverVersion", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot", "addressingMode",
    }  # fmt: skip


def test_identity_matches_nvidia_smi(gpu0, smi):
    _, xml_gpu, csv_row, listed = smi
    assert gpu0["uuid"] == xml_gpu.uuid == csv_row["uuid"] == listed.uuid
    assert gpu0["productName"] == xml_gpu.product_name == csv_row["name"] == listed.name == "NVIDIA H200"
    assert gpu0["name"] == f"gpu-{xml_gpu.minor_number}"
    assert gpu0["architecture"] == xml_gpu.product_architecture == "Hopper"
    assert gpu0["brand"] == "Nvidia" and xml_gpu.product_brand == "NVIDIA"  # go-nvlib's spelling, nvidia-smi's


def test_versions_match_nvidia_smi(gpu0, smi):
    xml, _, csv_row, _ = smi
    assert gpu0["driverVersion"] == driver.normalize_version(xml.driver_version) == driver.normalize_version(csv_row["driver_version"])
    assert gpu0["driverVersion"] == "580.159.4"  # 580.159.04 with the leading zero dropped
    assert gpu0["cudaDriverVersion"] == driver.normalize_version(xml.cuda_version) == "13.0.0"
    assert gpu0["cudaComputeCapability"] == driver.normalize_version(csv_row["compute_cap"]) == "9.0.0"


def test_pci_memory_and_addressing_match_nvidia_smi(gpu0, smi):
    _, xml_gpu, csv_row, _ = smi
    assert gpu0["resource.kubernetes.io/pciBusID"] == driver.pci_bus_id(xml_gpu.pci_bus_id) == driver.pci_bus_id(csv_row["pci.bus_id"])
    assert gpu0["capacity"] == {"memory": {"value": f"{xml_gpu.memory_total_mib}Mi"}}
    assert number(csv_row["memory.total"]) == xml_gpu.memory_total_mib == 143771
    assert gpu0["addressingMode"] == xml_gpu.addressing_mode == "None"


def test_mig_mode_matches_nvidia_smi(readings, local, smi):
    _, xml_gpu, csv_row, listed = smi
    mode = readings["gpus"][0]["mig_mode"]
    assert (mode["current"], mode["pending"]) == (0, 0)
    assert xml_gpu.mig_mode_current == csv_row["mig.mode.current"] == "Disabled" == xml_gpu.mig_mode_pending
    assert listed.migs == () and xml_gpu.mig_devices == ()
    assert all(d["attributes"]["type"]["string"] == "gpu" for d in local.devices)


def test_mig_profile_table_matches_nvidia_smi_mig_lgip(local):
    lgip = parse_mig_profiles((RUN / "nvidia-smi-mig-lgip.txt").read_text())
    assert len(lgip) == len(local.profiles) == 7
    for row, listed in zip(local.profiles, lgip):
        p = row.profile
        assert (p.name, p.gi_profile_id) == (listed.name, listed.id)
        assert (row.instances_free, row.instances_total) == (listed.instances_free, listed.instances_total)
        assert p.memory_mib / 1024 == listed.memory_gib
        assert (p.multiprocessors, p.decoders, p.encoders) == (listed.multiprocessors, listed.decoders, listed.encoders)
        assert (p.copy_engines, p.jpeg_engines, p.ofa_engines) == (listed.copy_engines, listed.jpeg_engines, listed.ofa_engines)
        assert row.nvml_name == f"MIG {p.name}"  # NVML's own name agrees with go-nvlib's rule


def test_mig_placements_match_nvidia_smi_mig_lgipp(local):
    text = (RUN / "nvidia-smi-mig-lgipp.txt").read_text()
    listed = {}
    for m in re.finditer(r"Profile ID\s+(\d+) Placements?\s*: \{([\d,]+)\}:(\d+)", text):
        listed[int(m[1])] = tuple((int(s), int(m[3])) for s in m[2].split(","))
    assert listed == {row.profile.gi_profile_id: row.placements for row in local.profiles}


def test_possible_mig_device_names_follow_the_driver(local):
    names = {row.profile.name: row.device_names for row in local.profiles}
    assert names["1g.18gb"] == [f"gpu-0-mig-1g18gb-19-{s}" for s in range(7)]
    assert names["1g.18gb+me"][0] == "gpu-0-mig-1g18gb-me-20-0"
    assert names["3g.71gb"] == ["gpu-0-mig-3g71gb-9-0", "gpu-0-mig-3g71gb-9-4"]
    assert names["7g.141gb"] == ["gpu-0-mig-7g141gb-0-0"]


def test_the_simulated_h200_catalog_agrees_with_the_real_gpu(local, gpu0):
    h200 = model("H200")
    real = {row.profile.name: row.profile for row in local.profiles}
    assert h200.product_name == gpu0["productName"] and f"{h200.memory_mib}Mi" == gpu0["capacity"]["memory"]["value"]
    for profile in h200.mig_profiles:
        assert profile == real[profile.name], profile.name


def test_same_attributes_as_the_transcribed_h200_node_of_the_driver_fixture(gpu0):
    h200 = next(s for s in load_fixture("resourceslices.yaml") if s["spec"]["nodeName"] == "hgx-h200-03")
    theirs = h200["spec"]["devices"][0]
    ours = {k: v for k, v in gpu0.items() if k not in ("name", "capacity")}
    assert set(ours) == set(theirs["attributes"])
    same = {"type", "productName", "brand", "architecture", "cudaComputeCapability", "cudaDriverVersion", "addressingMode"}
    assert {k: ours[k] for k in same} == {k: next(iter(theirs["attributes"][k].values())) for k in same}
    assert gpu0["capacity"] == theirs["capacity"]


def test_live_figures_agree_with_nvidia_smi_taken_seconds_apart(local, smi):
    _, xml_gpu, _, _ = smi
    (live,) = local.live
    assert live["memory_total_mib"] == xml_gpu.memory_total_mib and live["mig_mode"] == xml_gpu.mig_mode_current
    assert live["power_limit_w"] == xml_gpu.power_limit_w
    assert abs(live["temperature_c"] - xml_gpu.temperature_c) <= 3
    assert abs(live["power_w"] - xml_gpu.power_draw_w) <= 30
    assert 0 <= live["gpu_util_percent"] <= 100


def test_memory_in_use_is_counted_as_nvidia_smi_counts_it(readings, local, smi):
    """NVML v1 counts driver-reserved memory as used; v2 (shown) splits it off, as nvidia-smi does."""
    _, xml_gpu, _, _ = smi
    v1, v2 = readings["gpus"][0]["memory"], readings["gpus"][0]["memory_v2"]
    assert abs(v1["used"] / 2**20 - (xml_gpu.memory_used_mib + xml_gpu.memory_reserved_mib)) <= 1
    assert abs(v2["reserved"] / 2**20 - xml_gpu.memory_reserved_mib) <= 1
    assert local.live[0]["memory_used_mib"] == v2["used"] // 2**20 == xml_gpu.memory_used_mib


def test_the_run_printed_what_the_conversion_gives(local):
    assert str(LocalReport(local)) == (RUN / "drawb-local.txt").read_text().rstrip("\n")
    assert slice_yaml(local).rstrip("\n") == (RUN / "drawb-local-slice.yaml").read_text().rstrip("\n")


def test_the_slice_is_a_complete_single_slice_pool_named_after_the_host(local):
    spec = local.slice["spec"]
    assert spec["driver"] == "gpu.nvidia.com" and spec["nodeName"] == spec["pool"]["name"] == local.node == "vm"
    assert spec["pool"] == {"name": "vm", "generation": 1, "resourceSliceCount": 1}
    assert local.slice["metadata"]["generateName"] == "00000-gpu.nvidia.com-vm-"


# ---- MIG: built from the real readings (MIG mode is never changed on a real GPU) ----------------


@pytest.fixture(scope="module")
def mig():
    return convert(json.loads((DATA / "nvml" / "h200-mig-constructed.json").read_text()))


def test_a_mig_enabled_gpu_publishes_only_its_mig_devices(mig):
    assert mig.problems == []
    assert [d["name"] for d in mig.devices] == ["gpu-0-mig-3g71gb-9-0", "gpu-0-mig-2g35gb-14-4", "gpu-0-mig-1g18gb-19-6"]
    assert {d["attributes"]["type"]["string"] for d in mig.devices} == {"mig"}


def test_mig_devices_carry_profile_parent_and_the_gi_profile_capacities(mig):
    big, middle, small = mig.devices
    assert big["attributes"]["profile"] == {"string": "3g.71gb"}
    assert big["attributes"]["parentUUID"] == {"string": "GPU-2b8d7fc5-bb6d-ec96-fc46-d40f08c156be"}
    assert big["attributes"]["uuid"] == {"string": "MIG-2a5f6c1e-7d3b-5e8a-9c41-0b6d2e7f3a15"}
    assert {k: v["value"] for k, v in big["capacity"].items()} == {
        "copyEngines": "3", "decoders": "3", "encoders": "0", "jpegEngines": "3", "memory": "71424Mi",
        "multiprocessors": "60", "ofaEngines": "0",
        "memorySlice0": "1", "memorySlice1": "1", "memorySlice2": "1", "memorySlice3": "1",
    }  # fmt: skip
    assert sorted(k for k in middle["capacity"] if k.startswith("memorySlice")) == ["memorySlice4", "memorySlice5"]
    assert small["capacity"]["memory"] == {"value": "16Gi"} and "memorySlice6" in small["capacity"]
    shared = ("productName", "cudaComputeCapability", "driverVersion", "resource.kubernetes.io/pciBusID")
    assert all(d["attributes"][k] == big["attributes"][k] for d in (middle, small) for k in shared)


def test_mig_devices_match_the_sim_publisher_for_the_same_layout(mig):
    """The sim's H200 catalog, placed the same way, gives the same devices (UUIDs aside)."""
    from drawb.cluster.sim.publish import Gpu, GpuNode, MigInstance, gpu_devices

    node = GpuNode("h200-mig", "H200", "580.159.04", "13.0", (Gpu(0, "0000:00:06.0", "pci0000:00", tuple(
        MigInstance(p, s) for p, s in (("3g.71gb", 0), ("2g.35gb", 4), ("1g.18gb", 6)))),), addressing_mode="None")  # fmt: skip

    def plain(d):
        return d["name"], {k: v for k, v in d["attributes"].items() if k not in ("uuid", "parentUUID")}, d["capacity"]

    assert [plain(d) for d in gpu_devices("x", node)] == [plain(d) for d in mig.devices]


def test_a_compute_instance_smaller_than_its_gpu_instance_is_reported_not_published():
    readings = json.loads((DATA / "nvml" / "h200-mig-constructed.json").read_text())
    readings["gpus"][0]["mig_devices"][0]["compute_instance"].update(profile_index=0, slice_count=1)
    result = convert(readings)
    assert len(result.devices) == 2
    assert "does not span its GPU instance (1 of 3 slices)" in result.problems[0]


def test_mig_mode_on_without_mig_devices_strands_the_gpu():
    readings = json.loads((DATA / "nvml" / "h200-mig-constructed.json").read_text())
    readings["gpus"][0]["mig_devices"] = []
    result = convert(readings)
    assert result.devices == [] and "MIG mode on but no MIG devices" in result.problems[0]


# ---- go-nvlib's profile naming ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "memory_mib", "total", "ci", "expected"),
    [
        (0, 16384, 150754820096, None, "1g.18gb"),  # H200: 16 GiB is an eighth of 141 GB, rounded up
        (7, 16384, 150754820096, None, "1g.18gb+me"),
        (9, 33280, 150754820096, None, "1g.35gb"),
        (4, 143360, 150754820096, None, "7g.141gb"),
        (0, 9984, 85520809984, None, "1g.10gb"),  # H100 80GB HBM3 (81559 MiB)
        (2, 40448, 85520809984, None, "3g.40gb"),
        (0, 4864, 42949672960, None, "1g.5gb"),  # A100-SXM4-40GB
        (1, 33280, 150754820096, 1, "1c.2g.35gb"),
        (13, 16384, 150754820096, None, "1g.18gb-me"),
        (15, 16384, 150754820096, None, "1g.18gb+me.all"),
    ],
)
def test_profile_names_follow_go_nvlib(index, memory_mib, total, ci, expected):
    assert profile_name(index, memory_mib, total, ci) == expected


def test_mig_memory_rounds_to_eighths_of_the_gpu():
    assert mig_memory_gb(150754820096, 71424) == 71 and mig_memory_gb(150754820096, 33280) == 35


def test_a_simulated_pod_given_these_devices_prints_what_the_real_nvidia_smi_printed(local):
    """Real NVML -> driver devices -> the sim's nvidia-smi renderers == the real nvidia-smi of the same run."""
    from drawb.gpu.smi import nvidia_smi_list
    from drawb.gpu.smi_render import nvidia_smi_query, visible_gpus

    assert parse_list(nvidia_smi_list(local.devices)) == parse_list((RUN / "nvidia-smi-L.txt").read_text())
    fields = ["index", "uuid", "name", "pci.bus_id", "memory.total", "driver_version", "compute_cap", "mig.mode.current"]
    (real,) = parse_query_csv((RUN / "nvidia-smi-query.csv").read_text())
    (simulated,) = parse_query_csv(nvidia_smi_query(visible_gpus(local.devices), fields))
    assert simulated == {name: real[name] for name in fields}
