"""``drawb migrate`` and ``%dra migrate`` on the simulated cluster: the report, the diff, the export."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import DATA

CORPUS = DATA / "migrate"
DRAWB = Path(sys.executable).with_name("drawb")


def drawb(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120, input=stdin)


def test_cli_exports_every_rewritten_file(tmp_path):
    out = tmp_path / "migrated"
    result = drawb("migrate", str(CORPUS), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("migrate: 26 workload(s) with nvidia.com/gpu or nvidia.com/mig-* requests in 26 of "
                                    "26 source(s); roads checked against simulated cluster 'default' "
                                    "(DRAExtendedResource off)")
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in CORPUS.glob("*.yaml"))
    docs = list(yaml.safe_load_all((out / "01-deployment-single-gpu.yaml").read_text()))
    assert [d["kind"] for d in docs] == ["ResourceClaimTemplate", "Deployment"]
    assert result.stdout.count(" (migrated)\n") == 26


def test_cli_reads_standard_input_and_shows_the_roads():
    text = (CORPUS / "10-mig-1g10gb-deployment.yaml").read_text()
    result = drawb("migrate", "-", stdin=text)
    assert result.returncode == 0, result.stderr
    assert "<stdin>  Deployment/notebooks" in result.stdout
    assert "claims:    fits now on 1 of the 4 nodes it may run on (dgx-h100-02)" in result.stdout
    assert "extended:  no: DRAExtendedResource is off" in result.stdout
    assert "-            nvidia.com/mig-1g.10gb: 1" in result.stdout


def test_side_by_side(tmp_path):
    result = drawb("migrate", str(CORPUS / "05-cronjob-nightly-eval.yaml"), "--side-by-side")
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if "nvidia.com/gpu: 1" in line and "|" in line]
    assert line.split() == ["nvidia.com/gpu:", "1", "|", "-", "name:", "gpu"]


def test_magic_line_and_cell_forms(shell):
    result = shell.run(f"%dra migrate {CORPUS / '06-pod-init-check.yaml'}")
    assert result.rows()[0]["workload"] == "Pod/gpu-with-precheck"
    assert "legacy" in result._repr_html_() and "rewritten" in result._repr_html_()
    cell = (CORPUS / "13-mig-2g-statefulset.yaml").read_text()
    result = shell.run(f"%%dra migrate\n{cell}")
    assert result.rows()[0]["source"] == "<cell>"
    assert "mig-2g-20gb" in result.rewritten_yaml()


def test_dry_run_through_the_simulated_cluster(shell):
    result = shell.run(f"%dra migrate {CORPUS / '04-job-training.yaml'} --dry-run -n gpu-demo")
    assert result.applied == "dry run"
    assert [o["kind"] for o in result.server_objects] == ["ResourceClaimTemplate", "Job"]
    assert shell.run("%dra connect") is not None


def test_cluster_workloads_are_read_back_without_server_fields():
    from drawb.cluster.sim.cluster import SimCluster
    from drawb.migrate import migrate, read_cluster

    cluster = SimCluster(workloads=False)
    deployment = yaml.safe_load((CORPUS / "01-deployment-single-gpu.yaml").read_text())
    deployment["metadata"]["namespace"] = "gpu-demo"
    owned = yaml.safe_load((CORPUS / "08-pod-two-containers.yaml").read_text())
    owned["metadata"].update(namespace="gpu-demo", ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}])
    cluster.apply([deployment, owned])
    [source] = read_cluster(cluster, "gpu-demo")
    assert source.name == "cluster:gpu-demo/Deployment/triton"
    stored = yaml.safe_load(source.text)
    assert set(stored["metadata"]) <= {"name", "namespace", "labels", "annotations"}
    result = migrate([source], cluster, "gpu-demo")
    assert result.rows()[0]["workload"] == "Deployment/triton"
    assert "claims:\n          - name: gpu" in result.files[0].new_text
