"""The DRA lifecycle contract: the same scenarios, the same outcomes, simulated and real.

Each case takes a cluster and a fresh namespace, applies a ResourceClaimTemplate and pods, and
checks what the control plane made of them: the claim the resourceclaim controller created,
allocated or pending, the node, the device count and kind, the reservation, the pod's phase,
the shape of its log, the scheduler's event and message. tests/unit/sim runs them against the
simulated cluster, tests/live against the local control plane (real API server, scheduler and
controller manager; kwok nodes and the fake driver's node agent).
"""

from __future__ import annotations

import re
import time

import pytest

from drawb import versions
from drawb.cluster.protocol import Cluster
from drawb.cluster.waiting import wait_until

IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
PREEMPTION = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."


def post_filter(cluster: Cluster, said: str) -> str:
    """DynamicResources' PostFilter message where it frees nothing, as the FitError shows it: none from 1.37 on."""
    return "" if versions.rules(cluster.server_version()).number >= 37 else f"{said}, "


def _template(name: str, ns: str, device_class: str = "gpu.nvidia.com", count: int = 1,
              selector: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": device_class}
    if count != 1:
        exactly.update(allocationMode="ExactCount", count=count)
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _pod(name: str, ns: str, template: str, command: list[str], policy: str = "Always", uses_claim: bool = True,
         **spec) -> dict:
    container = {"name": "ctr", "image": IMAGE, "command": command}
    if uses_claim:
        container["resources"] = {"claims": [{"name": "gpu"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                     "containers": [container], **spec}}


def _wait(cluster: Cluster, fn, what: str, timeout: float = 90):
    return wait_until(cluster, fn, timeout=timeout, what=what)


def _pod_now(cluster: Cluster, ns: str, name: str) -> dict:
    return cluster.get("Pod", name, ns) or {}


def _phase(cluster: Cluster, ns: str, name: str, phase: str) -> dict:
    return _wait(cluster, lambda: (p := _pod_now(cluster, ns, name)).get("status", {}).get("phase") == phase and p,
                 f"pod {name} {phase}")


def _claim(cluster: Cluster, ns: str, pod: str, allocated: bool = True) -> dict:
    def ready():
        statuses = _pod_now(cluster, ns, pod).get("status", {}).get("resourceClaimStatuses") or []
        claim = cluster.get("ResourceClaim", statuses[0]["resourceClaimName"], ns) if statuses else None
        return claim if claim and (not allocated or claim.get("status", {}).get("allocation")) else None

    return _wait(cluster, ready, f"the claim of pod {pod}" + (" allocated" if allocated else ""))


def _devices(cluster: Cluster, claim: dict) -> list[dict]:
    """The ResourceSlice devices of a claim's allocation."""
    by_id = {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]): d
             for s in cluster.list("ResourceSlice") for d in s["spec"].get("devices", [])}
    return [by_id[(r["driver"], r["pool"], r["device"])] for r in claim["status"]["allocation"]["devices"]["results"]]


def _attr(device: dict, name: str) -> str:
    return next(iter(device["attributes"][name].values()))


def _events(cluster: Cluster, ns: str, pod: str, reason: str) -> list[dict]:
    return [e for e in cluster.list("Event", ns)
            if e["involvedObject"].get("name") == pod and e["involvedObject"].get("kind") == "Pod"
            and e.get("reason") == reason]


def _log(cluster: Cluster, ns: str, pod: str, lines: int) -> list[str]:
    return _wait(cluster, lambda: (out := list(cluster.logs(pod, ns))) and len(out) >= lines and out,
                 f"{lines} log lines of {pod}")


def _unschedulable(cluster: Cluster, ns: str, pod: str) -> tuple[dict, dict]:
    def rejected():
        conditions = _pod_now(cluster, ns, pod).get("status", {}).get("conditions") or []
        cond = next((c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"), None)
        events = _events(cluster, ns, pod, "FailedScheduling")
        return (cond, events[-1]) if cond and events else None

    return _wait(cluster, rejected, f"pod {pod} rejected by the scheduler")


# --- the cases ----------------------------------------------------------------------------------

def template_claim_is_made_for_the_pod(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns), _pod("keeper", ns, "single-gpu", ["sh", "-c", "nvidia-smi -L; sleep infinity"])])
    claim = _claim(cluster, ns, "keeper", allocated=False)
    pod = _pod_now(cluster, ns, "keeper")
    assert re.fullmatch(f"keeper-gpu-{SUFFIX}", claim["metadata"]["name"]), claim["metadata"]["name"]
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "keeper", "uid": pod["metadata"]["uid"], "controller": True}
    if versions.rules(cluster.server_version()).number <= 34:  # the resourceclaim controller sets it before 1.35
        owner["blockOwnerDeletion"] = True
    assert claim["metadata"]["ownerReferences"] == [owner]
    template = cluster.get("ResourceClaimTemplate", "single-gpu", ns)
    assert claim["spec"] == template["spec"]["spec"]  # as the API server stored it, with its defaults:
    assert claim["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]
    assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


def pod_runs_on_the_gpu_allocated_to_it(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns), _pod("runner", ns, "single-gpu", ["sh", "-c", "nvidia-smi -L; sleep infinity"])])
    pod = _phase(cluster, ns, "runner", "Running")
    claim = _claim(cluster, ns, "runner")
    [device] = _devices(cluster, claim)
    node = pod["spec"]["nodeName"]
    assert _attr(device, "type") == "gpu" and claim["status"]["allocation"]["devices"]["results"][0]["pool"] == node
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "runner", "uid": pod["metadata"]["uid"]}]
    assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]
    assert [c["status"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"] == ["True"]
    assert _log(cluster, ns, "runner", 1) == [f"GPU 0: {_attr(device, 'productName')} (UUID: {_attr(device, 'uuid')})"]
    [event] = _events(cluster, ns, "runner", "Scheduled")
    assert event["message"] == f"Successfully assigned {ns}/runner to {node}"


def a_mig_claim_lands_on_the_mig_node(cluster: Cluster, ns: str) -> None:
    selector = "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
    cluster.apply([_template("mig", ns, "mig.nvidia.com", selector=selector),
                   _pod("mig-check", ns, "mig", ["sh", "-c", "nvidia-smi -L; sleep infinity"])])
    pod = _phase(cluster, ns, "mig-check", "Running")
    [device] = _devices(cluster, _claim(cluster, ns, "mig-check"))
    assert pod["spec"]["nodeName"] == "dgx-h100-02"
    assert (_attr(device, "type"), _attr(device, "profile")) == ("mig", "3g.40gb")
    gpu, mig = _log(cluster, ns, "mig-check", 2)
    assert gpu == f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {_attr(device, 'parentUUID')})"
    assert mig == f"  MIG 3g.40gb     Device  0: (UUID: {_attr(device, 'uuid')})"


def four_gpus_query_and_summary(cluster: Cluster, ns: str) -> None:
    script = ("nvidia-smi --query-gpu=index,name,uuid,memory.total --format=csv,noheader; nvidia-smi; "
              "sleep infinity")
    cluster.apply([_template("four", ns, count=4), _pod("quad", ns, "four", ["sh", "-c", script],
                                                        nodeSelector={"kubernetes.io/hostname": "hgx-h200-03"})])
    _phase(cluster, ns, "quad", "Running")
    devices = _devices(cluster, _claim(cluster, ns, "quad"))
    lines = _wait(cluster, lambda: (out := list(cluster.logs("quad", ns))) and "No running processes found" in out[-2]
                  and out, "the whole nvidia-smi table")
    uuids = sorted(_attr(d, "uuid") for d in devices)
    rows = lines[:4]
    assert [r.split(", ")[0] for r in rows] == ["0", "1", "2", "3"]
    assert sorted(r.split(", ")[2] for r in rows) == uuids
    assert all(r.split(", ")[1] == "NVIDIA H200" and r.endswith(", 143771 MiB") for r in rows)
    table = lines[4:]
    assert table[2].startswith("| NVIDIA-SMI 580.") and "CUDA Version: 13.0" in table[2]
    assert len([line for line in table if re.match(r"^\|\s+\d  NVIDIA H200\s+On  \|", line)]) == 4


def a_finished_pod_gives_its_claim_back(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns), _pod("once", ns, "single-gpu", ["nvidia-smi", "-L"], policy="Never")])
    claim = _claim(cluster, ns, "once")
    pod = _phase(cluster, ns, "once", "Succeeded")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    _wait(cluster, lambda: cluster.get("ResourceClaim", claim["metadata"]["name"], ns) is None,
          "the finished pod's claim deleted")
    assert re.fullmatch(r"GPU 0: NVIDIA .+ \(UUID: GPU-[0-9a-f-]{36}\)", list(cluster.logs("once", ns))[0])


def a_container_without_gpus_fails(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns),
                   _pod("blind", ns, "single-gpu", ["nvidia-smi"], policy="Never", uses_claim=False)])
    pod = _phase(cluster, ns, "blind", "Failed")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 6
    assert list(cluster.logs("blind", ns)) == ["No devices were found"]


def too_many_gpus_stay_pending(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("nine", ns, count=9), _pod("greedy", ns, "nine", ["nvidia-smi", "-L"])])
    condition, event = _unschedulable(cluster, ns, "greedy")
    message = f"0/4 nodes are available: 4 cannot allocate all claims. {post_filter(cluster, 'still not schedulable')}{PREEMPTION}"
    assert (condition["reason"], condition["message"]) == ("Unschedulable", message)
    assert (event["type"], event["message"]) == ("Warning", message)
    pod = _pod_now(cluster, ns, "greedy")
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert not _claim(cluster, ns, "greedy", allocated=False).get("status", {}).get("allocation")


def a_node_selector_narrows_the_nodes(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("mig", ns, "mig.nvidia.com"),
                   _pod("pinned", ns, "mig", ["nvidia-smi", "-L"], nodeSelector={"kubernetes.io/hostname": "hgx-h200-03"})])
    condition, event = _unschedulable(cluster, ns, "pinned")
    assert condition["message"] == event["message"] == (
        "0/4 nodes are available: 1 cannot allocate all claims, 3 node(s) didn't match Pod's node affinity/selector. "
        f"{post_filter(cluster, 'still not schedulable')}{PREEMPTION}")


def a_missing_device_class_is_named(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("nope", ns, "no-such-class"), _pod("classless", ns, "nope", ["nvidia-smi", "-L"])])
    condition, event = _unschedulable(cluster, ns, "classless")
    assert condition["message"] == event["message"] == (
        "0/4 nodes are available: request gpu: device class no-such-class does not exist. "
        f"{post_filter(cluster, 'no new claims to deallocate')}{PREEMPTION}")


def deleting_a_pod_frees_its_gpus(cluster: Cluster, ns: str) -> None:
    here = {"kubernetes.io/hostname": "hgx-h200-03"}
    cluster.apply([_template("eight", ns, count=8),
                   _pod("first", ns, "eight", ["sleep", "infinity"], nodeSelector=here)])
    first = _claim(cluster, ns, "first")
    # only then the second pod: applied together, either could get the node's 8 GPUs first
    cluster.apply([_pod("second", ns, "eight", ["sleep", "infinity"], nodeSelector=here)])
    _unschedulable(cluster, ns, "second")
    cluster.delete("Pod", "first", ns)
    _wait(cluster, lambda: cluster.get("ResourceClaim", first["metadata"]["name"], ns) is None,
          "the deleted pod's claim deleted")
    pod = _phase(cluster, ns, "second", "Running")
    assert pod["spec"]["nodeName"] == "hgx-h200-03"
    assert len(_devices(cluster, _claim(cluster, ns, "second"))) == 8


def why_and_logs_answer_for_running_and_ended_pods(cluster: Cluster, ns: str) -> None:
    from drawb.commands.registry import run_line
    from drawb.commands.workloads import ContainerNotChosen
    from drawb.explain import result as r
    from drawb.session import Session

    session = Session(_cluster=cluster)
    duo = _pod("duo", ns, "single-gpu", ["sh", "-c", "nvidia-smi -L; sleep infinity"])
    duo["spec"]["containers"].append({**duo["spec"]["containers"][0], "name": "second"})
    cluster.apply([_template("single-gpu", ns), duo,
                   _pod("once", ns, "single-gpu", ["nvidia-smi", "-L"], policy="Never")])
    running = _wait(cluster, lambda: (p := _pod_now(cluster, ns, "duo")).get("status", {}).get("containerStatuses")
                    and all("running" in c["state"] for c in p["status"]["containerStatuses"]) and p,
                    "both containers of duo running")
    node = running["spec"]["nodeName"]
    [device] = _devices(cluster, _claim(cluster, ns, "duo"))
    why = run_line(session, f"why duo -n {ns}")
    assert why.state == r.ALLOCATED and why.summary.startswith(f"the pod runs on node {node} (Running since ")
    assert "container ctr running since" in why.summary and "container second running since" in why.summary
    assert why.scheduler == f"Successfully assigned {ns}/duo to {node}"
    [shown] = why.devices
    assert (shown.node, shown.attributes["uuid"]) == (node, _attr(device, "uuid"))
    # several containers and none named: the API server's answer at once, not a wait for the pod to start
    started = time.monotonic()
    with pytest.raises(ContainerNotChosen, match=f"^a container name must be specified for pod duo, choose one of: "
                                                  r"\[ctr second\]$"):
        run_line(session, f"logs duo -n {ns}")
    assert time.monotonic() - started < 5
    assert run_line(session, f"logs duo -n {ns} -c second").lines[0].startswith("GPU 0: NVIDIA ")

    ended = _phase(cluster, ns, "once", "Succeeded")
    [claim] = [s["resourceClaimName"] for s in ended["status"]["resourceClaimStatuses"]]
    _wait(cluster, lambda: cluster.get("ResourceClaim", claim, ns) is None, "the ended pod's claim deleted")
    why = run_line(session, f"why once -n {ns}")
    assert why.state == r.ENDED and why.devices == []
    assert why.summary.startswith(f"the pod ran on node {ended['spec']['nodeName']} and succeeded: container ctr "
                                  "exited with code 0 (Completed) at ")
    assert (f"claim {claim} (made from template single-gpu for this pod) was deleted by the resourceclaim controller "
            "when the pod ended: its devices are free") in why.notes
    assert not any("wait" in remedy.kind for remedy in why.remedies)


CASES = [
    template_claim_is_made_for_the_pod,
    pod_runs_on_the_gpu_allocated_to_it,
    a_mig_claim_lands_on_the_mig_node,
    four_gpus_query_and_summary,
    a_finished_pod_gives_its_claim_back,
    a_container_without_gpus_fails,
    too_many_gpus_stay_pending,
    a_node_selector_narrows_the_nodes,
    a_missing_device_class_is_named,
    deleting_a_pod_frees_its_gpus,
    why_and_logs_answer_for_running_and_ended_pods,
]
