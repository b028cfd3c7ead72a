"""nvidia-smi parsers on real H200 captures and on MIG output in NVIDIA's documented format."""

from __future__ import annotations

import pytest

from drawb.gpu.smi import nvidia_smi_list
from drawb.gpu.smi_parse import (
    ListedGpu,
    ListedMig,
    SmiParseError,
    number,
    parse_list,
    parse_mig_profiles,
    parse_query_csv,
    parse_xml,
)
from tests.conftest import CAPTURES

RUNS = ["h200", "h200-local"]  # the shared capture and this project's own device run
MIG = CAPTURES / "mig-documented"


@pytest.mark.parametrize("run", RUNS)
def test_list_of_a_real_h200(run):
    (gpu,) = parse_list((CAPTURES / run / "nvidia-smi-L.txt").read_text())
    assert gpu.index == 0 and gpu.name == "NVIDIA H200" and gpu.uuid.startswith("GPU-") and gpu.migs == ()


def test_list_with_mig_devices_in_the_documented_format():
    gpus = parse_list((MIG / "nvidia-smi-L.txt").read_text())
    assert [g.index for g in gpus] == [0, 1, 2]
    assert gpus[0] == ListedGpu(
        0,
        "NVIDIA A100-SXM4-40GB",
        "GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77",
        (
            ListedMig(0, "3g.20gb", "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f"),
            ListedMig(1, "2g.10gb", "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb"),
            ListedMig(2, "1g.5gb", "MIG-1e099852-3624-56c0-8064-c5db1211e44f"),
        ),
    )
    assert gpus[1].migs == () and [m.profile for m in gpus[2].migs] == ["7g.40gb"]


def test_list_with_r450_mig_uuids():
    (gpu,) = parse_list((MIG / "nvidia-smi-L-r450.txt").read_text())
    assert gpu.name == "A100-SXM4-40GB"
    assert [m.uuid for m in gpu.migs] == [
        "MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/7/0",
        "MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/8/0",
    ]


def test_list_reads_back_what_the_simulated_pods_print():
    from drawb.cluster.sim.scenarios import build_scenario

    devices = [d for s in build_scenario().resource_slices if s["spec"]["nodeName"] == "dgx-h100-02" and s["spec"]["driver"] == "gpu.nvidia.com" for d in s["spec"]["devices"]]
    gpus = parse_list(nvidia_smi_list(devices))
    uuids = {d["attributes"]["uuid"]["string"] for d in devices}
    assert {g.uuid for g in gpus if not g.migs} | {m.uuid for g in gpus for m in g.migs} == uuids


@pytest.mark.parametrize(
    "text",
    ["GPU 0: NVIDIA H200\n", "  MIG 1g.5gb Device 0: (UUID: MIG-x)\n", "No devices were found\n", "GPU 0: X (UUID: GPU-1)\nhello\n"],
)
def test_list_refuses_lines_it_does_not_know(text):
    with pytest.raises(SmiParseError, match="line"):
        parse_list(text)


@pytest.mark.parametrize("run", RUNS)
def test_query_csv_of_a_real_h200(run):
    (row,) = parse_query_csv((CAPTURES / run / "nvidia-smi-query.csv").read_text())
    assert row["name"] == "NVIDIA H200" and row["compute_cap"] == "9.0" and row["mig.mode.current"] == "Disabled"
    assert row["memory.total"] == "143771 MiB" and number(row["memory.total"]) == 143771
    assert row["pci.bus_id"] == "00000000:00:06.0" and row["driver_version"].startswith("580.159.")


def test_query_csv_without_header_or_units():
    rows = parse_query_csv("0, GPU-a, [N/A], 40960\n1, GPU-b, Enabled, 81559\n", ["index", "uuid", "mig.mode.current", "memory.total"])
    assert rows == [
        {"index": "0", "uuid": "GPU-a", "mig.mode.current": None, "memory.total": "40960"},
        {"index": "1", "uuid": "GPU-b", "mig.mode.current": "Enabled", "memory.total": "81559"},
    ]


def test_query_csv_row_of_the_wrong_width_is_an_error():
    with pytest.raises(SmiParseError, match="row 1 has 2 values for 3 fields"):
        parse_query_csv("a, b, c\n1, 2\n")


@pytest.mark.parametrize("run", RUNS)
def test_xml_of_a_real_h200(run):
    log = parse_xml((CAPTURES / run / "nvidia-smi-q.xml").read_text())
    assert log.driver_version.startswith("580.159.") and log.cuda_version == "13.0"
    (gpu,) = log.gpus
    assert (gpu.product_name, gpu.product_brand, gpu.product_architecture) == ("NVIDIA H200", "NVIDIA", "Hopper")
    assert gpu.pci_bus_id == "00000000:00:06.0" and gpu.minor_number == 0 and gpu.addressing_mode == "None"
    assert gpu.memory_total_mib == 143771 and gpu.mig_mode_current == "Disabled" and gpu.mig_devices == ()
    assert gpu.power_limit_w == 700.0 and 0 < gpu.power_draw_w < 700 and 0 < gpu.temperature_c < 100


def test_xml_with_mig_devices_in_the_documented_format():
    (gpu,) = parse_xml((MIG / "nvidia-smi-q-mig.xml").read_text()).gpus
    assert gpu.mig_mode_current == gpu.mig_mode_pending == "Enabled"
    assert [(m.index, m.gpu_instance_id, m.compute_instance_id) for m in gpu.mig_devices] == [(0, 2, 0), (1, 5, 0), (2, 13, 0)]
    big = gpu.mig_devices[0]
    assert (big.multiprocessors, big.copy_engines, big.decoders, big.jpeg_engines, big.encoders, big.ofa_engines) == (60, 3, 3, 3, 0, 0)
    assert [m.memory_total_mib for m in gpu.mig_devices] == [71424, 33280, 16384]


def test_xml_errors_name_the_problem():
    with pytest.raises(SmiParseError, match="not XML"):
        parse_xml("GPU 0: NVIDIA H200")
    with pytest.raises(SmiParseError, match="nvidia_smi_log"):
        parse_xml("<html/>")


@pytest.mark.parametrize("run", RUNS)
def test_mig_profile_table_of_a_real_h200(run):
    profiles = parse_mig_profiles((CAPTURES / run / "nvidia-smi-mig-lgip.txt").read_text())
    assert [p.name for p in profiles] == ["1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"]
    assert [p.id for p in profiles] == [19, 20, 15, 14, 9, 5, 0]
    full = profiles[-1]
    assert (full.instances_free, full.instances_total, full.memory_gib, full.p2p) == (1, 1, 140.0, "No")
    assert (full.multiprocessors, full.decoders, full.encoders, full.copy_engines, full.jpeg_engines, full.ofa_engines) == (132, 7, 0, 8, 7, 1)


def test_mig_profile_table_without_mig_capable_gpus_is_empty():
    assert parse_mig_profiles("No MIG-supported devices found.\n") == []


def test_mig_profile_table_cut_in_the_middle_is_an_error():
    lines = (CAPTURES / "h200" / "nvidia-smi-mig-lgip.txt").read_text().splitlines()
    with pytest.raises(SmiParseError, match="middle of a profile"):
        parse_mig_profiles("\n".join(lines[:6]))


@pytest.mark.parametrize(("text", "expected"), [("143771 MiB", 143771), ("82.67 W", 82.67), ("41 C", 41), ("[N/A]", None), ("N/A", None)])
def test_numbers_with_units(text, expected):
    assert number(text) == expected
