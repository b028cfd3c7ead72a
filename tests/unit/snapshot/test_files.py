"""Snapshot files: written whole or not at all, and every bad file a named error on both front ends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drawb.cli import main
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.snapshot import (
    NotASnapshot,
    SnapshotFormatVersion,
    SnapshotNotYamlOrJson,
    SnapshotTruncated,
    SnapshotUnreadable,
    read,
    write,
)
from drawb.snapshot.capture import capture

DRAWB = Path(sys.executable).with_name("drawb")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "cluster.json"
    write(capture(SimCluster("default")), path)
    return path


def drawb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_a_snapshot_holds_versions_and_every_kind(saved):
    document = json.loads(saved.read_text())
    assert document["kind"] == "DrawbSnapshot" and document["formatVersion"] == 1 and document["drawbVersion"]
    assert list(document)[-1] == "counts"
    assert document["cluster"]["serverVersion"] == "v1.34.13" and document["cluster"]["kubernetesVersion"] == "1.34"
    assert document["cluster"]["gateSources"]["DRAPartitionableDevices"] == "probed"
    assert document["counts"] == {"Namespace": 1, "Node": 4, "DeviceClass": 5, "ResourceSlice": 8,
                                  "ResourceClaimTemplate": 1, "ResourceClaim": 2, "Pod": 2}
    assert read(saved).counts() == document["counts"]


def test_yaml_and_json_read_back_the_same(saved, tmp_path):
    snapshot = read(saved)
    write(snapshot, tmp_path / "cluster.yaml")
    assert (tmp_path / "cluster.yaml").read_text().startswith("kind: DrawbSnapshot\n")
    assert read(tmp_path / "cluster.yaml").to_document() == snapshot.to_document()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(saved, tmp_path, monkeypatch):
    target = tmp_path / "cluster.json"
    target.write_text("old")
    snapshot = read(saved)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("drawb.cluster.snapshot.document.os.replace", broken_replace)
    with pytest.raises(SnapshotUnreadable, match="No space left on device"):
        write(snapshot, target)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["cluster.json"]


def test_writing_into_a_missing_folder_is_named(saved, tmp_path):
    with pytest.raises(SnapshotUnreadable, match="cannot write snapshot"):
        write(read(saved), tmp_path / "nope" / "cluster.json")


def _bad_files(saved: Path, where: Path) -> dict[str, tuple[Path, type, str]]:
    text = saved.read_text()
    document = json.loads(text)
    other = dict(document, formatVersion=2, drawbVersion="9.0.0")
    yaml_text = yaml.safe_dump(document, sort_keys=False)
    files = {
        "other format version": ("other.json", json.dumps(other), SnapshotFormatVersion,
                                 "format version 2 (written by drawb 9.0.0)"),
        "truncated JSON": ("cut.json", text[: len(text) // 2], SnapshotTruncated, "ends in the middle of its JSON"),
        "truncated YAML": ("cut.yaml", yaml_text[: len(yaml_text) // 2], SnapshotTruncated, "cut short"),
        "empty": ("empty.json", "", SnapshotTruncated, "is empty"),
        "not YAML": ("bad.yaml", "kind: [DrawbSnapshot\nobjects: }{\n", SnapshotNotYamlOrJson, "not valid YAML or JSON"),
        "not JSON": ("bad.json", '{"kind": "DrawbSnapshot",, }', SnapshotNotYamlOrJson, "not valid JSON"),
        "plain text": ("notes.txt", "just some notes\n", SnapshotNotYamlOrJson, "plain text"),
        "binary": ("blob.gz", b"\x1f\x8b\x08\x00\xff\xfe".decode("latin-1"), SnapshotNotYamlOrJson, "binary"),
        "a pod manifest": ("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", NotASnapshot,
                           "holds a Pod"),
        "kubectl output": ("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n", NotASnapshot, "holds a List"),
    }
    out = {}
    for case, (name, content, error, message) in files.items():
        path = where / name
        if case == "binary":
            path.write_bytes(content.encode("latin-1"))
        else:
            path.write_text(content)
        out[case] = (path, error, message)
    return out


CASES = ["other format version", "truncated JSON", "truncated YAML", "empty", "not YAML", "not JSON",
         "plain text", "binary", "a pod manifest", "kubectl output"]


@pytest.mark.parametrize("case", CASES)
def test_bad_files_are_named_errors(saved, tmp_path, case):
    path, error, message = _bad_files(saved, tmp_path)[case]
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        read(path)


@pytest.mark.parametrize("case", CASES)
def test_bad_files_exit_2_on_the_command_line(saved, tmp_path, case, capsys):
    path, error, message = _bad_files(saved, tmp_path)[case]
    assert main(["--snapshot", str(path), "devices"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{error.__name__}: ") and message in err and "Traceback" not in err


def test_a_bad_file_exits_2_from_the_installed_command(saved, tmp_path):
    path, error, message = _bad_files(saved, tmp_path)["truncated JSON"]
    out = drawb("connect", "--snapshot", str(path))
    assert out.returncode == 2 and out.stderr.startswith("SnapshotTruncated: ") and "Traceback" not in out.stderr


@pytest.mark.parametrize("case", ["other format version", "truncated JSON", "not YAML", "a pod manifest"])
def test_bad_files_fail_the_cell_in_the_notebook(saved, tmp_path, shell, case):
    path, error, message = _bad_files(saved, tmp_path)[case]
    err = shell.fails(f"%dra connect --snapshot {path}")
    assert err.startswith(f"{error.__name__}: ") and message in err


def test_a_missing_file_is_named(tmp_path, capsys):
    assert main(["--snapshot", str(tmp_path / "nope.json"), "devices"]) == 2
    assert capsys.readouterr().err.startswith("SnapshotUnreadable: cannot read snapshot")


def test_snapshot_with_a_kubeconfig_is_a_usage_error(saved, tmp_path, capsys):
    assert main(["--snapshot", str(saved), "--kubeconfig", str(tmp_path / "k"), "devices"]) == 2
    assert capsys.readouterr().err.startswith("UsageError: --snapshot replays a saved cluster offline")


def test_save_usage_errors_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["snapshot", "save", "a.json", "b.json"]) == 2
    assert capsys.readouterr().err.startswith("UsageError: snapshot save takes one FILE")
    assert main(["snapshot", "from-files", "a.yaml"]) == 2
    assert "needs --output FILE" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
