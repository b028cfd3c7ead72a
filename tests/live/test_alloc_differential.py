"""drawb's allocator against the real scheduler: the same verdict on every node, valid devices both ways.

``drawb.testing.alloc_scenarios`` draws 160 scenarios (static MIG and partitionable GPUs, device
taints, claims already allocated, counts, ``All``, ``firstAvailable``, ``matchAttribute``,
``distinctAttribute``, selectors that fail at run time, admin access, tolerations, the claim limit),
which are applied for real to one cluster with ``DRAPartitionableDevices`` and ``DRADeviceTaints``
on. Every scenario's nodes get one pod each, pinned with a ``nodeSelector``, using a copy of the
scenario's claims: the real scheduler runs the DRA Filter on that node. For every pod, drawb is
given the objects as the API server stored them and must say what the scheduler did:

* allocated: then the scheduler's devices, and drawb's own choice, both pass every rule of
  ``drawb.testing.alloc_check`` (which does not use drawb.alloc);
* unschedulable (``PodScheduled=False``, reason ``Unschedulable``);
* error (reason ``SchedulerError``): the scheduler's message carries drawb's error text;
* evicted (allocated, bound, then deleted by kube-controller-manager's device taint eviction for
  a ``NoExecute`` device taint the allocation does not tolerate): drawb must say allocated, and
  its own choice must pass every rule; which of drawb's devices would be evicted is reported.

Scenarios run in batches of 80; a batch's pods and claims are deleted (and gone) before the next.
All slices are node-local, so scenarios never see each other's devices.
"""

from __future__ import annotations

import collections
import time

import pytest

from drawb.alloc import AllocationError, allocate
from drawb.testing import alloc_live
from drawb.testing.alloc_check import evicting_taints, problems
from drawb.testing.alloc_scenarios import GATES, generate_many, nvidia_classes
from drawb.testing.api import path_for

pytestmark = [pytest.mark.live, pytest.mark.every_version]

SCENARIOS = 160
BATCH = 80
DRA_GATES = ("DRAAdminAccess", "DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaints",
             "DRAPartitionableDevices", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus")


@pytest.fixture(scope="module")
def cluster(start_control_plane):
    """A cluster with the gates the scenarios need (partitionable devices, device taints).

    With DRADeviceTaints on, the 1.34 scheduler waits for its DeviceTaintRule informer
    (resource.k8s.io/v1alpha3) before it schedules anything, so that version must be served.
    """
    cp = start_control_plane(GATES, runtime_config="resource.k8s.io/v1alpha3=true")
    yield cp
    cp.cluster.down()


def drawb_verdict(placement, state: dict, classes: list[dict], allocated: list[dict], version: str, gates: dict):
    """(kind, allocations, message) as drawb.alloc.allocate answers for the placement's node."""
    try:
        result = allocate(placement.claims, node=state["nodes"][placement.node], slices=state["slices"],
                          classes=classes, allocated=allocated, kubernetes_version=version, feature_gates=gates)
    except AllocationError as err:
        return "error", [], str(err)
    return ("unschedulable", [], "") if result is None else ("allocated", result, "")


def compare(placement, want, state, classes, allocated, version, gates) -> list[str]:
    """Disagreements between drawb and the scheduler for one pod (empty when they agree)."""
    kind, mine, message = want
    where = f"{placement.pod} on {placement.node} ({', '.join(placement.scenario.features)})"
    if placement.kind == "evicted":  # allocated and bound, then evicted: the scheduler's devices are gone
        if kind != "allocated":
            return [f"{where}: drawb says {kind} {message}; the scheduler allocated (the pod was then evicted "
                    "for a NoExecute device taint)"]
        context = dict(node=state["nodes"][placement.node], slices=state["slices"], classes=classes,
                       allocated=allocated, kubernetes_version=version, feature_gates=gates)
        return [f"{where}: drawb's allocation: {p}" for p in problems(placement.claims, mine, **context)]
    if placement.kind != kind:
        return [f"{where}: drawb says {kind} {message}; the scheduler: {placement.kind or 'nothing'} "
                f"{placement.message}"]
    if kind == "error" and message not in placement.message:
        return [f"{where}: both error, but the scheduler says {placement.message!r}, drawb {message!r}"]
    out = []
    if kind == "allocated":
        context = dict(node=state["nodes"][placement.node], slices=state["slices"], classes=classes,
                       allocated=allocated, kubernetes_version=version, feature_gates=gates)
        for who, allocations in (("scheduler", placement.allocations), ("drawb", mine)):
            out += [f"{where}: {who}'s allocation: {p}" for p in problems(placement.claims, allocations, **context)]
    return out


def _devices(allocations: list[dict]) -> list[list[tuple]]:
    return [sorted((r["request"], r["pool"], r["device"]) for r in a["devices"]["results"]) for a in allocations]


def test_drawb_allocates_like_the_real_scheduler(cluster, timings):
    started = time.monotonic()
    api = cluster.api()
    version = api.get("/version")["gitVersion"]  # the patch too: the claim limit check moved within minors
    enabled = cluster.cluster.feature_gates_enabled()
    gates = {g: enabled.get(g, False) for g in DRA_GATES}
    assert gates["DRAPartitionableDevices"] and gates["DRADeviceTaints"]
    namespace = alloc_live.admin_namespace(cluster, "alloc-differential")
    scenarios = generate_many(SCENARIOS, kubernetes_version=version, feature_gates=gates)
    shared = nvidia_classes()
    alloc_live.publish(api, scenarios, shared, cluster.cluster.pod_log_dir)
    stored = alloc_live.stored_state(api, scenarios)
    classes = [c for c in api.get(path_for("DeviceClass"))["items"]]
    timings["alloc_differential_publish_s"] = time.monotonic() - started

    disagreements: list[str] = []
    verdicts: collections.Counter = collections.Counter()
    same_devices = 0
    undecided: list[str] = []
    evictions: list[str] = []
    for first in range(0, SCENARIOS, BATCH):
        batch = scenarios[first:first + BATCH]
        run = f"b{first}"
        try:
            allocated = alloc_live.create_allocated(api, namespace, batch, run)
            time.sleep(1)  # let the scheduler's claim informer see the existing allocations first
            placements = alloc_live.launch(api, namespace, batch, run)
            alloc_live.outcomes(api, namespace, placements)
            for placement in placements:
                name = placement.scenario.name
                if not placement.kind:  # the real scheduler gave no verdict within the wait
                    undecided.append(f"{placement.pod} on {placement.node} ({', '.join(placement.scenario.features)})")
                    verdicts["undecided"] += 1
                    continue
                want = drawb_verdict(placement, stored[name], classes, allocated[name], version, gates)
                disagreements += compare(placement, want, stored[name], classes, allocated[name], version, gates)
                verdicts[placement.kind] += 1
                if placement.kind == "evicted":
                    evictions.append(f"{placement.pod} on {placement.node}: drawb's devices would be evicted for "
                                     f"{evicting_taints(want[1], stored[name]['slices']) or 'nothing'}")
                same_devices += want[0] == "allocated" == placement.kind and (
                    _devices(want[1]) == _devices(placement.allocations))
        finally:
            alloc_live.clean(api, namespace, run)
    timings["alloc_differential_s"] = time.monotonic() - started
    print(f"\nalloc differential: {SCENARIOS} scenarios, {sum(verdicts.values())} pods: {dict(verdicts)}; "
          f"same devices as the scheduler in {same_devices} of {verdicts['allocated']} allocations; "
          f"{time.monotonic() - started:.0f}s")

    placements_total = sum(verdicts.values())
    if evictions:
        print("allocated, then evicted by the device taint eviction:\n" + "\n".join(evictions))
    assert not disagreements, f"{len(disagreements)} of {placements_total} disagree:\n" + "\n".join(disagreements)
    # A pod whose allocated device has a NoExecute taint that the result does not tolerate (1.34's results
    # carry no tolerations; only tolerations with effect NoExecute count) is evicted by kube-controller-manager
    # right after binding, and its claim deallocated: "evicted" above (ad0135-n0). Pods with no verdict at
    # all when the wait ends are listed, not compared; more than two of them fail the test.
    if undecided:
        print("no verdict from the real scheduler within the wait:\n" + "\n".join(undecided))
    assert len(undecided) <= 2, undecided
    # the scenarios exercise all three verdicts
    assert verdicts["allocated"] >= 40 and verdicts["unschedulable"] >= 20 and verdicts["error"] >= 10, verdicts
