"""Snapshots of the real control plane, replayed in the simulated cluster.

A snapshot saved from the local control plane (claims allocated by the real scheduler, pods running)
and loaded into the simulated cluster gives identical inventory frames, selector results and
allocation previews; a redacted one gives them identical up to the renaming; ``from-files`` on
real ``kubectl get ... -o yaml`` output gives the same frames. And a claim the simulated scheduler
allocates in the replay gets the device the real scheduler gives it on the original.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from drawb import versions
from drawb.cluster.snapshot import read, write
from drawb.snapshot.capture import capture
from drawb.snapshot.kubectl import KUBECTL_COMMAND, from_files
from drawb.snapshot.redact import redact
from drawb.cluster.snapshot.replay import replay
from drawb.testing import build
from drawb.testing import snapshot_compare as compare
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for

# the gates whose fields the API server of the live tier's version drops
DRA_GATES = versions.rules(build.target_k8s_version()).field_gates


pytestmark = pytest.mark.live

DRAWB = Path(sys.executable).with_name("drawb")
SELECTORS = {
    "h100": ("gpu.nvidia.com", ["device.attributes['gpu.nvidia.com'].productName.contains('H100')"]),
    "mig 3g": ("mig.nvidia.com", ["device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"]),
    "80Gi or more": ("gpu.nvidia.com", ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"]),
    "free text": (None, ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].uuid != ''"]),
}


def claim(name: str, namespace: str, class_name: str = "gpu.nvidia.com", count: int = 1,
          match: str | None = None, cel: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": class_name, "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    devices: dict = {"requests": [{"name": "gpu", "exactly": exactly}]}
    if match:
        devices["constraints"] = [{"matchAttribute": match}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": devices}}


def pod(name: str, namespace: str, entry: dict, node: str | None = None) -> dict:
    spec: dict = {
        "containers": [{"name": "ctr", "image": "ubuntu:22.04", "command": ["sleep", "9999"],
                        "env": [{"name": "API_TOKEN", "value": "not-for-snapshots"}],
                        "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", **entry}],
    }
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


PREVIEWS = [claim("one", "x"), claim("two-same-root", "x", count=2, match="resource.kubernetes.io/pcieRoot"),
            claim("mig-1g", "x", "mig.nvidia.com", cel="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"),
            claim("eight", "x", count=8, match="gpu.nvidia.com/productName")]


@pytest.fixture(scope="module")
def workload(control_plane, kube):
    """Claims allocated by the real scheduler with pods running, and one claim no pod uses."""
    api = control_plane.api()
    ns = control_plane.create_namespace("snapshot")
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": ns},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com"}}]}}}}
    objects = [template, claim("mig", ns, "mig.nvidia.com"), claim("idle", ns, count=2),
               pod("from-template", ns, {"resourceClaimTemplateName": "one-gpu"}),
               pod("with-mig", ns, {"resourceClaimName": "mig"})]
    for obj in objects:
        api.create(obj)
    for name in ("from-template", "with-mig"):
        wait_for(lambda n=name: api.get(path_for("Pod", n, ns)).get("status", {}).get("phase") == "Running",
                 what=f"pod {name} Running", timeout=60)
    yield ns
    api.delete(path_for("Namespace", ns))


def settled(read_frames, take):
    """``take()`` between two equal reads of the original's frames (other tests' namespaces may still be
    going away): the frames and what ``take`` returned."""
    for _ in range(5):
        before = read_frames()
        taken = take()
        after = read_frames()
        if all(before[k].equals(after[k]) for k in before):
            return after, taken
    raise AssertionError("the control plane's DRA objects kept changing")


def assert_same(left: dict, right: dict) -> None:
    assert left.keys() == right.keys()
    for name in left:
        pd.testing.assert_frame_equal(left[name], right[name], obj=name)


def test_a_saved_snapshot_replays_identically(control_plane, kube, workload, tmp_path):
    path = tmp_path / "cluster.json"
    frames, snapshot = settled(lambda: compare.inventory(kube), lambda: capture(kube, namespace=workload))
    write(snapshot, path)
    real_gates = control_plane.cluster.feature_gates_enabled()
    assert snapshot.feature_gates == {g: real_gates[g] for g in DRA_GATES}
    assert snapshot.server_version == kube.server_version() and snapshot.kubernetes_version == "1.34"
    text = path.read_text()
    assert "not-for-snapshots" not in text and "managedFields" not in text
    claims = {c["metadata"]["name"]: c for c in snapshot.objects["ResourceClaim"]
              if c["metadata"]["namespace"] == workload}
    assert claims["mig"]["status"]["allocation"] and "status" not in claims["idle"]

    copy = replay(path)
    # the replay runs every DRA gate of its minor; those the snapshot recorded are as recorded
    assert copy.server_version() == kube.server_version()
    assert {g: copy.feature_gates[g] for g in snapshot.feature_gates} == snapshot.feature_gates
    assert_same(compare.inventory(copy), frames)
    assert (frames["devices"]["claim"].dropna() == f"{workload}/mig").any()
    original = compare.selections(kube, SELECTORS, "1.34")
    assert all(len(found) for found in original.values())
    assert_same(compare.selections(copy, SELECTORS, "1.34"), original)
    expected = compare.previews(kube, PREVIEWS, "1.34", real_gates)
    assert any(isinstance(r, list) for r in expected.values()) and any(r is None for r in expected.values())
    assert compare.previews(copy, PREVIEWS, "1.34", copy.feature_gates) == expected

    redacted, renaming = redact(read(path))
    write(redacted, tmp_path / "redacted.json")
    hidden = (tmp_path / "redacted.json").read_text()
    assert all(n["metadata"]["name"] not in hidden for n in kube.list("Node"))
    masked = replay(tmp_path / "redacted.json")
    assert_same(compare.inventory(masked), compare.inventory(kube, renaming.value))
    assert_same(compare.selections(masked, SELECTORS, "1.34"), compare.selections(kube, SELECTORS, "1.34", renaming.value))
    assert (compare.previews(masked, PREVIEWS, "1.34", masked.feature_gates)
            == compare.previews(kube, PREVIEWS, "1.34", real_gates, renaming.value))


def test_from_files_on_kubectl_output_gives_the_same_frames(control_plane, kube, workload, tmp_path):
    out = tmp_path / "kubectl.yaml"

    def kubectl_get():
        out.write_text(control_plane.kubectl(*KUBECTL_COMMAND.split()[1:]).stdout)

    frames, _ = settled(lambda: compare.inventory(kube), kubectl_get)
    proc = subprocess.run([str(DRAWB), "snapshot", "from-files", str(out), "-o", str(tmp_path / "s.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "server version and feature gates are unknown" in proc.stderr
    assert_same(compare.inventory(replay(tmp_path / "s.yaml")), frames)
    assert from_files([out]).counts() == read(tmp_path / "s.yaml").counts()


def test_the_replay_allocates_a_new_claim_as_the_real_scheduler_does(control_plane, kube, workload, tmp_path):
    path = tmp_path / "cluster.json"
    subprocess.run([str(DRAWB), "--kubeconfig", str(control_plane.kubeconfig), "-n", workload,
                    "snapshot", "save", str(path)], check=True, capture_output=True, timeout=120)
    node = "dgx-h100-02"
    new = [claim("pinned", workload, "mig.nvidia.com", count=3, match="gpu.nvidia.com/parentUUID",
                 cel="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"),
           pod("pinned", workload, {"resourceClaimName": "pinned"}, node=node)]
    copy = replay(path)
    copy.apply([dict(o, metadata=dict(o["metadata"])) for o in new])
    simulated = wait_for(lambda: (copy.get("ResourceClaim", "pinned", workload).get("status") or {}).get("allocation"),
                         what="the simulated scheduler's allocation", timeout=30)
    api = control_plane.api()
    for obj in new:
        api.create(obj)
    real = wait_for(lambda: api.get(path_for("ResourceClaim", "pinned", workload)).get("status", {}).get("allocation"),
                    what="the real scheduler's allocation", timeout=60)
    def devices(allocation: dict) -> list[tuple]:
        return [(r["request"], r["driver"], r["pool"], r["device"]) for r in allocation["devices"]["results"]]

    assert len(devices(real)) == 3 and devices(simulated) == devices(real)
    assert simulated["nodeSelector"] == real["nodeSelector"]
    assert copy.get("Pod", "pinned", workload)["spec"]["nodeName"] == node
