"""DRA on the real control plane: the real scheduler allocates devices the fake driver published."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from drawb.testing.api import Api, path_for
from drawb.testing.waiting import wait_for
from tests.live.claims import claim_template

pytestmark = pytest.mark.live

DRIVER = "gpu.nvidia.com"
NVIDIA_SMI = ["bash", "-c"], ["nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait"]


def claim(name: str, namespace: str, device_class: str, cel: str | None = None) -> dict:
    """A standalone ResourceClaim for one device of a class, optionally with a CEL selector."""
    exactly: dict = {"deviceClassName": device_class}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }


def pod(name: str, namespace: str, claim_entry: dict, containers: tuple[str, ...] = ("ctr",)) -> dict:
    """A pod whose containers run ``nvidia-smi -L`` and all name the claim entry ``gpu``."""
    command, args = NVIDIA_SMI
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {"name": c, "image": "ubuntu:22.04", "command": command, "args": args,
                 "resources": {"claims": [{"name": "gpu"}]}}
                for c in containers
            ],
            "resourceClaims": [{"name": "gpu", **claim_entry}],
        },
    }


def running(api: Api, namespace: str, name: str) -> dict | None:
    """The pod if it is Running."""
    obj = api.get(path_for("Pod", name, namespace))
    return obj if obj.get("status", {}).get("phase") == "Running" else None


def claim_of(api: Api, pod_obj: dict) -> dict:
    """The ResourceClaim behind the pod's claim entry ``gpu``."""
    entry = pod_obj["spec"]["resourceClaims"][0]
    name = entry.get("resourceClaimName") or next(
        s["resourceClaimName"] for s in pod_obj["status"]["resourceClaimStatuses"] if s["name"] == "gpu"
    )
    return api.get(path_for("ResourceClaim", name, pod_obj["metadata"]["namespace"]))


def published_device(api: Api, result: dict) -> tuple[str, dict]:
    """(node name, device dict) of an allocation result, from the published ResourceSlices."""
    for s in api.get(path_for("ResourceSlice"))["items"]:
        if s["spec"]["driver"] == result["driver"] and s["spec"]["pool"]["name"] == result["pool"]:
            for d in s["spec"]["devices"]:
                if d["name"] == result["device"]:
                    return s["spec"]["nodeName"], d
    raise AssertionError(f"allocated device {result} is not in any published ResourceSlice")


def attr(device: dict, name: str) -> str:
    """A device attribute's value."""
    return next(iter(device["attributes"][name].values()))


def follow_logs(control_plane, namespace: str, name: str, container: str, until: str, timeout: float = 20) -> str:
    """``kubectl logs -f`` until ``until`` appears in the output (the stream itself never ends)."""
    kubectl = str(control_plane.cluster.bin_dir / "kubectl")
    proc = subprocess.Popen([kubectl, "logs", "-f", "-n", namespace, name, "-c", container],
                            env=control_plane.cluster.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    out = []
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            out.append(line)
            if until in line:
                return "".join(out)
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
    raise AssertionError(f"{until!r} not in kubectl logs -f output: {''.join(out)!r}")


def test_api_server_is_the_pinned_kubernetes(control_plane):
    version = control_plane.api().get("/version")
    assert version["gitVersion"].startswith("v1.")
    assert version["gitVersion"] != "v0.0.0-master+$Format:%H$", "binaries were not version-stamped"
    groups = control_plane.api().get("/apis/resource.k8s.io")
    assert {"groupVersion": "resource.k8s.io/v1", "version": "v1"} in groups["versions"]


def test_device_classes_and_resource_slices_accepted(control_plane, scenario):
    api = control_plane.api()
    classes = {c["metadata"]["name"]: c for c in api.get(path_for("DeviceClass"))["items"]}
    extended_gate = control_plane.feature_enabled("DRAExtendedResource")
    for expected in scenario.device_classes:
        spec = dict(expected["spec"])
        if not extended_gate:  # alpha in 1.34: the field is dropped on write while the gate is off
            spec.pop("extendedResourceName", None)
        assert classes[expected["metadata"]["name"]]["spec"] == spec
    slices = {s["metadata"]["name"]: s for s in api.get(path_for("ResourceSlice"))["items"]}
    assert len(slices) == len(scenario.resource_slices)
    nodes = {n["metadata"]["name"]: n for n in api.get(path_for("Node"))["items"]}
    for expected in scenario.resource_slices:
        got = slices[expected["metadata"]["name"]]
        assert got["spec"] == expected["spec"]
        owner = got["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "Node" and owner["uid"] == nodes[expected["spec"]["nodeName"]]["metadata"]["uid"]


def test_template_claim_is_allocated_and_pod_logs_its_gpu(control_plane, namespace, timings):
    api = control_plane.api()
    api.create(claim_template("single-gpu", namespace))
    started = time.monotonic()
    api.create(pod("gpu-pod", namespace, {"resourceClaimTemplateName": "single-gpu"}))
    obj = wait_for(lambda: running(api, namespace, "gpu-pod"), what="pod Running")
    timings["pod_running_s"] = time.monotonic() - started

    rc = claim_of(api, obj)
    assert rc["metadata"]["ownerReferences"][0]["name"] == "gpu-pod", "claim not generated from the template"
    results = rc["status"]["allocation"]["devices"]["results"]
    assert [r["request"] for r in results] == ["gpu"] and results[0]["driver"] == DRIVER
    assert {"resource": "pods", "name": "gpu-pod", "uid": obj["metadata"]["uid"]} in rc["status"]["reservedFor"]
    node, device = published_device(api, results[0])
    assert obj["spec"]["nodeName"] == node
    assert attr(device, "type") == "gpu"

    uuid = attr(device, "uuid")
    started = time.monotonic()
    out = follow_logs(control_plane, namespace, "gpu-pod", "ctr", until=uuid)
    timings["first_log_line_s"] = time.monotonic() - started
    assert out.splitlines() == [f"GPU 0: {attr(device, 'productName')} (UUID: {uuid})"]


def test_mig_claim_with_profile_selector_gets_that_profile(control_plane, namespace, scenario):
    api = control_plane.api()
    profiles = sorted({
        attr(d, "profile") for s in scenario.resource_slices if s["spec"]["driver"] == DRIVER
        for d in s["spec"]["devices"] if attr(d, "type") == "mig"
    })
    profile = profiles[-1]
    cel = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
    api.create(claim("mig", namespace, "mig.nvidia.com", cel))
    api.create(pod("mig-pod", namespace, {"resourceClaimName": "mig"}))
    obj = wait_for(lambda: running(api, namespace, "mig-pod"), what="MIG pod Running")

    results = claim_of(api, obj)["status"]["allocation"]["devices"]["results"]
    node, device = published_device(api, results[0])
    assert (attr(device, "type"), attr(device, "profile"), obj["spec"]["nodeName"]) == ("mig", profile, node)
    out = follow_logs(control_plane, namespace, "mig-pod", "ctr", until=attr(device, "uuid"))
    assert out.splitlines()[0] == f"GPU 0: {attr(device, 'productName')} (UUID: {attr(device, 'parentUUID')})"
    assert out.splitlines()[1].startswith(f"  MIG {profile}")


def test_claim_matching_nothing_stays_pending_with_scheduler_event(control_plane, namespace):
    api = control_plane.api()
    api.create(claim("nothing", namespace, "gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B300'"))
    api.create(pod("pending-pod", namespace, {"resourceClaimName": "nothing"}))

    def failed_scheduling():
        events = api.get(path_for("Event", namespace=namespace))["items"]
        return [e for e in events if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "pending-pod"]

    event = wait_for(failed_scheduling, what="FailedScheduling event")[0]
    assert event["source"].get("component", event.get("reportingComponent")) == "default-scheduler"
    assert "cannot allocate all claims" in event["message"]
    assert api.get(path_for("Pod", "pending-pod", namespace))["status"]["phase"] == "Pending"
    assert not api.get(path_for("ResourceClaim", "nothing", namespace)).get("status", {}).get("allocation")


def test_two_containers_naming_one_claim_share_its_device(control_plane, namespace):
    api = control_plane.api()
    api.create(claim_template("single-gpu", namespace))
    api.create(pod("shared", namespace, {"resourceClaimTemplateName": "single-gpu"}, containers=("ctr0", "ctr1")))
    obj = wait_for(lambda: running(api, namespace, "shared"), what="pod Running")

    rc = claim_of(api, obj)
    results = rc["status"]["allocation"]["devices"]["results"]
    assert len(results) == 1 and len(rc["status"]["reservedFor"]) == 1
    _, device = published_device(api, results[0])
    uuid = attr(device, "uuid")
    for container in ("ctr0", "ctr1"):
        assert uuid in follow_logs(control_plane, namespace, "shared", container, until=uuid)


def test_deleting_the_pod_deallocates_its_claims(control_plane, namespace):
    api = control_plane.api()
    api.create(claim("standalone", namespace, "gpu.nvidia.com"))
    api.create(claim_template("single-gpu", namespace))
    spec = pod("two-claims", namespace, {"resourceClaimName": "standalone"})
    spec["spec"]["resourceClaims"].append({"name": "templated", "resourceClaimTemplateName": "single-gpu"})
    spec["spec"]["containers"][0]["resources"]["claims"].append({"name": "templated"})
    api.create(spec)
    obj = wait_for(lambda: running(api, namespace, "two-claims"), what="pod Running")
    generated = next(s["resourceClaimName"] for s in obj["status"]["resourceClaimStatuses"] if s["name"] == "templated")
    assert api.get(path_for("ResourceClaim", "standalone", namespace))["status"]["allocation"]

    api.delete(path_for("Pod", "two-claims", namespace), gracePeriodSeconds="0")
    wait_for(lambda: api.get_or_none(path_for("Pod", "two-claims", namespace)) is None, what="pod gone")

    def deallocated():
        status = api.get(path_for("ResourceClaim", "standalone", namespace)).get("status", {})
        return not status.get("reservedFor") and not status.get("allocation")

    wait_for(deallocated, what="standalone claim deallocated")
    wait_for(lambda: api.get_or_none(path_for("ResourceClaim", generated, namespace)) is None,
             what="generated claim deleted")
