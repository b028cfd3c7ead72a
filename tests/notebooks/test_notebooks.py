"""Every notebook in notebooks/ executes top to bottom in an environment built from binder/."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / ".venv-binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _pip(*args: str) -> None:
    subprocess.run([str(ENV / "bin" / "python"), "-m", "pip", "install", "-q", *args], cwd=ROOT, check=True)


@pytest.fixture(scope="session")
def binder_python() -> Path:
    """A virtual environment made only from binder/requirements.txt, with this checkout installed."""
    requirements = ROOT / "binder" / "requirements.txt"
    key = hashlib.sha256(requirements.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = ENV / ".binder-key"
    if not stamp.exists() or stamp.read_text() != key:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(ENV)], check=True)
        _pip("-r", str(requirements))
        stamp.write_text(key)
    else:  # dependencies unchanged: refresh drawb itself only
        _pip("--no-deps", "--force-reinstall", ".")
    return ENV / "bin" / "python"


def test_there_is_a_tour():
    assert (ROOT / "notebooks" / "tour.ipynb") in NOTEBOOKS


_RUNS: dict[Path, subprocess.CompletedProcess] = {}


def run_notebook(python: Path, notebook: Path) -> subprocess.CompletedProcess:
    """Execute ``notebook`` headless with ``python`` (once per test session)."""
    if notebook not in _RUNS:
        _RUNS[notebook] = subprocess.run(
            [str(python), "-m", "drawb.notebook.headless", str(notebook)],
            capture_output=True, text=True, timeout=600, cwd=ROOT,
        )
    return _RUNS[notebook]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(binder_python, notebook):
    out = run_notebook(binder_python, notebook)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "no errors" in out.stdout


POD_HEADING = "--- the cuda-check pod ---"


def test_tour_prints_the_device_table(binder_python):
    out = run_notebook(binder_python, ROOT / "notebooks" / "tour.ipynb")
    table = out.stdout.split(POD_HEADING)[0]
    rows = [line for line in table.splitlines() if " gpu.nvidia.com " in line]
    assert len(rows) == 38
    assert sum(" mig " in r for r in rows) == 14


def test_tour_runs_the_cuda_check_pod_on_the_simulated_cluster(binder_python):
    out = run_notebook(binder_python, ROOT / "notebooks" / "tour.ipynb")
    pod = out.stdout.split(POD_HEADING)[1].splitlines()
    claim = next(line for line in pod if "cuda-check-gpu-" in line and "gpu: 1 x gpu.nvidia.com" in line)
    assert " allocated,reserved " in claim and "[cuda-check]" in claim
    [listed] = [line for line in pod if line.startswith("GPU ")]
    assert re.fullmatch(r"GPU 0: NVIDIA [^(]+ \(UUID: GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\)", listed)
    assert any(" cuda-check " in line and " Succeeded " in line for line in pod)
