"""nvidia-smi -L text produced for allocated devices."""

from __future__ import annotations

from pathlib import Path

from drawb.cluster.sim.scenarios import build_scenario
from drawb.gpu.smi import nvidia_smi_list
from tests.conftest import CAPTURES


def _devices(node: str) -> list[dict]:
    for s in build_scenario().resource_slices:
        if s["spec"]["nodeName"] == node and s["spec"]["driver"] == "gpu.nvidia.com":
            return s["spec"]["devices"]
    raise AssertionError(node)


def test_single_h200_line_has_the_real_format():
    real = (CAPTURES / "h200" / "nvidia-smi-L.txt").read_text()
    device = {
        "name": "gpu-0",
        "attributes": {
            "type": {"string": "gpu"},
            "productName": {"string": "NVIDIA H200"},
            "uuid": {"string": "GPU-4d61db8e-66d0-7ad3-1dfa-c21f381f77c4"},
            "resource.kubernetes.io/pciBusID": {"string": "0000:00:06.0"},
        },
    }
    assert nvidia_smi_list([device]) == real


def test_gpus_are_numbered_in_pci_order():
    devices = _devices("hgx-h200-03")
    text = nvidia_smi_list(list(reversed(devices)))
    lines = text.splitlines()
    assert len(lines) == 8
    by_pci = sorted(devices, key=lambda d: d["attributes"]["resource.kubernetes.io/pciBusID"]["string"])
    for i, (line, dev) in enumerate(zip(lines, by_pci)):
        assert line == f"GPU {i}: NVIDIA H200 (UUID: {dev['attributes']['uuid']['string']})"


def test_mig_devices_nest_under_their_parent():
    migs = [d for d in _devices("dgx-h100-02") if d["name"].startswith("gpu-5-mig")]
    lines = nvidia_smi_list(migs).splitlines()
    parent = migs[0]["attributes"]["parentUUID"]["string"]
    assert lines[0] == f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {parent})"
    assert len(lines) == 1 + len(migs)
    assert lines[1].startswith("  MIG 1g.10gb     Device  0: (UUID: MIG-")


def test_no_devices_prints_nothing():
    assert nvidia_smi_list([]) == ""
