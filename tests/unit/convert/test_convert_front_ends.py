"""``drawb convert`` and ``%dra convert``: the diff on stdout (a patch), ``--out``, and named errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import DATA

CONVERT = DATA / "convert"
ROOT = Path(__file__).resolve().parents[3]


def drawb(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drawb.cli", *args], capture_output=True, text=True, timeout=120,
                          input=stdin, cwd=ROOT)


def test_cli_prints_a_patch_that_patch_applies(tmp_path):
    work = tmp_path / "manifests"
    work.mkdir()
    (work / "claims.yaml").write_bytes((CONVERT / "v1beta1-claims.yaml").read_bytes())
    result = drawb("convert", str(work / "claims.yaml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"--- {work / 'claims.yaml'}\n+++ {work / 'claims.yaml'}\n@@ ")
    assert result.stderr.startswith("convert: 4 document(s) rewritten to resource.k8s.io/v1 in 1 of 1 source(s)")
    patched = subprocess.run(["patch", "-p0", "-s"], input=result.stdout, text=True, cwd="/", capture_output=True)
    assert patched.returncode == 0, patched.stderr
    assert (work / "claims.yaml").read_text() == drawb_converted(CONVERT / "v1beta1-claims.yaml")


def drawb_converted(path: Path) -> str:
    from drawb.convert import convert_text

    return convert_text(path.read_text())[0]


def test_cli_writes_out_one_file_or_a_folder_and_never_over_an_input(tmp_path):
    one = tmp_path / "claims-v1.yaml"
    result = drawb("convert", str(CONVERT / "v1beta1-claims.yaml"), "--out", str(one))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and f"; wrote {one}" in result.stderr
    assert {d["apiVersion"] for d in yaml.safe_load_all(one.read_text())} == {"resource.k8s.io/v1"}
    folder = tmp_path / "v1"
    result = drawb("convert", str(CONVERT), "--out", str(folder))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["v1beta1-claims.yaml", "v1beta2-claims.yaml"]
    result = drawb("convert", str(CONVERT), "--out", str(one))
    assert result.returncode == 2 and "ConvertOutputRefused: --out" in result.stderr and "is a file" in result.stderr
    result = drawb("convert", str(one), "--out", str(one))
    assert result.returncode == 2 and "would overwrite the input" in result.stderr


def test_cli_reads_standard_input_and_names_bad_input():
    result = drawb("convert", "-", stdin="apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: x}\n")
    assert result.returncode == 0, result.stderr
    assert "-apiVersion: resource.k8s.io/v1beta2\n+apiVersion: resource.k8s.io/v1\n" in result.stdout
    result = drawb("convert", "-", stdin="kind: [\n")
    assert result.returncode == 2 and result.stderr.startswith("ManifestNotYaml: <stdin>:2:1: not YAML")
    result = drawb("convert", "nowhere.yaml")
    assert result.returncode == 2 and "nowhere.yaml: no such file or folder" in result.stderr
    result = drawb("convert", "-", "--to", "v1beta2", stdin="")
    assert result.returncode == 2 and "invalid choice: 'v1beta2'" in result.stderr


def test_magic_line_and_cell_forms(shell):
    result = shell.run(f"%dra convert {CONVERT / 'v1beta2-claims.yaml'}")
    assert len(result.converted()) == 4 and "+apiVersion: resource.k8s.io/v1" in result.diff()
    assert "<pre>" in result._repr_html_()
    cell = "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaim\nmetadata: {name: old}\n"
    result = shell.run(f"%%dra convert\n{cell}")
    assert result.diff() == "" and result.notes() == [
        "<cell>: ResourceClaim/old (resource.k8s.io/v1alpha3): left as it is: convert rewrites resource.k8s.io/v1beta1 "
        "and resource.k8s.io/v1beta2, not resource.k8s.io/v1alpha3"]
