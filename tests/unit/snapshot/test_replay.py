"""A snapshot replayed in the simulated cluster reads, selects and allocates as its original did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.snapshot import read, write
from drawb.snapshot.capture import capture
from drawb.snapshot.redact import redact
from drawb.cluster.snapshot.replay import replay
from drawb.testing import snapshot_compare as compare

DRAWB = Path(sys.executable).with_name("drawb")
SELECTORS = {
    "h100 gpus": ("gpu.nvidia.com", ["device.attributes['gpu.nvidia.com'].productName.contains('H100')"]),
    "mig 1g": ("mig.nvidia.com", ["device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"]),
    "by uuid": ("gpu.nvidia.com", ["device.attributes['gpu.nvidia.com'].uuid.startsWith('GPU-')"]),
}


def claim(name: str, count: int, class_name: str = "gpu.nvidia.com", constraint: str | None = None) -> dict:
    devices: dict = {"requests": [{"name": "r", "exactly": {"deviceClassName": class_name, "count": count}}]}
    if constraint:
        devices["constraints"] = [{"matchAttribute": constraint}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


CLAIMS = [claim("one", 1), claim("four-same-root", 4, constraint="resource.kubernetes.io/pcieRoot"),
          claim("mig", 1, "mig.nvidia.com")]


@pytest.fixture(scope="module")
def original() -> SimCluster:
    return SimCluster("default")


@pytest.fixture(scope="module")
def saved(original, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "cluster.json"
    write(capture(original), path)
    return path


def test_replay_gives_identical_frames_selections_and_previews(original, saved):
    copy = replay(saved)
    assert copy.server_version() == original.server_version() and copy.feature_gates == original.feature_gates
    for name, frame in compare.inventory(original).items():
        pd.testing.assert_frame_equal(compare.inventory(copy)[name], frame, obj=name)
    for name, frame in compare.selections(original, SELECTORS, "1.34").items():
        assert len(frame), name
        pd.testing.assert_frame_equal(compare.selections(copy, SELECTORS, "1.34")[name], frame, obj=name)
    expected = compare.previews(original, CLAIMS, "1.34", original.feature_gates)
    assert any(isinstance(r, list) for r in expected.values()) and any(r is None for r in expected.values())
    assert compare.previews(copy, CLAIMS, "1.34", copy.feature_gates) == expected


def test_a_redacted_snapshot_is_identical_up_to_the_renaming(original, saved, tmp_path):
    redacted, renaming = redact(read(saved))
    path = write(redacted, tmp_path / "redacted.json")
    text = path.read_text()
    for node in original.list("Node"):
        assert node["metadata"]["name"] not in text
    for rs in original.list("ResourceSlice"):
        for device in rs["spec"]["devices"]:
            for attr in ("uuid", "pciBusID", "resource.kubernetes.io/pcieRoot"):
                value = (device.get("attributes") or {}).get(attr, {}).get("string")
                assert value is None or value.lower() not in text.lower(), (attr, value)
    assert any(v.startswith("pci1000:") for v in renaming.pci.values()) and renaming.uuids
    assert all(v in text for v in [*renaming.pci.values(), *renaming.uuids.values(), *renaming.names.values()])
    copy = replay(path)
    for name, frame in compare.inventory(original, renaming.value).items():
        pd.testing.assert_frame_equal(compare.inventory(copy)[name], frame, obj=name)
    for name, frame in compare.selections(original, SELECTORS, "1.34", renaming.value).items():
        pd.testing.assert_frame_equal(compare.selections(copy, SELECTORS, "1.34")[name], frame, obj=name)
    assert (compare.previews(copy, CLAIMS, "1.34", copy.feature_gates)
            == compare.previews(original, CLAIMS, "1.34", original.feature_gates, renaming.value))


def test_the_replayed_lifecycle_allocates_new_claims_and_keeps_old_ones(saved):
    copy = SimCluster(__import__("drawb.cluster.snapshot.replay", fromlist=["scenario"]).scenario(read(saved), "s"),
                      workloads=False, clock=ManualClock())
    before = {c["metadata"]["name"]: c["status"]["allocation"] for c in copy.list("ResourceClaim")}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new", "namespace": "default"},
           "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "one"}],
                    "containers": [{"name": "c", "image": "ubuntu", "command": ["sleep", "99"],
                                    "resources": {"claims": [{"name": "gpu"}]}}]}}
    copy.apply([claim("one", 1), pod])
    copy.sleep(30)
    after = {c["metadata"]["name"]: c.get("status", {}).get("allocation") for c in copy.list("ResourceClaim")}
    assert {k: after[k] for k in before} == before
    assert after["one"]["devices"]["results"][0]["driver"] == "gpu.nvidia.com"
    assert copy.get("Pod", "new", "default")["status"]["phase"] == "Running"
    running = {p["metadata"]["name"]: p["status"]["phase"] for p in copy.list("Pod")}
    assert set(running.values()) == {"Running"}


def test_a_pod_being_deleted_is_not_scheduled_in_the_replay(saved, tmp_path):
    snapshot = read(saved)
    going = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "going", "namespace": "default", "deletionTimestamp": "2026-12-01T21:00:00Z"},
             "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "one"}],
                      "containers": [{"name": "c", "image": "ubuntu", "resources": {"claims": [{"name": "gpu"}]}}]}}
    snapshot.objects["ResourceClaim"].append(claim("one", 1))
    snapshot.objects["Pod"].append(going)
    copy = replay(write(snapshot, tmp_path / "going.json"))
    assert not copy.get("Pod", "going", "default")["spec"].get("nodeName")
    assert "status" not in copy.get("ResourceClaim", "one", "default") or \
        not copy.get("ResourceClaim", "one", "default")["status"].get("allocation")


def test_save_and_replay_through_the_command_line(tmp_path):
    out = subprocess.run([str(DRAWB), "snapshot", "save", "s.yaml", "--redact"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Saved snapshot s.yaml (format 1, drawb ") and "redacted" in out.stdout
    assert "replay offline: drawb connect --snapshot s.yaml" in out.stdout
    out = subprocess.run([str(DRAWB), "--snapshot", "s.yaml", "devices", "--driver", "gpu.nvidia.com"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 1 + 38 and "node-001" in out.stdout


def test_save_and_connect_in_the_notebook(saved, shell, tmp_path):
    result = shell.run(f"%dra snapshot save {tmp_path / 'nb.yaml'}")
    assert f"replay offline: %dra connect --snapshot {tmp_path / 'nb.yaml'}" in repr(result)
    assert "<pre>Saved snapshot" in result._repr_html_() and read(tmp_path / "nb.yaml").counts()["Pod"] == 2
    result = shell.run(f"%dra connect --snapshot {saved}")
    assert f"simulated cluster replaying snapshot {saved}" in repr(result) and "v1.34.13" in repr(result)
    assert len(shell.run("%dra claims")) == 2
    assert json.loads(saved.read_text())["counts"]["Pod"] == len(shell.run("%dra pods"))
