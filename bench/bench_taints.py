"""``taint``'s blast radius and ``pools`` on the 10,000-node synthetic cluster with half its devices allocated.

Run: PYTHONPATH=. .venv/bin/python bench/bench_taints.py [--nodes 10000] [--runs 5] [--pending 20]

The cluster is bench_alloc's (``synthetic(--nodes, 8)``, every GPU of the first half of the nodes held by
one claim per node), with a running pod per claim (bound, the claim reserved for it) and ``--pending``
pods behind a scheduling gate, each with a claim for one GPU (every other one pinned to the last node). Measured on the listed objects (what the
commands hold once the cluster is read): ``cold``, the first run in the process (the claim index, node
layout and node signatures of the scheduler's view made for the first time), and ``warm``, the median of
the other ``--runs`` (the same objects again, as a session whose cluster did not change between commands):
- ``taint (full node)``: a NoExecute taint selecting one node pool whose GPUs are all allocated (its claim,
  its pod evicted; no pending pod fits there now, so none is tried elsewhere);
- ``taint (free node)``: the same on the last node, whose GPUs are free: the pending pods fit there now, so they
  are tried on the rest of the cluster (pods asking alike are tried once): the pinned ones lose their only fit;
- ``pools``: every pool's counts (``drawb.plan.pools``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_alloc import GPU, half_allocated  # noqa: E402

from drawb.cluster.sim.classes import nvidia_device_classes  # noqa: E402
from drawb.collector import collection_around_command  # noqa: E402
from drawb.plan.pools import pool_status  # noqa: E402
from drawb.plan.taints import Objects, blast_radius  # noqa: E402


def pods_for(allocated: list[dict], order: list[str], pending: int) -> tuple[list[dict], list[dict]]:
    """A bound pod per allocated claim (the claim reserved for it), and gated pods each with a 1-GPU claim,
    every other one pinned to the last node by its hostname."""
    pods, claims = [], []
    for name, claim in zip(order, allocated):
        pod_name = claim["metadata"]["name"]
        uid = f"uid-pod-{pod_name}"
        claim["status"]["reservedFor"] = [{"resource": "pods", "name": pod_name, "uid": uid}]
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name, "namespace": "bench", "uid": uid},
                     "spec": {"nodeName": name, "resourceClaims": [{"name": "g", "resourceClaimName": pod_name}],
                              "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}]},
                     "status": {"phase": "Running"}})
    for i in range(pending):
        name = f"queued-{i:03d}"
        claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                       "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
                       "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                           "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}})
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "bench", "uid": f"uid-pod-{name}"},
                     "spec": {"schedulingGates": [{"name": "example.com/queue"}],
                              **({"nodeSelector": {"kubernetes.io/hostname": order[-1]}} if i % 2 else {}),
                              "resourceClaims": [{"name": "g", "resourceClaimName": name}],
                              "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}]},
                     "status": {"phase": "Pending"}})
    return pods, claims


def timed(fn):
    """(wall seconds, CPU seconds of this process, value): drawb works in one thread, so the CPU time is what
    the wall time is on a core of its own, whatever else the machine runs."""
    start, cpu = time.perf_counter(), time.process_time()
    with collection_around_command():  # the collector's policy the front ends set around each command
        value = fn()
    return time.perf_counter() - start, time.process_time() - cpu, value


def shown(runs: list[tuple[float, float]]) -> str:
    """``cold W ms (CPU C ms), warm W ms (CPU C ms)``: the first run, then the median of the others."""
    wall, cpu = [r[0] for r in runs[1:]], [r[1] for r in runs[1:]]
    return (f"cold {runs[0][0] * 1000:,.0f} ms (CPU {runs[0][1] * 1000:,.0f} ms), warm {statistics.median(wall) * 1000:,.0f} "
            f"ms (CPU {statistics.median(cpu) * 1000:,.0f} ms, median of {len(runs) - 1})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pending", type=int, default=20)
    args = parser.parse_args()
    with collection_around_command():  # built as `connect` builds a cluster: large, so frozen after it
        cluster, by_node, order, allocated = half_allocated(args.nodes)
        pods, queued = pods_for(allocated, order, args.pending)
        classes = nvidia_device_classes()

    def objects() -> Objects:  # fresh lists each run: no state remembered for the same objects
        return Objects(nodes=list(cluster.nodes), slices=list(cluster.resource_slices), classes=classes,
                       claims=[*allocated, *queued], pods=pods, templates=[], taint_rules=[], kubernetes_version="1.37",
                       feature_gates=None)

    taint = {"key": "example.com/maintenance", "effect": "NoExecute"}
    for label, node in (("taint (full node)", order[0]), ("taint (free node)", order[-1])):
        devices = [(GPU, node, d["name"]) for rs in by_node[node] if rs["spec"]["driver"] == GPU for d in rs["spec"]["devices"]]
        runs, radius = [], None
        for _ in range(args.runs):
            wall, cpu, radius = timed(lambda: blast_radius(objects(), devices, taint))
            runs.append((wall, cpu))
        print(f"{label}: {shown(runs)} ({len(radius.devices)} devices, {len(radius.claims)} claims, "
              f"{len(radius.evicted)} evicted, {len(radius.losing_fit)} pending losing their fit)")
    runs = []
    for _ in range(args.runs):
        wall, cpu, status = timed(lambda: pool_status(cluster.resource_slices, [*allocated, *queued], [], "1.37", None))
        runs.append((wall, cpu))
    print(f"pools: {shown(runs)} ({len(status.pools)} pools)")


if __name__ == "__main__":
    main()
