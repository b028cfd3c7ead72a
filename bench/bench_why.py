"""``why`` for a pending 8-GPU ``matchAttribute`` pod on the 10,000-node synthetic cluster, half allocated.

Run: .venv/bin/python bench/bench_why.py [--runs 5] [--nodes 10000]

The cluster is `synthetic(--nodes, 8)` (the objects the simulated API server would hold) with every
GPU device of the first half of the nodes (name order) held by an allocated claim, one per node.
The pod asks for 8 GPUs of `gpu.nvidia.com` with `matchAttribute: resource.kubernetes.io/pcieRoot`:
no node has 8 GPUs under one PCIe root, so it stays pending and `why` names the `constraints` stage.
Measured: `drawb.explain.explain` on a ClusterState of those objects (the pure explanation: every
device of every node through the funnel, then the constraint stage), median of `--runs`.
Anchor, same run: the simulated scheduler's decision for the same pod (every node tried with
`drawb.alloc.allocate`, the allocated state gathered once, as the scheduler's PreFilter does),
which reaches the same verdict (no node) with no explanation.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from drawb.alloc.allocator import allocate_with
from drawb.alloc.state import gather_allocated
from drawb.alloc.versions import flavor
from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.cluster.sim.scenarios import synthetic
from drawb.explain import ClusterState, explain

GPU = "gpu.nvidia.com"


def objects(nodes: int) -> ClusterState:
    """The half-allocated synthetic cluster and the pending pod with its claim."""
    cluster = synthetic(nodes, 8)
    by_node: dict[str, list[dict]] = {}
    for rs in cluster.resource_slices:
        by_node.setdefault(rs["spec"]["nodeName"], []).append(rs)
    order = sorted(by_node)
    claims = []
    for name in order[: nodes // 2]:
        results = [{"request": "req", "driver": GPU, "pool": name, "device": d["name"]}
                   for rs in by_node[name] if rs["spec"]["driver"] == GPU for d in rs["spec"]["devices"]]
        claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                       "metadata": {"name": f"full-{name}", "namespace": "bench", "uid": f"uid-{name}"},
                       "spec": {"devices": {"requests": [{"name": "req", "exactly": {
                           "deviceClassName": GPU, "allocationMode": "ExactCount", "count": len(results)}}]}},
                       "status": {"allocation": {"devices": {"results": results}},
                                  "reservedFor": [{"resource": "pods", "name": f"job-{name}", "uid": f"pod-{name}"}]}})
    claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": "eight", "namespace": "bench", "uid": "uid-eight"},
                   "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                       "deviceClassName": GPU, "allocationMode": "ExactCount", "count": 8}}],
                       "constraints": [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "bench", "uid": "pod-trainer"},
           "spec": {"containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": "eight"}]},
           "status": {"phase": "Pending"}}
    return ClusterState(pods=[pod], claims=claims, slices=cluster.resource_slices, classes=nvidia_device_classes(),
                        nodes=cluster.nodes, kubernetes_version="1.34")


def decision(state: ClusterState) -> str | None:
    """The simulated scheduler's verdict for the pod: the first node where the claim fits, or None."""
    chosen = flavor(state.kubernetes_version, state.feature_gates)
    allocated = gather_allocated(state.allocated_claims, False)
    claim = state.claim("bench", "eight")
    for node in state.nodes:
        name = node["metadata"]["name"]
        if allocate_with(chosen, [claim], node=node, slices=state.slices_for(name), classes=state.classes,
                         state=allocated) is not None:
            return name
    return None


def timed(fn, runs: int) -> tuple[float, float, object]:
    times, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10000)
    args = parser.parse_args(argv)
    state = objects(args.nodes)
    first = time.perf_counter()
    explanation = explain(state, "Pod", "bench", "trainer")
    cold = time.perf_counter() - first
    median, fastest, explanation = timed(lambda: explain(state, "Pod", "bench", "trainer"), args.runs)
    anchor, anchor_min, verdict = timed(lambda: decision(state), max(1, args.runs // 2))
    devices = sum(len(rs["spec"]["devices"]) for rs in state.slices)
    print(f"synthetic({args.nodes}, 8): {devices} devices, {len(state.allocated_claims)} allocated claims")
    print(f"why: state {explanation.state}, stage {explanation.stage}; {explanation.summary}")
    print(f"| why (explain), first call | {cold * 1e3:,.0f} ms |")
    print(f"| why (explain), median of {args.runs} | {median * 1e3:,.0f} ms (min {fastest * 1e3:,.0f}) |")
    print(f"| anchor: simulated scheduler's decision (node: {verdict}) | {anchor * 1e3:,.0f} ms (min {anchor_min * 1e3:,.0f}) |")
    print(f"| ratio why / decision | {median / anchor:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
