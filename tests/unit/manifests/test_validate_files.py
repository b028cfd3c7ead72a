"""``validate`` on the user's own files: the seed's five manifests, and broken variants with their findings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from drawb.cli import main

ROOT = Path(__file__).resolve().parents[3]
SEED = [ROOT / "tests/data/fixtures" / name for name in (
    "deviceclasses.yaml", "resourceslices.yaml", "resourceslices-dynamic-mig-h100.yaml")] + [
    ROOT / "testcluster/examples/gpu-pod.yaml"]
LEGACY = ROOT / "tests/data/fixtures/resourceslices-legacy-v25.3-v1beta1.yaml"  # resource.k8s.io/v1beta1

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          {extra}
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: ctr
    image: ubuntu:22.04
    resources:
      claims:
      - name: {used}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
"""


def variant(extra: str = "count: 1", used: str = "gpu") -> str:
    return TEMPLATE.format(extra=extra, used=used)


def selector(expression: str) -> str:
    return f"selectors:\n          - cel:\n              expression: '{expression}'"


# (name, manifest text, exit status, a finding the output must contain)
BROKEN = [
    ("beta-nesting", variant().replace("        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 1",
                                       "        deviceClassName: gpu.nvidia.com\n        count: 1"), 1,
     "has deviceClassName, count directly under the request; resource.k8s.io/v1 nests them under 'exactly:'"),
    ("typo-attribute", variant(selector('device.attributes["gpu.nvidia.com"].prodctName == "x"')), 0,
     "`prodctName` is not an attribute of gpu.nvidia.com; did you mean `productName`?"),
    ("typo-attribute-index", variant(selector('device.attributes["gpu.nvidia.com"]["architectur"] == "Hopper"')), 0,
     "`architectur` is not an attribute of gpu.nvidia.com; did you mean `architecture`?"),
    ("typo-domain", variant(selector('device.attributes["gpu.nvida.com"].type == "gpu"')), 0,
     "domain `gpu.nvida.com` does not exist in the cluster's device attributes; did you mean `gpu.nvidia.com`?"),
    ("typo-capacity", variant(selector('device.capacity["gpu.nvidia.com"].memroy.compareTo(quantity("40Gi")) >= 0')),
     0, "`memroy` is not a capacity of gpu.nvidia.com; did you mean `memory`?"),
    ("missing-class", variant().replace("deviceClassName: gpu.nvidia.com", "deviceClassName: gpu.nvidia.cmo"), 0,
     "DeviceClass 'gpu.nvidia.cmo' is not installed in the connected cluster: the API server accepts the claim, and "
     "pods that use it stay Pending until the class exists; did you mean 'gpu.nvidia.com'?"),
    ("claim-name-mismatch", variant(used="gpus"), 1,
     "container 'ctr' uses claim 'gpus', which the pod's resourceClaims do not list; listed: gpu"),
    ("count-no-node-satisfies", variant("count: 16"), 0,
     "request 'gpu' asks for 16 devices but no node has that many that match: at most 8 on"),
    ("mig-count-no-node", variant("count: 15").replace("deviceClassName: gpu.nvidia.com", "deviceClassName: mig.nvidia.com"),
     0, "asks for 15 devices but no node has that many that match: at most 14 on dgx-h100-02"),
    ("matches-no-device", variant(selector('device.attributes["gpu.nvidia.com"].productName == "NVIDIA B300"')), 0,
     "request 'gpu' matches none of the cluster's 46 devices (DeviceClass 'gpu.nvidia.com', then the selectors)"),
    ("selector-does-not-compile", variant(selector('device.attributes["gpu.nvidia.com"].productName = "x"')), 1,
     "selector does not compile"),
    ("unknown-field", variant("counts: 2"), 1, "unknown field(s) 'counts'"),
    ("constraint-unknown-request", variant().replace(
        "      requests:\n", "      constraints:\n      - requests: [gpus]\n        matchAttribute: gpu.nvidia.com/uuid\n"
        "      requests:\n"), 1, "constraint names request 'gpus', which the claim does not have; requests: gpu"),
    ("match-attribute-unqualified", variant().replace(
        "      requests:\n", "      constraints:\n      - matchAttribute: productName\n      requests:\n"), 1,
     "'productName' must be fully qualified: <domain>/<name>"),
    ("all-with-count", variant("allocationMode: All\n          count: 2"), 1,
     "allocationMode All takes every matching device; leave count out"),
    ("old-api-version", variant().replace("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v1beta3\n"),
     1, "resource.k8s.io/v1beta3 is not served by the connected cluster (it serves resource.k8s.io v1): use v1"),
    ("removed-alpha", variant().replace("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v1alpha2\n"),
     1, "resource.k8s.io/v1alpha2 is not served by the connected cluster (it serves resource.k8s.io v1): Kubernetes "
     "removed it after 1.30; use v1"),
    ("template-and-claim-name", variant().replace(
        "    resourceClaimTemplateName: one-gpu", "    resourceClaimTemplateName: one-gpu\n    resourceClaimName: x"), 1,
     "claim 'gpu' needs exactly one of resourceClaimName or resourceClaimTemplateName"),
    ("container-request-missing", variant().replace("      - name: gpu\n  resourceClaims", "      - name: gpu\n"
                                                    "        request: gpu2\n  resourceClaims"), 1,
     "container 'ctr' asks for request 'gpu2' of claim 'gpu', which has requests: gpu"),
    ("not-yaml", variant().replace("  name: trainer", "  name: [trainer"), 1, "not-yaml.yaml:18:5: not valid YAML: expected ',' or ']', but got ':'; nothing in this file was checked"),
    ("not-a-mapping", "- just\n- a list\n", 1, "a manifest is a mapping (apiVersion, kind, metadata, ...), got list"),
]


def validate(tmp_path: Path, name: str, text: str, capsys) -> tuple[int, str]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    status = main(["validate", str(path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out


def test_the_seed_manifests_are_valid(capsys):
    assert main(["validate", *map(str, SEED)]) == 0
    out = capsys.readouterr().out
    assert "error:" not in out
    assert out.splitlines()[-1].startswith("valid: 24 document(s) in 4 file(s), 0 error(s), 1 warning(s)")


def test_beta_slices_are_refused_by_a_default_134_server_with_the_way_out(capsys):
    assert main(["validate", str(LEGACY)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"error: {LEGACY}: ResourceSlice/a100-sxm-node-legacy-gpu.nvidia.com-6d4dk apiVersion: "
                      "resource.k8s.io/v1beta1 is not served by the connected cluster (it serves resource.k8s.io v1): "
                      "use v1, `drawb convert FILE` rewrites it")
    assert main(["validate", "--no-cluster", str(LEGACY)]) == 1
    assert ("resource.k8s.io/v1beta1 is not served by a Kubernetes 1.34 API server with default settings: use v1, "
            "`drawb convert FILE` rewrites it (or start the API server with "
            "--runtime-config=resource.k8s.io/v1beta1=true)") in capsys.readouterr().out


@pytest.mark.parametrize("name, text, status, finding", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_variant_gives_its_finding_and_exit_status(tmp_path, capsys, name, text, status, finding):
    got, out = validate(tmp_path, name, text, capsys)
    assert finding in out
    assert got == status, out
    assert out.splitlines()[-1].startswith("invalid: " if status else "valid: ")


def test_the_unbroken_variant_is_clean(tmp_path, capsys):
    status, out = validate(tmp_path, "clean", variant(), capsys)
    assert status == 0 and out.splitlines() == [
        "valid: 2 document(s) in 1 file(s), 0 error(s), 0 warning(s); checked against Kubernetes v1.34.13 and the "
        "simulated cluster 'default'"]


def test_a_folder_and_standard_input_on_the_command_line(tmp_path):
    (tmp_path / "ok.yaml").write_text(variant())
    (tmp_path / "broken.yml").write_text(variant(used="gpus"))
    drawb = Path(sys.executable).with_name("drawb")
    out = subprocess.run([str(drawb), "validate", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "2 file(s)" in out.stdout and "uses claim 'gpus'" in out.stdout
    out = subprocess.run([str(drawb), "validate", "-"], input=variant(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("valid: 2 document(s) in 1 file(s)"), out.stderr


def test_without_the_cluster_only_schema_and_references(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(variant("count: 16").replace("gpu.nvidia.com", "gpu.nvidia.cmo"))
    assert main(["validate", "--no-cluster", str(path)]) == 0
    out = capsys.readouterr().out
    assert "no cluster" in out and "warning" not in out.replace("0 warning(s)", "")


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err.startswith(f"ManifestNotFound: no file or folder {tmp_path / 'nope.yaml'}")


def test_the_magic_validates_files_and_cells(shell, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(variant(used="gpus"))
    report = shell.run(f"%dra validate {path}")
    assert report.exit_status == 1 and "uses claim 'gpus'" in str(report)
    assert list(report.frame().columns) == ["level", "file", "object", "path", "message"]
    report = shell.run("%%dra validate\n" + variant(selector('device.attributes["gpu.nvidia.com"].prodctName == "x"')))
    assert report.exit_status == 0 and "did you mean `productName`?" in str(report)
    assert "<cell>" in str(report)
    err = shell.fails("%dra validate -")
    assert err.startswith("UsageError: - (standard input) is for the command line")
