"""A simulated node agent: a bound pod's containers start, run their command and end.

A pod bound to a node first gets its images: an image the node has not pulled yet takes the
scenario's ``image_pull_seconds`` (``DEFAULT_PULL_SECONDS`` unless a scenario asks for more
realism), one pull after the other as the kubelet's serialized puller does, each with the
kubelet's Pulling and Pulled events; an image already on the node gets its "already present"
Pulled event. Each container starts ``START_SECONDS`` after its image is there, then runs what
``drawb.cluster.sim.podlogs`` simulates. The pod is Running while a container runs; under restartPolicy Never it ends
Succeeded when every container exited 0, else Failed; under OnFailure a failed container is
restarted (and a successful one ends), under Always every exited container is restarted, each
restart after the kubelet's back-off (10 s, doubling, at most 300 s). A pod bound by hand
(``spec.nodeName``) whose claims are not allocated and reserved for it never starts: a kubelet
prepares only such claims. Of the kubelet's events only the image events are recorded (the local
control plane's kwok nodes record none), worded as the kubelet of 1.34 words them, less the image
size the simulation does not know.
"""

from __future__ import annotations

from drawb.api._go import go_duration, go_quote
from drawb.cluster.sim.podlogs import Run
from drawb.cluster.sim.publish import stable_hex

KUBELET = "kubelet"
START_SECONDS = 0.2
DEFAULT_PULL_SECONDS = 0.5
BACKOFF_SECONDS = 10.0
MAX_BACKOFF_SECONDS = 300.0


def pulling_message(image: str) -> str:
    """The kubelet's Pulling event: a pull begins."""
    return f"Pulling image {go_quote(image)}"


def pulled_message(image: str, seconds: float) -> str:
    """The kubelet's Pulled event after a pull of ``seconds`` (nothing waited for another pull)."""
    took = go_duration(seconds)
    return f"Successfully pulled image {go_quote(image)} in {took} ({took} including waiting)"


def present_message(image: str) -> str:
    """The kubelet's Pulled event for an image the node already has."""
    return f"Container image {go_quote(image)} already present on machine"


def pod_ip(pod: dict) -> str:
    """A deterministic pod IP in 10.244.0.0/16."""
    h = int(stable_hex("pod-ip", pod["metadata"].get("uid"), length=4), 16)
    return f"10.244.{h >> 8}.{(h & 0xFF) or 1}"


def _condition(kind: str, status: bool, when: str, reason: str | None = None, message: str | None = None) -> dict:
    cond = {"type": kind, "status": "True" if status else "False", "lastProbeTime": None, "lastTransitionTime": when}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _set_condition(status: dict, condition: dict) -> None:
    conditions = status.setdefault("conditions", [])
    for i, existing in enumerate(conditions):
        if existing["type"] == condition["type"]:
            if existing["status"] == condition["status"]:
                condition["lastTransitionTime"] = existing.get("lastTransitionTime", condition["lastTransitionTime"])
            conditions[i] = condition
            return
    conditions.append(condition)


def mark_scheduled(pod: dict, node: str, when: str) -> None:
    """Bind: set ``spec.nodeName`` and PodScheduled=True."""
    pod["spec"]["nodeName"] = node
    _set_condition(pod.setdefault("status", {}), _condition("PodScheduled", True, when))


def mark_disrupted(pod: dict, reason: str, message: str, when: str) -> None:
    """DisruptionTarget=True, as a controller sets it before it deletes the pod."""
    _set_condition(pod.setdefault("status", {}), _condition("DisruptionTarget", True, when, reason, message))


def mark_unschedulable(pod: dict, message: str, when: str, *, error: bool = False) -> bool:
    """PodScheduled=False with the scheduler's message; True if the condition changed."""
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")
    reason = "SchedulerError" if error else "Unschedulable"
    old = next((c for c in status.get("conditions") or () if c["type"] == "PodScheduled"), None)
    if old and old.get("reason") == reason and old.get("message") == message:
        return False
    _set_condition(status, _condition("PodScheduled", False, when, reason, message))
    return True


def _waiting(container: dict, reason: str, message: str | None = None, restarts: int = 0) -> dict:
    state: dict = {"reason": reason}
    if message:
        state["message"] = message
    return {"name": container["name"], "image": container.get("image", ""), "imageID": "", "ready": False,
            "started": False, "restartCount": restarts, "state": {"waiting": state}}


def mark_creating(pod: dict, when: str) -> None:
    """The node accepted the pod: containers are being created."""
    status = pod["status"]
    status.update(phase="Pending", hostIP=_host_ip(pod), startTime=when, qosClass=status.get("qosClass", "BestEffort"))
    names = [c["name"] for c in pod["spec"]["containers"]]
    _set_condition(status, _condition("PodReadyToStartContainers", False, when))
    _set_condition(status, _condition("Initialized", True, when))
    unready = f"containers with unready status: [{' '.join(names)}]"
    _set_condition(status, _condition("Ready", False, when, "ContainersNotReady", unready))
    _set_condition(status, _condition("ContainersReady", False, when, "ContainersNotReady", unready))
    status["containerStatuses"] = [_waiting(c, "ContainerCreating") for c in pod["spec"]["containers"]]


def _host_ip(pod: dict) -> str:
    h = int(stable_hex("host-ip", pod["spec"].get("nodeName"), length=2), 16)
    return f"10.0.0.{h or 1}"


def container_id(pod: dict, container: str, restarts: int) -> str:
    """A deterministic containerd id for one run of a container."""
    return "containerd://" + stable_hex("container", pod["metadata"].get("uid"), container, restarts, length=64)


def mark_started(pod: dict, container: dict, restarts: int, when: str) -> None:
    """One container is running."""
    status = pod["status"]
    statuses = status["containerStatuses"]
    index = next(i for i, s in enumerate(statuses) if s["name"] == container["name"])
    statuses[index] = {
        "name": container["name"], "image": container.get("image", ""), "imageID": "",
        "containerID": container_id(pod, container["name"], restarts), "ready": True, "started": True,
        "restartCount": restarts, "state": {"running": {"startedAt": when}},
    }
    status["podIP"] = pod_ip(pod)
    status["podIPs"] = [{"ip": status["podIP"]}]
    _refresh_phase(pod, when)


def mark_exited(pod: dict, container: dict, run: Run, started: str, when: str) -> None:
    """One container's command ended with ``run.exit_code``."""
    statuses = pod["status"]["containerStatuses"]
    index = next(i for i, s in enumerate(statuses) if s["name"] == container["name"])
    previous = statuses[index]
    code = run.exit_code or 0
    statuses[index] = {
        **previous, "ready": False, "started": False,
        "state": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                 "startedAt": started, "finishedAt": when,
                                 "containerID": previous.get("containerID", "")}},
    }
    _refresh_phase(pod, when)


def mark_backoff(pod: dict, container: dict, delay: float, when: str) -> None:
    """An exited container waits to be restarted."""
    statuses = pod["status"]["containerStatuses"]
    index = next(i for i, s in enumerate(statuses) if s["name"] == container["name"])
    previous = statuses[index]
    message = (f"back-off {int(delay)}s restarting failed container={container['name']} "
               f"pod={pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata'].get('uid', '')})")
    statuses[index] = {**_waiting(container, "CrashLoopBackOff", message, previous["restartCount"] + 1),
                       "lastState": previous["state"], "containerID": previous.get("containerID", "")}
    _refresh_phase(pod, when)


def restarts(policy: str, exit_code: int) -> bool:
    """Whether the kubelet restarts a container that exited with ``exit_code``."""
    return policy == "Always" or policy == "OnFailure" and exit_code != 0


def _refresh_phase(pod: dict, when: str) -> None:
    status = pod["status"]
    states = [s["state"] for s in status["containerStatuses"]]
    running = [s for s in states if "running" in s]
    terminated = [s["terminated"] for s in states if "terminated" in s]
    ready = len(running) == len(states)
    if len(terminated) == len(states):
        phase = "Succeeded" if all(t["exitCode"] == 0 for t in terminated) else "Failed"
    elif running or any("waiting" in s and s["waiting"]["reason"] == "CrashLoopBackOff" for s in states):
        phase = "Running"
    else:
        phase = "Pending"
    status["phase"] = phase
    _set_condition(status, _condition("PodReadyToStartContainers", phase != "Pending" or bool(running), when))
    if ready:
        _set_condition(status, _condition("Ready", True, when))
        _set_condition(status, _condition("ContainersReady", True, when))
    else:
        reason = "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady"
        names = [s["name"] for s in status["containerStatuses"] if "running" not in s["state"]]
        message = None if reason == "PodCompleted" else f"containers with unready status: [{' '.join(names)}]"
        _set_condition(status, _condition("Ready", False, when, reason, message))
        _set_condition(status, _condition("ContainersReady", False, when, reason, message))
