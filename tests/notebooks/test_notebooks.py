"""Every notebook in notebooks/ executes top to bottom in an environment built from binder/ alone,
and shows what it teaches: the outputs of its tagged cells are checked, and no cell shows an error."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / ".venv-binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GPU_LINE = re.compile(r"GPU 0: NVIDIA [^(]+ \(UUID: GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\)")
WIDGET = "application/vnd.jupyter.widget-view+json"


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


class Executed:
    """A notebook executed headless by the binder environment: its printed summary and its cells."""

    def __init__(self, run: subprocess.CompletedProcess, path: Path):
        self.run = run
        self.notebook = nbformat.read(str(path), as_version=4) if path.exists() else None

    def cells(self, tag: str) -> list:
        """The code cells tagged ``tag``."""
        found = [c for c in self.notebook.cells if tag in c.get("metadata", {}).get("tags", [])]
        assert found, f"no cell tagged {tag!r}"
        return found

    def text(self, tag: str) -> str:
        """The plain text the cells tagged ``tag`` showed (streams, results and displays)."""
        return "\n".join(output_text(o) for c in self.cells(tag) for o in c.outputs)


def output_text(output) -> str:
    if output.get("output_type") == "stream":
        return output["text"]
    return (output.get("data") or {}).get("text/plain", "")


_RUNS: dict[Path, Executed] = {}


@pytest.fixture(scope="session")
def executed(binder_python, tmp_path_factory):
    """Execute a notebook with the binder environment (once per test session) and read it back."""
    out = tmp_path_factory.mktemp("executed")

    def run(notebook: Path) -> Executed:
        if notebook not in _RUNS:
            target = out / notebook.name
            result = subprocess.run(
                [str(binder_python), "-m", "drawb.notebook.headless", str(notebook), "--out", str(target)],
                capture_output=True, text=True, timeout=600, cwd=ROOT,
            )
            _RUNS[notebook] = Executed(result, target)
        return _RUNS[notebook]

    return run


def test_there_is_a_tour_and_one_notebook_per_topic():
    assert {p.name for p in NOTEBOOKS} >= {"tour.ipynb", "mig.ipynb", "sharing.ipynb", "migration.ipynb",
                                           "selectors-and-manifests.ipynb"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_without_errors(executed, notebook):
    done = executed(notebook)
    assert done.run.returncode == 0, done.run.stderr[-3000:]
    assert "no errors" in done.run.stdout
    for cell in done.notebook.cells:
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.get("output_type") == "error"
                  or (o.get("output_type") == "stream" and o.get("name") == "stderr")]
        if "raises-exception" not in cell.metadata.get("tags", []):
            assert not errors, f"{notebook.name}: {cell.source[:80]!r} shows {errors}"
        assert cell.execution_count is not None


@pytest.fixture(scope="session")
def tour(executed):
    return executed(ROOT / "notebooks" / "tour.ipynb")


def test_tour_shows_classes_slices_and_the_device_table(tour):
    rows = [line for line in tour.text("device-table").splitlines() if " gpu.nvidia.com " in line]
    assert len(rows) == 38 and sum(" mig " in r for r in rows) == 14
    classes = next(c for c in tour.notebook.cells if c.source == "%dra classes")
    assert "gpu.nvidia.com" in output_text(classes.outputs[-1]) and "mig.nvidia.com" in output_text(classes.outputs[-1])


def test_tour_runs_the_cuda_check_pod_on_the_simulated_cluster(tour):
    text = tour.text("cuda-check").splitlines()
    claim = next(line for line in text if "cuda-check-gpu-" in line and "gpu: 1 x gpu.nvidia.com" in line)
    assert " allocated,reserved " in claim and "[cuda-check]" in claim
    [listed] = [line for line in text if line.startswith("GPU ")]
    assert GPU_LINE.fullmatch(listed)
    assert any(" cuda-check " in line and " Succeeded " in line for line in text)
    assert "not a real cluster" in "\n".join(text)


def test_tour_check_runner_shows_stages_log_and_verdict_once(tour):
    [cell, result] = tour.cells("check-runner")
    displays = [o for o in cell.outputs if WIDGET in (o.get("data") or {})]
    assert len(displays) == 1 and len(cell.outputs) == 1  # shown live, not again when the cell returns it
    text = output_text(displays[0])
    assert text.startswith("%dra check single-gpu: PASS [from the simulated cluster")
    for stage in ("allocated", "reserved", "scheduled", "running", "exited", "verdict"):
        assert f"] {stage} " in text
    assert GPU_LINE.search(text)
    assert output_text(result.outputs[0]).startswith("('PASS', 'gpu-")


def test_tour_shares_a_claim_between_two_containers(tour):
    text = tour.text("sharing")
    lines = [line.split(" | ")[-1] for line in text.splitlines() if re.match(r"  \| (first|second) \| GPU 0", line)]
    assert len(lines) == 2 and lines[0] == lines[1] and GPU_LINE.fullmatch(lines[0])
    assert "PASS: each container saw exactly the 1 device(s)" in text


def test_tour_runs_a_mig_device_by_profile(tour):
    text = tour.text("mig")
    assert "MIG 3g.40gb" in text and "PASS" in text and "(MIG-" in text


def test_tour_shows_the_extended_resource_gate_and_the_doctor(tour):
    gate = tour.text("gate")
    assert "nvidia_gpu_allocatable" in gate
    assert "extended:  no: DRAExtendedResource is off" in gate and "resourceClaimTemplateName: triton-gpu" in gate
    doctor = tour.text("doctor")
    assert re.search(r"WARN  DRAExtendedResource +off: a dry-run DeviceClass create dropped spec.extendedResourceName",
                     doctor)


def test_tour_explains_a_pending_pod(tour):
    text = tour.text("why")
    assert re.search(r"llm-trainer +<NA> +Pending", text)
    assert "why pod default/llm-trainer: pending (first empty stage: free)" in text
    assert "cannot allocate all claims" in text  # the scheduler's own words, beside drawb's explanation
    assert "dropped: hgx-h200-03/gpu-0: allocated to claim gpu-demo/trainer-" in text


def test_tour_shows_a_capacity_table(tour):
    text = tour.text("capacity")
    assert re.search(r"\d+ more copies of template/single-gpu fit now, on 4 of 4 nodes", text)
    for node in ("a100-sxm-node-01", "dgx-h100-02", "hgx-h200-03"):
        assert re.search(rf"{node} +\d+ devices for gpu", text)


def test_mig_notebook(executed):
    mig = executed(ROOT / "notebooks" / "mig.ipynb")
    assert len([line for line in mig.text("mig-devices").splitlines() if " mig " in line]) == 14
    assert "9 of 46 devices match" in mig.text("select")
    assert "MIG 1g.10gb" in mig.text("check") and ": PASS" in mig.text("check")
    two = mig.text("two")
    assert "two-slices-mig-" in two and "allocated,reserved" in two
    assert len(re.findall(r"MIG 1g\.10gb +Device +\d: \(UUID: MIG-", two)) == 2
    assert len([line for line in two.splitlines() if line.startswith("GPU ")]) == 1  # both under one parent GPU
    assert re.search(r"\d+ more copies of template/mig-slice fit now", mig.text("capacity"))


def test_sharing_notebook(executed):
    sharing = executed(ROOT / "notebooks" / "sharing.ipynb")
    assert "PASS: each container saw exactly the 1 device(s)" in sharing.text("shared")
    slicing = "\n".join(str((o.get("data") or {}).get("text/markdown", "")) for c in sharing.cells("time-slicing")
                        for o in c.outputs)
    assert "strategy: TimeSlicing" in slicing and "interval: Short" in slicing
    assert ": PASS" in sharing.text("time-slicing")
    mps = "\n".join(str((o.get("data") or {}).get("text/markdown", "")) for c in sharing.cells("mps") for o in c.outputs)
    assert "strategy: MPS" in mps and "defaultActiveThreadPercentage: 25" in mps
    assert ": PASS" in sharing.text("mps")


def test_migration_notebook(executed):
    migration = executed(ROOT / "notebooks" / "migration.ipynb")
    report = migration.text("migrate")
    assert "Deployment/triton" in report and "legacy:    nvidia.com/gpu: 1" in report
    written = migration.text("written")
    assert "resourceClaimTemplateName: triton-gpu" in written and "# one full GPU" not in written
    assert "# Inference server: one GPU per replica." in written  # comments kept
    assert re.search(r"WARN +DRAExtendedResource +off", migration.text("gate"))


def test_tour_shows_the_claim_builder(tour):
    [cell] = tour.cells("claim-builder")
    [shown] = cell.outputs[-1:]
    assert WIDGET in shown["data"] and "ClaimBuilder" in shown["data"]["text/plain"]


def test_tour_shows_the_device_browser_and_the_map(tour):
    for tag in ("browse", "map"):
        [cell] = tour.cells(tag)
        assert any(WIDGET in (o.get("data") or {}) for o in cell.outputs), f"{tag}: no widget shown"
