"""``preview`` and ``capacity`` on the 10,000-node synthetic cluster with half of the devices allocated.

Run: .venv/bin/python bench/bench_preview.py [--nodes 10000] [--runs 5] [--anchor-nodes 1000]

The cluster is bench_alloc's: ``synthetic(--nodes, 8)`` with every device of the first half of the nodes
(in name order) held by claims. Measured, each the median of ``--runs``:
- ``state``: gathering the cluster for one attempt (``drawb.plan.PlanState``: nodes in order, slices per
  node, devices in use per pool), what every command does first;
- ``preview``: on a fresh state (nothing remembered from an earlier call: cold) and again on the same state
  (warm), for (a) 1 GPU by class and (b) 8 GPUs with matchAttribute on productName; ``report`` is the
  table and sentence made from it;
- ``capacity`` of the 1-GPU claim (a) on a fresh state.
Anchors in the same run, at ``--anchor-nodes`` nodes (the same cluster, smaller): the naive preview
(``drawb.alloc.allocate`` on every node, each with its own slices, as bench_alloc's decision does until
the first fit) and the naive capacity (copies counted one allocation at a time, node by node), each
beside the grouped answer at that size (state included).
The grouped answers are compared with the naive ones (``same``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_alloc import CASES, half_allocated  # noqa: E402

from drawb.alloc import allocate  # noqa: E402
from drawb.cluster.sim.classes import nvidia_device_classes  # noqa: E402
from drawb.collector import collection_around_command  # noqa: E402
from drawb.plan import PlanState, Workload, capacity, preview  # noqa: E402
from drawb.plan.report import capacity_report, preview_report  # noqa: E402


def workload(key: str) -> Workload:
    claim = CASES[key][1]
    return Workload("ResourceClaim", claim["metadata"]["name"], "bench", {"spec": {}}, [claim], [True])


def timed(fn):
    """Seconds ``fn`` took, and its value; it runs with the garbage collector's policy the front ends set
    around each command (``drawb.collector``): these engines no longer set one themselves."""
    start = time.perf_counter()
    with collection_around_command():
        value = fn()
    return time.perf_counter() - start, value


def naive_preview(cluster, by_node, order, allocated, classes, claim) -> dict[str, list]:
    nodes = {n["metadata"]["name"]: n for n in cluster.nodes}
    return {name: r for name in order
            if (r := allocate([claim], node=nodes[name], slices=by_node[name], classes=classes, allocated=allocated))}


def naive_capacity(cluster, by_node, order, allocated, classes, claim) -> dict[str, int]:
    nodes = {n["metadata"]["name"]: n for n in cluster.nodes}
    out = {}
    for name in order:
        held, count = [], 0
        while (r := allocate([claim], node=nodes[name], slices=by_node[name], classes=classes,
                             allocated=[*allocated, *held])) is not None:
            held += [{"metadata": {"name": ""}, "status": {"allocation": a}} for a in r]
            count += 1
        out[name] = count
    return out


def state_of(cluster, allocated, classes) -> PlanState:
    return PlanState(nodes=cluster.nodes, slices=cluster.resource_slices, classes=classes, claims=allocated,
                     kubernetes_version="1.34", feature_gates=None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--anchor-nodes", type=int, default=1000)
    args = parser.parse_args()
    classes = nvidia_device_classes()
    cluster, by_node, order, allocated = half_allocated(args.nodes)
    rows: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        rows.setdefault(name, []).append(seconds)

    results = {}
    for _ in range(args.runs):
        seconds, state = timed(lambda: state_of(cluster, allocated, classes))
        add("state", seconds)
        for key in ("a", "b"):
            seconds, result = timed(lambda: preview(workload(key), state))
            add(f"preview {key} cold", seconds)
            seconds, result = timed(lambda: preview(workload(key), state))
            add(f"preview {key} warm", seconds)
            seconds, _ = timed(lambda: preview_report(result, "bench", True))
            add(f"preview {key} report", seconds)
            results[key] = result
        fresh = state_of(cluster, allocated, classes)
        seconds, counted = timed(lambda: capacity(workload("a"), fresh))
        add("capacity a cold", seconds)
        seconds, _ = timed(lambda: capacity_report(counted, "bench"))
        add("capacity a report", seconds)
    print(f"synthetic({args.nodes}, 8), first half of the nodes fully allocated; median of {args.runs} runs")
    for name, values in rows.items():
        print(f"  {name:22s} {statistics.median(values) * 1e3:9.1f} ms   (min {min(values) * 1e3:.1f})")
    for key in ("a", "b"):
        print(f"  preview {key}: fits on {len(results[key].fits)} nodes, pick {results[key].pick}")
    print(f"  capacity a: {counted.total} copies on {sum(1 for n in counted.nodes if n.copies)} nodes")

    small, small_by_node, small_order, small_allocated = half_allocated(args.anchor_nodes)
    for key in ("a", "b"):
        seconds, naive = timed(lambda: naive_preview(small, small_by_node, small_order, small_allocated, classes,
                                                     CASES[key][1]))
        grouped_s, grouped = timed(lambda: preview(workload(key), state_of(small, small_allocated, classes)))
        same = naive == {f.node: f.allocations for f in grouped.fits}
        print(f"  anchor: naive preview {key} at {args.anchor_nodes} nodes (allocate on each): {seconds * 1e3:.0f} ms; "
              f"grouped at that size {grouped_s * 1e3:.1f} ms, same={same}")
    seconds, naive = timed(lambda: naive_capacity(small, small_by_node, small_order, small_allocated, classes, CASES["a"][1]))
    grouped_s, grouped = timed(lambda: capacity(workload("a"), state_of(small, small_allocated, classes)))
    same = naive == {n.node: n.copies for n in grouped.nodes}
    print(f"  anchor: naive capacity a at {args.anchor_nodes} nodes: {seconds * 1e3:.0f} ms "
          f"({sum(naive.values())} copies); grouped at that size {grouped_s * 1e3:.1f} ms, same={same}")


if __name__ == "__main__":
    main()
