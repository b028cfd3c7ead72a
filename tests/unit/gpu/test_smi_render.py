"""nvidia-smi --query-gpu and plain nvidia-smi text for the GPUs a container sees."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.scenarios import build_scenario
from drawb.gpu.smi_render import (
    QueryError,
    driver_version,
    nvidia_smi_query,
    nvidia_smi_table,
    smi_bus_id,
    visible_gpus,
)
from tests.conftest import CAPTURES

# The H200 of ../shared/captures/h200 as the NVIDIA driver publishes it (normalised versions).
H200 = {
    "name": "gpu-0",
    "attributes": {
        "type": {"string": "gpu"},
        "productName": {"string": "NVIDIA H200"},
        "uuid": {"string": "GPU-4d61db8e-66d0-7ad3-1dfa-c21f381f77c4"},
        "resource.kubernetes.io/pciBusID": {"string": "0000:00:06.0"},
        "driverVersion": {"version": "580.159.4"},
        "cudaDriverVersion": {"version": "13.0.0"},
        "cudaComputeCapability": {"version": "9.0.0"},
    },
    "capacity": {"memory": {"value": "143771Mi"}},
}


def _devices(node: str) -> list[dict]:
    return next(s["spec"]["devices"] for s in build_scenario().resource_slices
                if s["spec"]["nodeName"] == node and s["spec"]["driver"] == "gpu.nvidia.com")


def test_the_summary_table_of_the_real_h200():
    real = (CAPTURES / "h200" / "nvidia-smi.txt").read_text()
    assert nvidia_smi_table(visible_gpus([H200]), "Sun Nov 29 14:26:17 2026") == real


def test_the_query_csv_of_the_real_h200_except_its_serial():
    real = (CAPTURES / "h200" / "nvidia-smi-query.csv").read_text().splitlines()
    fields = [f.split(" [")[0] for f in real[0].split(", ")]
    ours = nvidia_smi_query(visible_gpus([H200]), fields).splitlines()
    assert ours[0] == real[0]
    assert ours[1].rsplit(", ", 1)[0] == real[1].rsplit(", ", 1)[0]
    assert len(ours[1].rsplit(", ", 1)[1]) == 13


def test_query_options_and_errors():
    gpus = visible_gpus([H200])
    assert nvidia_smi_query(gpus, ["index", "memory.total"], header=False, units=False) == "0, 143771\n"
    with pytest.raises(QueryError, match='Field "bogus" is not a valid field to query.'):
        nvidia_smi_query(gpus, ["bogus"])


def test_a_container_sees_its_gpus_from_zero_in_pci_order():
    devices = _devices("dgx-h100-02")
    full = [d for d in devices if d["attributes"]["type"]["string"] == "gpu"]
    gpus = visible_gpus([full[2], full[0]])
    assert [g.index for g in gpus] == [0, 1]
    assert [g.uuid for g in gpus] == [full[0]["attributes"]["uuid"]["string"], full[2]["attributes"]["uuid"]["string"]]


def test_mig_devices_show_their_parent_in_mig_mode():
    mig = [d for d in _devices("dgx-h100-02") if d["attributes"]["type"]["string"] == "mig"][:2]
    [gpu] = visible_gpus(mig, {"NVIDIA H100 80GB HBM3": 81559})
    assert gpu.mig_mode == "Enabled" and gpu.memory_mib == 81559
    assert [m.profile for m in gpu.migs] == ["1g.10gb", "1g.10gb"]
    table = nvidia_smi_table([gpu], "Thu Jan  1 00:00:00 2026")
    assert "| MIG devices:" in table and "Enabled |" in table
    assert all(len(line) == 91 for line in table.splitlines()[1:] if line)


def test_versions_and_bus_ids_are_spelled_as_nvidia_smi_spells_them():
    assert driver_version("580.95.5") == "580.95.05"
    assert smi_bus_id("0000:1b:00.0") == "00000000:1B:00.0"
