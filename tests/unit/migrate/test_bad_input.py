"""Bad input is a named error with the file and line, on both front ends (exit status 2), and nothing is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from drawb.migrate import InvalidLegacyRequest, ManifestNotFound, ManifestNotYaml, UnknownWorkloadKind, read_paths
from drawb.migrate import rewrite_sources
from drawb.migrate.sources import Source
from tests.conftest import DATA

BAD = DATA / "migrate-bad"
GOOD = DATA / "migrate" / "01-deployment-single-gpu.yaml"
DRAWB = Path(sys.executable).with_name("drawb")

CASES = [
    ("not-yaml.yaml", ManifestNotYaml, "not-yaml.yaml:9:"),
    ("unknown-kind.yaml", UnknownWorkloadKind, "Deploymnet 'typo' asks for NVIDIA GPUs"),
    ("zero-gpus.yaml", InvalidLegacyRequest, "zero-gpus.yaml:11: container 'app' asks for nvidia.com/gpu: 0"),
    ("fraction.yaml", InvalidLegacyRequest, "not a whole number"),
]


@pytest.mark.parametrize("name,error,text", CASES, ids=[c[0] for c in CASES])
def test_named_error_with_where(name, error, text):
    with pytest.raises(error, match=None) as caught:
        rewrite_sources(read_paths([str(BAD / name)]))
    assert text in str(caught.value)
    assert caught.value.hint


def test_unknown_kind_suggests_the_close_one():
    with pytest.raises(UnknownWorkloadKind) as caught:
        rewrite_sources(read_paths([str(BAD / "unknown-kind.yaml")]))
    assert "did you mean kind: Deployment?" in caught.value.hint


@pytest.mark.parametrize("value,words", [
    ("1.5", "not a whole number"), ("-1", "asks for no device"), ("true", "not a number of devices"),
    ("'two'", "not a quantity"),
])
def test_counts_the_api_server_would_refuse(value, words):
    text = f"kind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: a\n    resources:\n      limits:\n        nvidia.com/gpu: {value}\n"
    with pytest.raises(InvalidLegacyRequest, match=words):
        rewrite_sources([Source("p.yaml", text)])


def test_requests_must_match_limits():
    text = ("kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    resources:\n"
            "      limits: {nvidia.com/gpu: 2}\n      requests: {nvidia.com/gpu: 1}\n")
    with pytest.raises(InvalidLegacyRequest, match="must be equal"):
        rewrite_sources([Source("p.yaml", text)])
    with pytest.raises(InvalidLegacyRequest, match="without a limit"):
        rewrite_sources([Source("p.yaml", text.replace("      limits: {nvidia.com/gpu: 2}\n", ""))])


def test_a_missing_path_is_named():
    with pytest.raises(ManifestNotFound, match="nope.yaml: no such file or folder"):
        read_paths(["nope.yaml"])


def drawb(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120, input=stdin)


@pytest.mark.parametrize("name,error,text", CASES, ids=[c[0] for c in CASES])
def test_cli_exit_2_and_nothing_written(tmp_path, name, error, text):
    out = tmp_path / "out"
    result = drawb("migrate", str(GOOD), str(BAD / name), "--out", str(out))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"{error.__name__}: ") and text in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("name,error,text", CASES, ids=[c[0] for c in CASES])
def test_magic_fails_the_cell_with_the_same_error(shell, tmp_path, name, error, text):
    out = tmp_path / "out"
    err = shell.fails(f"%dra migrate {GOOD} {BAD / name} --out {out}")
    assert err.startswith(f"{error.__name__}: ") and text in err
    assert not out.exists()


def test_cli_without_manifests_is_a_usage_error():
    result = drawb("migrate")
    assert result.returncode == 2 and result.stderr.startswith("UsageError: drawb migrate needs manifests")


def test_out_never_overwrites_an_input(tmp_path):
    src = tmp_path / "deploy.yaml"
    src.write_text(GOOD.read_text())
    result = drawb("migrate", str(src), "--out", str(tmp_path))
    assert result.returncode == 2 and "would overwrite the input" in result.stderr
    assert src.read_text() == GOOD.read_text()
