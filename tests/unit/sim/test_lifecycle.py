"""The simulated cluster runs claims and pods: controller, scheduler, node, events, logs."""

from __future__ import annotations

import pytest

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.claims import generate_name
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster

NS = "default"
IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"


def _template(name: str, device_class: str = "gpu.nvidia.com", count: int = 1, selector: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": device_class}
    if count != 1:
        exactly["count"] = count
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _pod(name: str, template: str, command: list[str], policy: str = "Never", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": policy, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                     "containers": [{"name": "ctr", "image": IMAGE, "command": command,
                                     "resources": {"claims": [{"name": "gpu"}]}}], **spec}}


@pytest.fixture
def sim():
    return SimCluster(workloads=False, clock=ManualClock())


def _claim_of(sim: SimCluster, pod: str) -> dict:
    [status] = sim.get("Pod", pod, NS)["status"]["resourceClaimStatuses"]
    return sim.get("ResourceClaim", status["resourceClaimName"], NS)


def test_a_template_claim_is_made_for_the_pod_as_the_controller_makes_it(sim):
    sim.apply([_template("single-gpu"), _pod("cuda-check", "single-gpu", ["nvidia-smi", "-L"])])
    pod = sim.get("Pod", "cuda-check", NS)
    claim = _claim_of(sim, "cuda-check")
    name = claim["metadata"]["name"]
    assert name.startswith("cuda-check-gpu-") and len(name) == len("cuda-check-gpu-") + 5
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "cuda-check",
                                                     "uid": pod["metadata"]["uid"], "controller": True,
                                                     "blockOwnerDeletion": True}]
    assert claim["spec"] == {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}  # the API server's defaults
    again = SimCluster(workloads=False, clock=ManualClock())
    again.apply([_template("single-gpu"), _pod("cuda-check", "single-gpu", ["nvidia-smi", "-L"])])
    assert _claim_of(again, "cuda-check")["metadata"]["name"] == name  # deterministic


def test_long_names_are_cut_like_the_controller_cuts_them():
    assert generate_name("p", "gpu") == "p-gpu-"
    long_pod, long_claim = "a" * 50, "b" * 20
    cut = generate_name(long_pod, long_claim)
    assert cut == "a" * (50 * 57 // 72) + "-" + "b" * (20 * 57 // 72) and len(cut) <= 57


def test_the_pod_is_scheduled_allocated_run_and_ends(sim):
    sim.apply([_template("single-gpu"), _pod("cuda-check", "single-gpu", ["nvidia-smi", "-L"])])
    pod = sim.get("Pod", "cuda-check", NS)
    claim = _claim_of(sim, "cuda-check")
    node = pod["spec"]["nodeName"]
    assert node == "a100-sxm-node-01"  # the first feasible node in name order
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert (result["request"], result["driver"], result["pool"]) == ("gpu", "gpu.nvidia.com", node)
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "cuda-check",
                                               "uid": pod["metadata"]["uid"]}]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert pod["status"]["phase"] == "Pending"
    scheduled, pulling = sorted(sim.list("Event", NS), key=lambda e: e["reason"], reverse=True)
    assert (scheduled["reason"], scheduled["message"]) == ("Scheduled", f"Successfully assigned {NS}/cuda-check to {node}")
    assert (pulling["reason"], pulling["message"]) == ("Pulling", f'Pulling image "{IMAGE}"')
    with pytest.raises(ClusterError, match='container "ctr" in pod "cuda-check" is waiting to start: ContainerCreating'):
        list(sim.logs("cuda-check", NS))
    sim.sleep(0.7)  # the default pull (0.5 s), then the container starts (0.2 s)
    assert sim.get("Pod", "cuda-check", NS)["status"]["phase"] == "Running"
    [line] = sim.logs("cuda-check", NS)
    assert line.startswith("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-")
    sim.sleep(1)
    pod = sim.get("Pod", "cuda-check", NS)
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    assert sim.list("ResourceClaim", NS) == []  # released, deallocated and deleted by the controller
    assert list(sim.logs("cuda-check", NS)) == [line]


def _image_events(sim: SimCluster, pod: str) -> list[tuple[str, str]]:
    events = [e for e in sim.list("Event", NS) if e["involvedObject"]["name"] == pod and e["source"]]
    return [(e["reason"], e["message"]) for e in sorted(events, key=lambda e: e["metadata"]["name"])]


def test_a_node_pulls_an_image_once_with_the_kubelets_events():
    sim = SimCluster(workloads=False, clock=ManualClock())
    pin = {"nodeSelector": {"kubernetes.io/hostname": "hgx-h200-03"}}
    sim.apply([_template("single-gpu"), _pod("first", "single-gpu", ["nvidia-smi", "-L"], **pin)])
    sim.sleep(0.69)
    assert sim.get("Pod", "first", NS)["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == \
        "ContainerCreating"  # pulled after 0.5 s, not started yet
    sim.sleep(0.01)
    assert sim.get("Pod", "first", NS)["status"]["phase"] == "Running"
    assert _image_events(sim, "first") == [
        ("Pulling", f'Pulling image "{IMAGE}"'),
        ("Pulled", f'Successfully pulled image "{IMAGE}" in 500ms (500ms including waiting)')]
    [pulled] = [e for e in sim.list("Event", NS) if e["reason"] == "Pulled"]
    assert pulled["source"] == {"component": "kubelet", "host": "hgx-h200-03"}
    assert pulled["involvedObject"]["fieldPath"] == "spec.containers{ctr}" and pulled["count"] == 1
    assert pulled["reportingInstance"] == "hgx-h200-03-simulated" and pulled["eventTime"] is None
    sim.apply([_pod("second", "single-gpu", ["nvidia-smi", "-L"], **pin)])
    assert _image_events(sim, "second") == [("Pulled", f'Container image "{IMAGE}" already present on machine')]
    sim.sleep(0.2)
    assert sim.get("Pod", "second", NS)["status"]["phase"] == "Running"


def test_a_scenario_can_make_pulls_as_slow_as_a_real_registry():
    from drawb.cluster.sim.scenarios import build_scenario

    scenario = build_scenario("default")
    scenario.image_pull_seconds = 12.5
    sim = SimCluster(scenario, workloads=False, clock=ManualClock())
    sim.apply([_template("single-gpu"), _pod("slow", "single-gpu", ["nvidia-smi", "-L"])])
    sim.sleep(12.6)
    assert sim.get("Pod", "slow", NS)["status"]["phase"] == "Pending"
    sim.sleep(0.1)
    assert sim.get("Pod", "slow", NS)["status"]["phase"] == "Running"
    assert _image_events(sim, "slow")[-1][1].endswith(" in 12.5s (12.5s including waiting)")


def test_logs_follow_waits_in_simulated_time(sim):
    sim.apply([_template("single-gpu"), _pod("smi", "single-gpu", ["sh", "-c", "nvidia-smi -L; sleep 5; echo done"])])
    sim.sleep(10)
    lines = list(sim.logs("smi", NS, follow=True))
    assert lines[-1] == "done" and sim.get("Pod", "smi", NS)["status"]["phase"] == "Succeeded"


def test_a_container_without_gpus_fails_under_never_and_restarts_under_on_failure(sim):
    pod = _pod("blind", "single-gpu", ["nvidia-smi"])
    pod["spec"]["containers"][0]["resources"] = {}
    retry = {**_pod("retry", "single-gpu", ["nvidia-smi"], policy="OnFailure")}
    retry["spec"]["containers"][0]["resources"] = {}
    sim.apply([_template("single-gpu"), pod, retry])
    sim.sleep(12)
    assert sim.get("Pod", "blind", NS)["status"]["phase"] == "Failed"
    assert list(sim.logs("blind", NS)) == ["No devices were found"]
    status = sim.get("Pod", "retry", NS)["status"]
    assert status["phase"] == "Running"
    assert status["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"


def test_mig_devices_are_listed_under_their_parent(sim):
    sim.apply([_template("mig", "mig.nvidia.com", selector="device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"),
               _pod("mig-check", "mig", ["sh", "-c", "nvidia-smi -L; sleep infinity"], policy="Always")])
    sim.sleep(10)
    pod = sim.get("Pod", "mig-check", NS)
    assert pod["spec"]["nodeName"] == "dgx-h100-02" and pod["status"]["phase"] == "Running"
    gpu, mig = sim.logs("mig-check", NS)
    assert gpu.startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-")
    assert mig.startswith("  MIG 3g.40gb     Device  0: (UUID: MIG-")


def test_an_unschedulable_pod_stays_pending_with_the_schedulers_words(sim):
    sim.apply([_template("nine", count=9), _pod("greedy", "nine", ["nvidia-smi", "-L"])])
    pod = sim.get("Pod", "greedy", NS)
    message = ("0/4 nodes are available: 4 cannot allocate all claims. still not schedulable, "
               "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    assert pod["status"]["phase"] == "Pending" and "nodeName" not in pod["spec"]
    [condition] = pod["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert condition["message"] == message
    [event] = sim.list("Event", NS)
    assert (event["type"], event["reason"], event["message"]) == ("Warning", "FailedScheduling", message)
    assert event["reportingInstance"].endswith("-simulated")
    assert _claim_of(sim, "greedy")["status"] == {}


def test_node_selectors_and_missing_classes(sim):
    sim.apply([_template("mig", "mig.nvidia.com"), _template("nope", "no-such-class"),
               _pod("pinned", "mig", ["nvidia-smi", "-L"], nodeSelector={"kubernetes.io/hostname": "hgx-h200-03"}),
               _pod("classless", "nope", ["nvidia-smi", "-L"])])
    pinned = sim.get("Pod", "pinned", NS)["status"]["conditions"][0]["message"]
    assert pinned.startswith("0/4 nodes are available: 1 cannot allocate all claims, "
                             "3 node(s) didn't match Pod's node affinity/selector. still not schedulable")
    classless = sim.get("Pod", "classless", NS)["status"]["conditions"][0]["message"]
    assert classless.startswith("0/4 nodes are available: request gpu: device class no-such-class does not exist. "
                                "no new claims to deallocate, preemption:")


def test_deleting_a_pod_releases_its_devices_for_the_next(sim):
    sim.apply([_template("eight", count=8), _pod("first", "eight", ["sleep", "infinity"], policy="Always",
                                                 nodeSelector={"kubernetes.io/hostname": "hgx-h200-03"}),
               _pod("second", "eight", ["sleep", "infinity"], policy="Always",
                    nodeSelector={"kubernetes.io/hostname": "hgx-h200-03"})])
    assert sim.get("Pod", "first", NS)["spec"]["nodeName"] == "hgx-h200-03"
    assert "nodeName" not in sim.get("Pod", "second", NS)["spec"]
    first_claim = _claim_of(sim, "first")["metadata"]["name"]
    sim.delete("Pod", "first", NS)
    assert sim.get("ResourceClaim", first_claim, NS) is None
    assert sim.get("Pod", "second", NS)["spec"]["nodeName"] == "hgx-h200-03"
    assert len(_claim_of(sim, "second")["status"]["allocation"]["devices"]["results"]) == 8


def test_a_shared_claim_is_reserved_for_every_pod_using_it(sim):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": NS},
             "spec": _template("x")["spec"]["spec"]}
    pods = []
    for name in ("a", "b"):
        pod = _pod(name, "unused", ["sleep", "infinity"], policy="Always")
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
        pods.append(pod)
    sim.apply([claim, *pods])
    shared = sim.get("ResourceClaim", "shared", NS)
    assert [r["name"] for r in shared["status"]["reservedFor"]] == ["a", "b"]
    assert sim.get("Pod", "a", NS)["spec"]["nodeName"] == sim.get("Pod", "b", NS)["spec"]["nodeName"]
    sim.delete("Pod", "a", NS)
    assert [r["name"] for r in sim.get("ResourceClaim", "shared", NS)["status"]["reservedFor"]] == ["b"]
    sim.delete("Pod", "b", NS)
    assert sim.get("ResourceClaim", "shared", NS)["status"] == {}  # deallocated, kept: the user made it


def test_a_pod_bound_by_hand_to_a_node_without_its_claims_never_starts(sim):
    sim.apply([_template("single-gpu"), _pod("bound", "single-gpu", ["nvidia-smi", "-L"], nodeName="hgx-h200-03")])
    sim.sleep(30)
    pod = sim.get("Pod", "bound", NS)
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    assert not _claim_of(sim, "bound")["status"].get("allocation")  # the scheduler never saw it


def test_objects_handed_out_never_change_the_controllers_store_new_ones(sim):
    import json

    handed_out: list[tuple[dict, str]] = []

    def read() -> None:
        for kind in ("Pod", "ResourceClaim", "Event"):
            handed_out.extend((obj, json.dumps(obj, sort_keys=True)) for obj in sim.list(kind, NS))

    retry = _pod("retry", "single-gpu", ["nvidia-smi"], policy="OnFailure")
    retry["spec"]["containers"][0]["resources"] = {}  # fails, is restarted after a back-off
    sim.apply([_template("single-gpu"), _template("nine", count=9), retry,
               _pod("greedy", "nine", ["nvidia-smi", "-L"]), _pod("done", "single-gpu", ["nvidia-smi", "-L"])])
    read()
    sim.sleep(12)  # containers start, exit, back off; "done" ends and its claim is released and deleted
    read()
    sim.apply([_template("other"), _pod("later", "other", ["sleep", "infinity"], policy="Always")])  # greedy retried
    read()
    sim.delete("Pod", "retry", NS)
    read()
    assert [obj for obj, before in handed_out if json.dumps(obj, sort_keys=True) != before] == []
    [failed] = [e for e in sim.list("Event", NS) if e["reason"] == "FailedScheduling"]
    assert failed["series"]["count"] >= 2  # the repeated event was stored anew, not counted in place
    assert sim.get("Pod", "done", NS)["status"]["phase"] == "Succeeded"
    assert sim.list("Pod", NS)[0] is sim.list("Pod", NS)[0]  # unchanged objects are shared, not copied per read


def test_lists_stay_in_name_order_as_objects_come_and_go(sim):
    def claim(name: str) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS},
                "spec": _template("x")["spec"]["spec"]}

    def names() -> list[str]:
        return [c["metadata"]["name"] for c in sim.list("ResourceClaim", NS)]

    sim.apply([claim("b"), claim("a")])
    assert names() == ["a", "b"]
    sim.apply([claim("ab")])
    assert names() == ["a", "ab", "b"]
    sim.delete("ResourceClaim", "a", NS)
    sim.apply([claim("b")])  # changed, not added: the order holds
    assert names() == ["ab", "b"]
