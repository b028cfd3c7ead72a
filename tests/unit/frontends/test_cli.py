"""The drawb command line, run as a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DRAWB = Path(sys.executable).with_name("drawb")


def drawb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120)


def test_devices_table():
    out = drawb("devices", "--driver", "gpu.nvidia.com")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["node", "driver", "device", "type", "product", "memory", "profile", "claim", "reserved_for"]
    assert len(lines) == 1 + 38
    assert any("gpu-5-mig-3g40gb-9-4" in line and "3g.40gb" in line and "40448Mi" in line for line in lines)


@pytest.mark.parametrize("command", ["slices", "classes", "claims", "pods", "attrs", "scenarios"])
def test_read_commands_print_tables(command):
    out = drawb(command)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) >= 2


def test_help_lists_subcommands():
    out = drawb("--help")
    assert out.returncode == 0
    assert "drawb devices [--node NODE]" in out.stdout and "--kubeconfig" in out.stdout


def test_errors_exit_2_without_traceback():
    out = drawb("devices", "--node", "nope")
    assert out.returncode == 2
    assert out.stderr.startswith("UsageError: no device has node 'nope'") and "Traceback" not in out.stderr
    out = drawb("--kubeconfig", "/nonexistent", "devices")
    assert out.returncode == 2 and out.stderr.startswith("KubeconfigUnusable: no kubeconfig at /nonexistent")


def test_scenario_option():
    out = drawb("--scenario", "synthetic:2x3", "devices", "--driver", "gpu.nvidia.com")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 1 + 6


def test_version_is_the_packages():
    """``drawb --version`` prints the version pyproject.toml states (and ``drawb.__version__`` is), and exits 0."""
    import tomllib

    root = Path(__file__).resolve().parents[3]
    stated = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    out = subprocess.run([sys.executable, "-m", "drawb.cli", "--version"], capture_output=True, text=True,
                         timeout=120, cwd=root)
    assert (out.returncode, out.stdout, out.stderr) == (0, f"drawb {stated}\n", "")
