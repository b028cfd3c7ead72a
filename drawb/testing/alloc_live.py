"""Apply generated allocation scenarios to a real control plane and read what the scheduler did.

The flow, for many scenarios at once (their nodes and devices are disjoint):

1. ``publish``: DeviceClasses, Nodes and ResourceSlices through the fake driver's publisher; wait
   until kwok has made the nodes Ready.
2. ``create_allocated``: the claims that already hold devices, their ``status.allocation`` written
   through the status subresource, as the scheduler writes it (no reservation: the resourceclaim
   controller leaves an allocated, unreserved claim alone).
3. ``launch``: for every node of every scenario, a copy of the scenario's claims and one pod using
   them, pinned to that node with a ``nodeSelector`` so the real scheduler (not the pod's author)
   runs the DRA Filter there.
4. ``outcomes``: per pod, "allocated" (every claim has an allocation: the scheduler's devices),
   "unschedulable" or "error" (``PodScheduled=False``, reason ``Unschedulable`` or
   ``SchedulerError``, with the scheduler's message), or "evicted": allocated and bound, then
   deleted by kube-controller-manager's device taint eviction (a ``DeviceTaintManagerEviction``
   event) because an allocated device has a ``NoExecute`` taint that no toleration in the
   allocation result tolerates; the claim is deallocated with the pod, so its devices are lost.
5. ``clean``: delete pods and claims, and wait until they are gone.
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from drawb.testing.alloc_scenarios import ADMIN_NAMESPACE_LABEL, MANAGED_BY, SCENARIO_LABEL, AllocScenario
from drawb.testing.api import Api, path_for
from drawb.testing.fake_driver import FakeDriver, Inventory

HOSTNAME = "kubernetes.io/hostname"
WORKERS = 8
RUN_LABEL = "drawb.dev/alloc-run"
EVICTION_REASON = "DeviceTaintManagerEviction"  # the event of kube-controller-manager's device taint eviction


@dataclass
class Placement:
    """One pod of one scenario on one node, and what happened to it."""

    scenario: AllocScenario
    node: str
    pod: str
    claims: list[dict]  # as the API server stored them at creation
    kind: str = ""  # "allocated", "unschedulable", "error", "evicted"; "" while undecided
    allocations: list[dict] = field(default_factory=list)
    message: str = ""


def admin_namespace(control_plane, prefix: str) -> str:
    """A fresh namespace of the control plane, labelled for admin access (1.34 requires it for
    ``adminAccess: true`` requests); its name."""
    name = control_plane.create_namespace(prefix)
    api = control_plane.api()
    ns = api.get(path_for("Namespace", name))
    ns["metadata"].setdefault("labels", {}).update(ADMIN_NAMESPACE_LABEL)
    api.request("PUT", path_for("Namespace", name), ns)
    return name


def _parallel(fn, items: list) -> list:
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="alloc-live") as pool:
        return list(pool.map(fn, items))


def publish(api: Api, scenarios: list[AllocScenario], shared_classes: list[dict], log_dir: Path) -> None:
    """Create every scenario's nodes, slices and classes (and the shared classes); wait for Ready."""
    inventory = Inventory(
        nodes=[n for s in scenarios for n in s.nodes],
        resource_slices=[rs for s in scenarios for rs in s.slices],
        device_classes=[*shared_classes, *(c for s in scenarios for c in s.classes)],
    )
    driver = FakeDriver(api, log_dir)
    driver.publish(inventory)
    driver.wait_nodes_ready(n["metadata"]["name"] for n in inventory.nodes)


def stored_state(api: Api, scenarios: list[AllocScenario]) -> dict[str, dict[str, list[dict] | dict]]:
    """Per scenario, its objects as the API server holds them (after defaulting and gate-dependent drops)."""
    names = {s.name for s in scenarios}
    out: dict[str, dict] = {n: {"nodes": {}, "slices": [], "classes": []} for n in names}
    for kind, key in (("Node", "nodes"), ("ResourceSlice", "slices"), ("DeviceClass", "classes")):
        for obj in api.get(path_for(kind), labelSelector=SCENARIO_LABEL)["items"]:
            scenario = obj["metadata"]["labels"][SCENARIO_LABEL]
            if scenario not in out:
                continue
            if key == "nodes":
                out[scenario]["nodes"][obj["metadata"]["name"]] = obj
            else:
                out[scenario][key].append(obj)
    return out


def create_allocated(api: Api, namespace: str, scenarios: list[AllocScenario], run: str) -> dict[str, list[dict]]:
    """Create the claims that already hold devices, with their allocation; stored claims per scenario."""
    def create(item: tuple[AllocScenario, dict]) -> tuple[str, dict]:
        scenario, claim = item
        body = _namespaced(claim, namespace, run)
        status = body.pop("status")
        stored = api.create(body)
        stored["status"] = status
        return scenario.name, api.request("PUT", path_for("ResourceClaim", stored["metadata"]["name"], namespace)
                                          + "/status", stored)

    out: dict[str, list[dict]] = {s.name: [] for s in scenarios}
    for name, stored in _parallel(create, [(s, c) for s in scenarios for c in s.allocated]):
        out[name].append(stored)
    return out


def launch(api: Api, namespace: str, scenarios: list[AllocScenario], run: str) -> list[Placement]:
    """For every node of every scenario, its own copy of the claims and one pod pinned to the node."""
    items = []
    for scenario in scenarios:
        for index, node in enumerate(scenario.nodes):
            items.append((scenario, index, node["metadata"]["name"]))

    def start(item: tuple[AllocScenario, int, str]) -> Placement:
        scenario, index, node = item
        pod = f"{scenario.name}-n{index}"
        claims = []
        for claim in scenario.claims:
            body = _namespaced(claim, namespace, run)
            body["metadata"]["name"] = f"{claim['metadata']['name']}-n{index}"
            claims.append(api.create(body))
        api.create(_pod(pod, namespace, node, [c["metadata"]["name"] for c in claims], run, scenario.name))
        return Placement(scenario, node, pod, claims)

    return _parallel(start, items)


def outcomes(api: Api, namespace: str, placements: list[Placement], timeout: float = 90) -> None:
    """Fill in each placement's outcome from the claims' allocations and the pods' conditions."""
    deadline = time.monotonic() + timeout
    while True:
        claims = {c["metadata"]["name"]: c for c in api.get(path_for("ResourceClaim", namespace=namespace))["items"]}
        pods = {p["metadata"]["name"]: p for p in api.get(path_for("Pod", namespace=namespace))["items"]}
        evicted = {e["involvedObject"]["name"] for e in api.get(path_for("Event", namespace=namespace))["items"]
                   if e.get("reason") == EVICTION_REASON and e["involvedObject"].get("kind") == "Pod"}
        for placement in placements:
            _observe(placement, claims, pods)
            if not placement.kind and placement.pod in evicted:
                placement.kind = "evicted"
        if all(p.kind for p in placements) or time.monotonic() > deadline:
            return
        time.sleep(0.5)


def _observe(placement: Placement, claims: dict[str, dict], pods: dict[str, dict]) -> None:
    current = [claims.get(c["metadata"]["name"]) for c in placement.claims]
    allocations = [((c or {}).get("status") or {}).get("allocation") for c in current]
    if all(allocations):
        placement.kind, placement.allocations, placement.message = "allocated", allocations, ""
        return
    pod = pods.get(placement.pod) or {}
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond["type"] == "PodScheduled" and cond["status"] == "False":
            kind = {"SchedulerError": "error", "Unschedulable": "unschedulable"}.get(cond.get("reason", ""))
            if kind:
                placement.kind, placement.message = kind, cond.get("message", "")


def clean(api: Api, namespace: str, run: str) -> None:
    """Delete the run's pods and claims and wait until they are gone."""
    selector = f"{RUN_LABEL}={run}"
    api.delete(path_for("Pod", namespace=namespace), labelSelector=selector, gracePeriodSeconds="0")
    api.delete(path_for("ResourceClaim", namespace=namespace), labelSelector=selector)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        left = (api.get(path_for("Pod", namespace=namespace), labelSelector=selector)["items"]
                + api.get(path_for("ResourceClaim", namespace=namespace), labelSelector=selector)["items"])
        if not left:
            return
        time.sleep(0.5)
    raise TimeoutError(f"{len(left)} pods and claims of run {run} still in {namespace} after 120s")


def _namespaced(obj: dict, namespace: str, run: str) -> dict:
    body = copy.deepcopy(obj)
    body["metadata"]["namespace"] = namespace
    body["metadata"]["labels"] = {**body["metadata"].get("labels", {}), RUN_LABEL: run}
    return body


def _pod(name: str, namespace: str, node: str, claims: list[str], run: str, scenario: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {**MANAGED_BY, SCENARIO_LABEL: scenario, RUN_LABEL: run}},
        "spec": {
            "nodeSelector": {HOSTNAME: node},  # spec.nodeName would bypass the scheduler
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "ctr", "image": "ubuntu:22.04", "command": ["sleep", "infinity"],
                            "resources": {"claims": [{"name": f"c{i}"} for i in range(len(claims))]}}],
            "resourceClaims": [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)],
        },
    }

