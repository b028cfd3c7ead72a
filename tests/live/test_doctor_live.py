"""The doctor against the real control plane: gates off (1.34 defaults) and all DRA gates on.

Each probed gate must agree with the API server's own ``kubernetes_feature_enabled`` metric, the
doctor must leave every object as it found it (everything listed before and after), each failing
check is provoked once, and the CLI's exit status and ``--json`` are checked end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drawb import versions
from drawb.cluster.kube import KubeCluster
from drawb.doctor import diagnose
from drawb.doctor.probes import DEVICE_STATUS_GATE, PROBES
from drawb.testing import build
from drawb.testing.api import ApiError, path_for
from drawb.testing.cluster import LocalCluster
from drawb.testing.waiting import wait_for
from tests.live.conftest import ControlPlane

# the gates whose fields the API server of the live tier's version drops
DRA_GATES = versions.rules(build.target_k8s_version()).field_gates


pytestmark = pytest.mark.live

DRAWB = Path(sys.executable).with_name("drawb")
PROBED = [p.gate for p in PROBES]


def every_object(api) -> dict[tuple[str, str, str], str]:
    """(group/version/resource, namespace, name) -> resourceVersion of every listable object.

    Events count only when they are about a probe object: the components record their own at any time.
    Namespaces that earlier tests left being deleted are left out, with everything in them: the namespace
    controller and the garbage collector change and remove those objects on their own.
    """
    settling = {n["metadata"]["name"] for n in api.get("/api/v1/namespaces")["items"]
                if n["metadata"].get("deletionTimestamp")}
    found = {}
    groups = [("", "v1")] + [(g["name"], g["preferredVersion"]["groupVersion"])
                             for g in api.get("/apis")["groups"]]
    for _, group_version in groups:
        prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        for resource in api.get(prefix)["resources"]:
            if "/" in resource["name"] or "list" not in resource.get("verbs", []):
                continue
            for item in api.get(f"{prefix}/{resource['name']}").get("items", []):
                meta = item["metadata"]
                if meta.get("namespace") in settling or (resource["name"] == "namespaces" and meta["name"] in settling):
                    continue
                about = (item.get("involvedObject") or item.get("regarding") or {}).get("name", "")
                if resource["name"] == "events" and not about.startswith("drawb-doctor"):
                    continue  # the components' own events (a node registered) come and go; probes' must not
                found[(f"{group_version}/{resource['name']}", meta.get("namespace", ""), meta["name"])] = \
                    meta.get("resourceVersion", "")
    return found


def changed(before: dict, after: dict) -> dict[str, list]:
    """What appeared, disappeared or changed, ignoring leases (renewed by the components all the time)."""
    def keep(key):
        return not key[0].startswith("coordination.k8s.io/")
    return {
        "new": sorted(k for k in after.keys() - before.keys() if keep(k)),
        "gone": sorted(k for k in before.keys() - after.keys() if keep(k)),
        "modified": sorted(k for k in before.keys() & after.keys() if keep(k) and before[k] != after[k]),
    }


def by_name(report) -> dict:
    return {c.name: c for c in report.checks}


def assert_gates_agree_with_the_metric(report, cp):
    checks = by_name(report)
    for gate in PROBED:
        on = cp.feature_enabled(gate)
        assert checks[gate].status == ("PASS" if on else "WARN"), (gate, on, checks[gate])
        assert checks[gate].evidence.startswith("on: " if on else "off: "), checks[gate]
    assert checks[DEVICE_STATUS_GATE].status == ("PASS" if cp.feature_enabled(DEVICE_STATUS_GATE) else "WARN")


def doctor_cli(cp, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), "--kubeconfig", str(cp.kubeconfig), "doctor", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def all_gates_on(tmp_path_factory):
    """A second cluster with every DRA gate of 1.34 on, and resource.k8s.io/v1alpha3 served.

    kube-scheduler 1.34 with DRADeviceTaints lists DeviceTaintRules (v1alpha3) and schedules nothing
    until it can: the doctor's "DeviceTaintRule API" check reports exactly that.
    """
    cluster = LocalCluster(name=f"doctor-gates-{os.getpid()}", workdir=tmp_path_factory.mktemp("doctor"),
                           bin_dir=build.build().bin_dir,
                           feature_gates=versions.rules(build.target_k8s_version()).with_dependencies(
                               dict.fromkeys(DRA_GATES, True)),
                           runtime_config="resource.k8s.io/v1alpha3=true")
    try:
        cluster.up(scenario="default")
        cp = ControlPlane(cluster, "default")
        assert all(cp.feature_enabled(g) for g in DRA_GATES)
        yield cp
    finally:
        cluster.down()


@pytest.fixture
def kube(request):
    clusters = []

    def connect(cp) -> KubeCluster:
        clusters.append(KubeCluster(kubeconfig=str(cp.kubeconfig)))
        return clusters[-1]

    yield connect
    for c in clusters:
        c.close()


@pytest.mark.parametrize("gates", ["defaults", "all on"])
def test_doctor_probes_each_gate_and_leaves_nothing_behind(gates, control_plane, request, kube, timings):
    cp = control_plane if gates == "defaults" else request.getfixturevalue("all_gates_on")
    api = cp.api()
    before = every_object(api)
    report = diagnose(kube(cp))
    after = every_object(api)
    assert changed(before, after) == {"new": [], "gone": [], "modified": []}
    assert_gates_agree_with_the_metric(report, cp)
    checks = by_name(report)
    for name in ("server version", "resource.k8s.io API", "NVIDIA DeviceClasses", "GPU nodes publish slices",
                 "pools", "device plugin and DRA"):
        assert checks[name].status == "PASS", checks[name]
    timings[f"doctor_{gates.replace(' ', '_')}_s"] = report.seconds
    if gates == "all on":
        assert "implied" in checks[DEVICE_STATUS_GATE].evidence  # from the binding-conditions probe, not the metric
        assert checks["DeviceTaintRule API"].status == "PASS" and "v1alpha3" in checks["resource.k8s.io API"].evidence
    else:
        assert "DeviceTaintRule API" not in checks


def test_cli_exit_status_and_json(control_plane):
    out = doctor_cli(control_plane)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("doctor: cluster at https://127.0.0.1:") and "FAIL" not in out.stdout
    out = doctor_cli(control_plane, "--json")
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["result"] == "WARN" and not data["simulated"]
    assert {c["name"]: c["status"] for c in data["checks"]}["DRAExtendedResource"] == \
        ("PASS" if control_plane.feature_enabled("DRAExtendedResource") else "WARN")


def gpu_node(name: str, allocatable_gpus: int = 0) -> dict:
    status = {"allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110"}}
    if allocatable_gpus:
        status["allocatable"]["nvidia.com/gpu"] = str(allocatable_gpus)
        status["capacity"] = dict(status["allocatable"])
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}}, "status": status}


def gpu_slice(node: str, pool_slices: int = 1) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": pool_slices},
                     "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}]}}


def test_each_failing_check_is_reported_with_its_fix(all_gates_on, kube):
    cp, api = all_gates_on, all_gates_on.api()
    cluster = kube(cp)

    def failing() -> dict:
        report = diagnose(cluster)
        assert report.exit_status == 1
        return {c.name: c for c in report.checks if c.status == "FAIL"}

    try:
        api.create(gpu_node("bare-gpu-node"))
        fail = failing()["slices on bare-gpu-node"]
        assert "label nvidia.com/gpu.present=true" in fail.evidence and "spec.nodeName=bare-gpu-node" in fail.fix

        api.create(gpu_node("half-pool-node"))
        api.create(gpu_slice("half-pool-node", pool_slices=2))
        fail = failing()["pool gpu.nvidia.com/half-pool-node"]
        assert "1 of 2 slices present" in fail.evidence and "kubelet-plugin logs" in fail.fix

        api.create(gpu_node("plugin-node", allocatable_gpus=4))
        assert api.get(path_for("Node", "plugin-node"))["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        api.create(gpu_slice("plugin-node"))
        fail = failing()["double booking on plugin-node"]
        assert "offers 4 nvidia.com/gpu through the device plugin and 1 devices" in fail.evidence
        assert "nvidia.com/gpu.deploy.device-plugin=false" in fail.fix

        out = doctor_cli(cp)
        assert out.returncode == 1 and "FAIL  double booking on plugin-node" in out.stdout, out.stdout
    finally:
        for name in ("bare-gpu-node", "half-pool-node", "plugin-node"):
            api.delete(path_for("ResourceSlice", f"{name}-gpu"))
            api.delete(path_for("Node", name))


def test_no_device_classes_fails(all_gates_on, kube):
    api = all_gates_on.api()
    classes = api.get(path_for("DeviceClass"))["items"]
    for c in classes:
        api.delete(path_for("DeviceClass", c["metadata"]["name"]))
    try:
        wait_for(lambda: not api.get(path_for("DeviceClass"))["items"], what="no DeviceClasses")
        fail = {c.name: c for c in diagnose(kube(all_gates_on)).checks}["NVIDIA DeviceClasses"]
        assert fail.status == "FAIL" and "no DeviceClass at all" in fail.evidence
        assert "install the NVIDIA DRA driver" in fail.fix
    finally:
        for c in classes:
            body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "spec": c["spec"],
                    "metadata": {"name": c["metadata"]["name"], "labels": c["metadata"].get("labels", {})}}
            try:
                api.create(body)
            except ApiError as err:
                if err.status != 409:
                    raise


@pytest.mark.parametrize("gates", ["defaults", "all on"])
def test_live_probe_runs_a_claim_and_removes_it(gates, control_plane, request, kube, timings):
    cp = control_plane if gates == "defaults" else request.getfixturevalue("all_gates_on")
    api = cp.api()
    before = every_object(api)
    report = diagnose(kube(cp), live=True, live_timeout=30)
    checks = by_name(report)
    assert checks["live: scheduler allocates"].status == "PASS", checks["live: scheduler allocates"]
    assert ("through firstAvailable" in checks["live: scheduler allocates"].evidence) == \
        cp.feature_enabled("DRAPrioritizedList")
    assert checks["live: pod runs"].status == "PASS"
    assert checks["live: cleanup"].status == "PASS", checks["live: cleanup"]
    if cp.feature_enabled("DRAExtendedResource"):
        assert checks["live: extended resource"].status == "PASS", checks["live: extended resource"]
    else:
        assert "live: extended resource" not in checks

    def settled():
        diff = changed(before, every_object(api))
        # The scheduler's and kwok's events about the probe pods are the cluster's record of them.
        diff["new"] = [k for k in diff["new"] if not k[0].endswith("/events")]
        return diff if not diff["new"] and not diff["gone"] else None

    diff = wait_for(settled, what="the extended-resource claim garbage-collected", timeout=30)
    assert not [k for k in diff["modified"] if "resource.k8s.io" in k[0] or k[0].endswith("/pods")], diff
    timings[f"doctor_live_{gates.replace(' ', '_')}_s"] = report.seconds
