"""Reading NVML for real on this machine, and `local` through the CLI, the magic and the sim.

CI machines have no NVIDIA driver, so the no-driver path is exercised for real here; on a machine
with a driver the same tests check that NVML is read instead.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drawb.gpu.nvml import NVML_LIBRARY, NvmlUnavailable, read_nvml
from tests.conftest import CAPTURES, DATA

DRAWB = Path(sys.executable).with_name("drawb")
READINGS = CAPTURES / "h200-local" / "nvml.json"


def _has_driver() -> bool:
    try:
        ctypes.CDLL(NVML_LIBRARY)
    except OSError:
        return False
    return True


HAS_DRIVER = _has_driver()


def drawb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120)


def test_read_nvml_says_which_library_failed_or_reads_the_gpus():
    if HAS_DRIVER:
        readings = read_nvml()
        assert readings["format"] == "drawb.nvml/1" and readings["gpus"]
        return
    with pytest.raises(NvmlUnavailable) as caught:
        read_nvml()
    text = caught.value.render()
    assert text.startswith("NvmlUnavailable: no NVIDIA driver here: the NVML library libnvidia-ml.so.1 could not be loaded (")
    assert "cannot open shared object file" in text and text.endswith("Hint: run on a machine with an NVIDIA GPU and its driver installed")


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has an NVIDIA driver: the no-driver message cannot happen")
def test_cli_local_without_a_driver_is_one_message_without_traceback():
    out = drawb("local")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("NvmlUnavailable: no NVIDIA driver here: the NVML library libnvidia-ml.so.1")
    assert "`drawb local --from FILE`" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has an NVIDIA driver: the no-driver message cannot happen")
def test_magic_local_without_a_driver_fails_the_cell_with_the_message(shell, capsys):
    err = shell.fails("%dra local")
    assert err.startswith("NvmlUnavailable: no NVIDIA driver here") and "`%dra local --from FILE`" in err
    assert "Traceback" not in err


def test_cli_local_from_saved_readings_prints_devices_live_figures_and_mig_profiles():
    out = drawb("local", "--from", str(READINGS))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("node vm: 1 device(s) the NVIDIA DRA driver would publish")
    assert "  driverVersion: 580.159.4  (version)" in out.stdout and "  capacity memory: 143771Mi" in out.stdout
    assert "\nlive (as NVML read it)\n" in out.stdout and "7g.141gb" in out.stdout


def test_cli_yaml_is_the_slice_and_save_round_trips(tmp_path):
    saved = tmp_path / "again.json"
    out = drawb("local", "--from", str(READINGS), "--yaml", "--save", str(saved))
    assert out.returncode == 0, out.stderr
    slice_ = yaml.safe_load(out.stdout)
    assert slice_["kind"] == "ResourceSlice" and [d["name"] for d in slice_["spec"]["devices"]] == ["gpu-0"]
    assert json.loads(saved.read_text()) == json.loads(READINGS.read_text())


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read NVML readings"), ("{", "Expecting property name"), ('{"gpus": []}', "not drawb NVML readings")],
)
def test_cli_bad_readings_file_is_a_usage_error(tmp_path, content, message):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    out = drawb("local", "--from", str(path))
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_magic_local_returns_the_report_with_frames(shell):
    report = shell.run(f"%dra local --from {READINGS}")
    assert list(report.devices["device"]) == ["gpu-0"]
    assert report.devices.loc[0, "capacity.memory"] == "143771Mi"
    assert len(report.mig_profiles) == 7 and report.live.loc[0, "memory_total_mib"] == 143771
    html = report._repr_html_()
    assert "NVIDIA H200" in html and "ResourceSlice YAML" in html


def test_local_scenario_from_saved_readings_is_a_simulated_cluster(shell):
    connected = shell.run(f"%dra connect --scenario local:{DATA / 'nvml' / 'h200-mig-constructed.json'}")
    assert "simulated cluster 'local'" in repr(connected)
    devices = shell.run("%dra devices")
    assert sorted(devices["device"]) == ["gpu-0-mig-1g18gb-19-6", "gpu-0-mig-2g35gb-14-4", "gpu-0-mig-3g71gb-9-0"]
    assert set(devices["node"]) == {"h200-mig"}


def test_local_scenario_with_a_missing_file_is_a_usage_error(shell, capsys, tmp_path):
    err = shell.fails(f"%dra connect --scenario local:{tmp_path / 'none.json'}")
    assert "scenario local:" in err and "cannot read the NVML readings" in err
