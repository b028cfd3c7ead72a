"""drawb's CEL evaluation against the real scheduler: same devices allocated, same errors, per node.

For every selector of ``tests/unit/cel/data/scheduler_corpus.yaml`` and every node, a ResourceClaim with
one ``allocationMode: All`` request (the selector, in the given class) and a pod using it, pinned to the
node with a ``nodeSelector``. With ``All`` the scheduler's allocator evaluates the class's selectors and
then the request's on every device the node can reach, and allocates all that match, so the claim's
allocation must be exactly what `drawb.cel.select` (``stored=True``, class selectors first) picks on that
node. Where drawb reports a runtime error on some device of the node, the allocator aborts: the pod stays
pending with a ``SchedulerError`` whose message carries drawb's error text. Where drawb matches nothing, the
pod is unschedulable there: in 1.34 an ``All`` request needs at least one device
(``allocator_stable.go``: "At least one device is required for 'All' allocation mode").

One selector runs at a time on the four nodes (its claims must not compete with another selector's for
the same devices); its pods and claims are deleted, and gone, before the next selector starts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from drawb.cel import select
from drawb.cel.env import CEL_GATES
from drawb.cel.frames import class_selector_expressions
from drawb.inventory import device_frame
from drawb.testing.api import Api, path_for
from drawb.testing.waiting import wait_for

pytestmark = [pytest.mark.live, pytest.mark.every_version]

CORPUS = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "unit" / "cel" / "data" / "scheduler_corpus.yaml").read_text()
)
DRIVER = "gpu.nvidia.com"
HOSTNAME = "kubernetes.io/hostname"
SETTLE_S = 30  # bound on waiting for one selector's four pods to be allocated, failed or unschedulable


@dataclass(frozen=True)
class Outcome:
    """What happened (or should happen) to one claim on one node."""

    kind: str  # "allocated", "error", "unschedulable"
    devices: frozenset = frozenset()  # (driver, pool, device) when allocated
    messages: tuple[str, ...] = ()  # drawb's error texts, or the scheduler's condition message

    def __str__(self) -> str:
        if self.kind == "allocated":
            return f"allocated {sorted(d for _, _, d in self.devices)}"
        return f"{self.kind}: {' | '.join(self.messages)}"


def _claim(name: str, namespace: str, device_class: str, expression: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": device_class,
            "allocationMode": "All",
            "selectors": [{"cel": {"expression": expression}}],
        }}]}},
    }


def _pod(name: str, namespace: str, node: str, claim: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeSelector": {HOSTNAME: node},  # spec.nodeName would bypass the scheduler (and DRA refuses it)
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "ctr", "image": "ubuntu:22.04", "command": ["sleep", "infinity"],
                            "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
        },
    }


def expected(frame, classes: dict, entry: dict, nodes: list[str], version: str, gates: dict) -> dict[str, Outcome]:
    """drawb's verdict per node: the devices the scheduler must allocate, or the error, or nothing."""
    result = select(frame, entry["cel"], kubernetes_version=version, stored=True, feature_gates=gates,
                    class_selectors=class_selector_expressions(classes[entry["class"]]))
    out = {}
    for node in nodes:
        here = (frame["node"] == node).to_numpy()
        failed = result.failed & here
        matched = result.matched & here
        if failed.any():
            out[node] = Outcome("error", messages=tuple(sorted(set(result.error[failed]))))
        elif matched.any():
            rows = frame[matched]
            out[node] = Outcome("allocated", frozenset(zip(rows["driver"], rows["pool"], rows["device"])))
        else:
            out[node] = Outcome("unschedulable")
    return out


def observed(api: Api, namespace: str, pod: str, claim: str) -> Outcome | None:
    """The scheduler's verdict so far: the claim's allocation, or the pod's PodScheduled=False condition."""
    rc = api.get(path_for("ResourceClaim", claim, namespace))
    allocation = (rc.get("status") or {}).get("allocation")
    if allocation:
        results = allocation["devices"]["results"]
        return Outcome("allocated", frozenset((r["driver"], r["pool"], r["device"]) for r in results))
    obj = api.get(path_for("Pod", pod, namespace))
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond["type"] == "PodScheduled" and cond["status"] == "False":
            kind = {"SchedulerError": "error", "Unschedulable": "unschedulable"}.get(cond.get("reason"))
            if kind:
                return Outcome(kind, messages=(cond.get("message", ""),))
    return None


def agrees(want: Outcome, got: Outcome | None) -> bool:
    """The scheduler did what drawb predicts (for errors: its message carries one of drawb's texts)."""
    if got is None or got.kind != want.kind:
        return False
    if want.kind == "allocated":
        return got.devices == want.devices
    if want.kind == "error":
        return any(text in got.messages[0] for text in want.messages) and "CEL runtime error" in got.messages[0]
    return "cannot allocate all claims" in got.messages[0]


def _settled(api: Api, namespace: str, names: list[tuple[str, str]], want: list[Outcome]):
    """The outcomes once each agrees with drawb or is final.

    Only "unschedulable" where drawb predicts an allocation may still change (the scheduler retries when
    claims change); an allocation stays, and a CEL error is raised before availability is looked at.
    """
    got = [observed(api, namespace, pod, claim) for pod, claim in names]
    if all(g is not None and (agrees(w, g) or not (w.kind == "allocated" and g.kind == "unschedulable"))
           for w, g in zip(want, got)):
        return got
    return None


def failed_scheduling_events(api: Api, namespace: str, pod: str) -> list[str]:
    """Messages of the scheduler's FailedScheduling events about a pod."""
    items = api.get(path_for("Event", namespace=namespace))["items"]
    return [e.get("message", "") for e in items
            if e["involvedObject"].get("name") == pod and e.get("reason") == "FailedScheduling"]


def _clean(api: Api, namespace: str, names: list[tuple[str, str]]) -> None:
    """Delete the pods and claims, and wait until they are gone (their devices free again)."""
    for pod, claim in names:
        api.delete(path_for("Pod", pod, namespace), gracePeriodSeconds=0)
        api.delete(path_for("ResourceClaim", claim, namespace))
    wait_for(lambda: not api.get(path_for("Pod", namespace=namespace))["items"], timeout=60,
             what=f"pods of {namespace} gone")
    wait_for(lambda: not api.get(path_for("ResourceClaim", namespace=namespace))["items"], timeout=60,
             what=f"claims of {namespace} gone")


def run_selector(api: Api, namespace: str, entry: dict, names: list[tuple[str, str]], nodes: list[str],
                 want: dict[str, Outcome]) -> list[str]:
    """Claims and pods of one selector on every node at once; the disagreements with drawb."""
    for (pod, claim), node in zip(names, nodes):
        api.create(_claim(claim, namespace, entry["class"], entry["cel"]))
        api.create(_pod(pod, namespace, node, claim))
    wanted = [want[node] for node in nodes]
    try:
        got = wait_for(lambda: _settled(api, namespace, names, wanted), timeout=SETTLE_S, what="outcomes settled")
    except TimeoutError:
        got = [observed(api, namespace, pod, claim) for pod, claim in names]
    out = []
    for (pod, _), node, w, g in zip(names, nodes, wanted, got):
        if agrees(w, g) and w.kind == "error" and not _event_says(api, namespace, pod, w.messages):
            events = failed_scheduling_events(api, namespace, pod)
            g = Outcome("error", messages=(f"no FailedScheduling event with drawb's text; events: {events}",))
        elif agrees(w, g):
            continue
        out.append(f"[{entry['class']}] {entry['cel']}\n  on {node}\n  drawb:     {w}\n  scheduler: {g}")
    return out


def _event_says(api: Api, namespace: str, pod: str, texts: tuple[str, ...]) -> bool:
    """Whether a FailedScheduling event about the pod carries one of the texts (events are written async)."""
    try:
        wait_for(lambda: any(t in m for t in texts for m in failed_scheduling_events(api, namespace, pod)),
                 timeout=SETTLE_S, what=f"FailedScheduling event of {pod}")
    except TimeoutError:
        return False
    return True


def test_scheduler_allocates_exactly_what_drawb_selects(control_plane, namespace, timings):
    api = control_plane.api()
    server = api.get("/version")
    version = f"{server['major']}.{server['minor'].rstrip('+')}"
    gates = {k: v for k, v in control_plane.cluster.feature_gates.items() if k in CEL_GATES}
    slices = api.get(path_for("ResourceSlice"))["items"]
    frame = device_frame(slices)
    classes = {c["metadata"]["name"]: c for c in api.get(path_for("DeviceClass"))["items"]}
    nodes = sorted(n["metadata"]["name"] for n in api.get(path_for("Node"))["items"])
    assert len(nodes) == 4 and set(frame["node"]) <= set(nodes)
    assert (frame["driver"] == DRIVER).sum() == 38
    selectors = CORPUS["selectors"]
    assert len(selectors) >= 20

    start = time.monotonic()
    verdicts: list[tuple[dict, dict[str, Outcome]]] = [
        (entry, expected(frame, classes, entry, nodes, version, gates)) for entry in selectors
    ]
    disagreements: list[str] = []
    for index, (entry, want) in enumerate(verdicts):
        names = [(f"p{index}-{i}", f"c{index}-{i}") for i in range(len(nodes))]
        try:
            disagreements += run_selector(api, namespace, entry, names, nodes, want)
        finally:
            _clean(api, namespace, names)
    timings["cel_scheduler_differential_s"] = time.monotonic() - start

    kinds = [w.kind for _, want in verdicts for w in want.values()]
    compared = len(selectors) * len(nodes)
    assert not disagreements, f"{len(disagreements)} of {compared} disagree:\n\n" + "\n\n".join(disagreements)
    # the corpus exercises all three verdicts, errors on at least 3 selectors
    assert kinds.count("allocated") >= 20 and kinds.count("unschedulable") >= 20
    assert sum(any(w.kind == "error" for w in want.values()) for _, want in verdicts) >= 3
