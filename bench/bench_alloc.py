"""One node's allocation and a whole scheduling decision: `drawb.alloc.allocate` against the Go allocator
and the real scheduler, measured in the same run.

Run: .venv/bin/python bench/bench_alloc.py [--runs 7] [--nodes 10000] [--real-nodes 1000] [--skip-real]

Per node (anchor: `testcluster/allocbench`, the scheduler's own `k8s.io/dynamic-resource-allocation/structured`
at the pinned version, built from the control plane's module graph, run on the very same inputs written
as JSON; it times NewAllocator + Allocate, what the scheduler does for a pod on one node):
- (a) 1 GPU by class (`gpu.nvidia.com`, count 1) on an 8-GPU H200 node,
- (b) 8 GPUs with `matchAttribute: gpu.nvidia.com/productName` on that node,
- (c) a MIG profile (`mig.nvidia.com`, `profile == '1g.10gb'`) on an H100 node with 7 free MIG devices,
  its 7 others allocated, among 100 allocated claims on a 32-node cluster (all 32 nodes' slices given).
Both sides report the median of `--runs` rounds of at least 0.2 s each; the ratio is drawb / Go.

The whole decision (the simulated scheduler's): `synthetic(--nodes, 8)` with every GPU of the first
half of the nodes (in name order, the order nodes are tried) allocated, so the first feasible node is
in the middle; `drawb.cluster.sim.scheduler.schedule` makes one `PlanState` per decision (from all
slices and allocated claims, as the scheduler's PreFilter) and walks the nodes through its filters,
alike nodes allocated once (`drawb.alloc.verdicts`), until a node fits. Median of `--runs`. Beside
it, the real scheduler on the local control plane at
`--real-nodes` nodes (kwok, the same synthetic cluster and the same half allocated through claims
whose status holds the allocation): the time from creating the pod (its claim exists already) to
the pod's binding (`spec.nodeName` set), median of `--runs` pods, each deleted before the next.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.cluster.sim.scenarios import synthetic
from drawb.testing import alloc_anchor

GPU = "gpu.nvidia.com"
MIN_ROUND_S = 0.2


def claim(name: str, request: dict, constraints: list | None = None, namespace: str = "bench") -> dict:
    """A ResourceClaim with one request, as the API server stores it (defaults filled in)."""
    devices: dict = {"requests": [{"name": "req", "exactly": {"allocationMode": "ExactCount", **request}}]}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"}, "spec": {"devices": devices}}


CASES = {
    "a": ("1 GPU by class", claim("one-gpu", {"deviceClassName": "gpu.nvidia.com", "count": 1})),
    "b": ("8 GPUs, matchAttribute", claim("eight-gpus", {"deviceClassName": "gpu.nvidia.com", "count": 8},
                                          [{"requests": ["req"], "matchAttribute": "gpu.nvidia.com/productName"}])),
    "c": ("MIG profile, 100 allocated claims", claim("one-mig", {
        "deviceClassName": "mig.nvidia.com", "count": 1,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]})),
}


def allocated_claim(name: str, devices: list[tuple[str, str]]) -> dict:
    """A claim holding ``devices`` ((pool, device) pairs), as the scheduler leaves it."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "req", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": len(devices)}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "req", "driver": GPU, "pool": pool, "device": device} for pool, device in devices]}}},
    }


def node_inputs() -> dict[str, dict]:
    """The per-node inputs of cases a, b and c."""
    cluster = synthetic(32, 8)
    by_node = {}
    for rs in cluster.resource_slices:
        by_node.setdefault(rs["spec"]["nodeName"], []).append(rs)
    nodes = {n["metadata"]["name"]: n for n in cluster.nodes}
    h200 = "gpu-node-00002"  # models rotate A100, H100 (1 GPU + 7 MIG), H200, L4
    h100, other_h100 = "gpu-node-00001", "gpu-node-00005"
    out = {}
    for key in ("a", "b"):
        out[key] = dict(node=nodes[h200], slices=by_node[h200], allocated=[])
    mig = lambda node: [(node, d["name"]) for rs in by_node[node] if rs["spec"]["driver"] == GPU  # noqa: E731
                        for d in rs["spec"]["devices"] if "-mig-" in d["name"]]
    # The H100 node has one full GPU and 7 MIG devices, all free; 100 claims hold devices elsewhere:
    # the 7 MIG devices of another H100, and full GPUs across the cluster.
    held = [[d] for d in mig(other_h100)]
    full = [(rs["spec"]["pool"]["name"], d["name"]) for rs in cluster.resource_slices
            if rs["spec"]["driver"] == GPU and rs["spec"]["nodeName"] not in (h100, other_h100)
            for d in rs["spec"]["devices"] if "-mig-" not in d["name"]]
    held += [[d] for d in full[:100 - len(held)]]
    allocated = [allocated_claim(f"held-{i}", devs) for i, devs in enumerate(held)]
    out["c"] = dict(node=nodes[h100], slices=cluster.resource_slices, allocated=allocated)
    return out


def timed(fn, runs: int) -> tuple[float, int]:
    """Median seconds per call over ``runs`` rounds of at least MIN_ROUND_S, and calls per round."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= MIN_ROUND_S or calls >= 1 << 16:
            break
        calls *= 2
    rounds = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - start) / calls)
    return statistics.median(rounds), calls


def per_node(runs: int) -> list[dict]:
    """Cases a-c: drawb's time per node, Go's, the ratio, and whether both chose the same devices."""
    from drawb.alloc import allocate

    classes = nvidia_device_classes()
    inputs = node_inputs()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for key, (_, pod_claim) in CASES.items():
            files.append(alloc_anchor.write_scenario(Path(tmp) / f"{key}.json", claims=[pod_claim], classes=classes,
                                                     **inputs[key]))
        go = alloc_anchor.run(files, rounds=runs, min_time_ms=int(MIN_ROUND_S * 1000))
    for (key, (what, pod_claim)), go_report in zip(CASES.items(), go):
        args = dict(slices=inputs[key]["slices"], classes=classes, allocated=inputs[key]["allocated"])
        node = inputs[key]["node"]
        result = allocate([pod_claim], node=node, **args)
        seconds, calls = timed(lambda: allocate([pod_claim], node=node, **args), runs)
        mine = sorted(r["device"] for r in result[0]["devices"]["results"]) if result else None
        theirs = sorted(r["device"] for r in go_report["allocation"][0]["devices"]["results"]) \
            if go_report["verdict"] == "allocated" else None
        rows.append({"case": key, "what": what, "drawb_us": seconds * 1e6, "go_us": go_report["ns_per_node"] / 1e3,
                     "ratio": seconds * 1e9 / go_report["ns_per_node"], "calls": calls,
                     "same": mine == theirs, "devices": mine})
    return rows


def half_allocated(nodes: int) -> tuple:
    """The synthetic cluster, its slices per node, and claims holding every device of the first half."""
    cluster = synthetic(nodes, 8)
    by_node: dict[str, list[dict]] = {}
    for rs in cluster.resource_slices:
        by_node.setdefault(rs["spec"]["nodeName"], []).append(rs)
    order = sorted(by_node)
    allocated = []
    for name in order[: nodes // 2]:
        devices = [(name, d["name"]) for rs in by_node[name] if rs["spec"]["driver"] == GPU for d in rs["spec"]["devices"]]
        allocated.append(allocated_claim(f"full-{name}", devices))
    return cluster, by_node, order, allocated


def bench_pod(name: str, claim_name: str) -> dict:
    """A pod using one existing claim (as the API server stores it, with a uid)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench", "uid": f"uid-pod-{name}"},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}],
                     "resourceClaims": [{"name": "g", "resourceClaimName": claim_name}]}}


def sim_decision(pod: dict, pod_claims: list[dict], nodes: list[dict], slices: list[dict], classes: list[dict],
                 allocated: list[dict]):
    """The simulated scheduler's decision (``drawb.cluster.sim.scheduler.schedule``): one ``PlanState``
    made for the attempt (the PreFilter), then nodes in order through its filters, alike nodes
    allocated once (``drawb.alloc.verdicts``), until one fits."""
    from drawb import versions
    from drawb.alloc.view import PlanState
    from drawb.cluster.sim.scheduler import schedule

    names = {c["metadata"]["name"] for c in classes}

    def snapshot() -> PlanState:
        return PlanState(nodes=nodes, slices=slices, classes=classes, claims=[*allocated, *pod_claims],
                         kubernetes_version=versions.DEFAULT, feature_gates=None)

    return schedule(pod, pod_claims, nodes, snapshot, names.__contains__)


def decision(node_count: int, runs: int) -> list[dict]:
    """Cases a and b across the half-allocated synthetic cluster: median ms to the first feasible node."""
    cluster, _, order, allocated = half_allocated(node_count)
    by_name = {n["metadata"]["name"]: n for n in cluster.nodes}
    nodes = [by_name[name] for name in sorted(by_name)]
    classes = nvidia_device_classes()
    rows = []
    for key in ("a", "b"):
        what, pod_claim = CASES[key]
        pod = bench_pod(key, pod_claim["metadata"]["name"])
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            chosen = sim_decision(pod, [pod_claim], nodes, cluster.resource_slices, classes, allocated)
            times.append(time.perf_counter() - start)
        rows.append({"case": key, "what": what, "nodes": node_count, "node": chosen.node,
                     "tried": order.index(chosen.node) + 1 if chosen.node else len(order),
                     "median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3})
    return rows


def real_scheduler(node_count: int, runs: int, kubeconfig: str | None = None) -> list[dict]:
    """Cases a and b on the local control plane at ``node_count`` nodes: pod creation -> binding, median.

    With ``kubeconfig``, a cluster already up with ``--scenario synthetic:<node_count>x8`` is used.
    """
    from drawb.testing.alloc_live import _parallel
    from drawb.testing.api import Api, path_for
    from drawb.testing.cluster import LocalCluster

    _, _, order, allocated = half_allocated(node_count)
    cluster = None if kubeconfig else LocalCluster(name=f"bench-alloc-{os.getpid()}")
    rows = []
    try:
        started = time.monotonic()
        if cluster:
            cluster.up(scenario=f"synthetic:{node_count}x8")
        up_s = time.monotonic() - started
        api = cluster.api() if cluster else Api.from_kubeconfig(kubeconfig)
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})

        def hold(obj: dict) -> None:
            body = copy.deepcopy(obj)
            status = body.pop("status")
            body["metadata"].pop("uid")
            stored = api.create(body)
            stored["status"] = status
            api.request("PUT", path_for("ResourceClaim", stored["metadata"]["name"], "bench") + "/status", stored)

        started = time.monotonic()
        _parallel(hold, allocated)
        hold_s = time.monotonic() - started
        time.sleep(2)
        for key in ("a", "b"):
            what, pod_claim = CASES[key]
            times, chosen = [], None
            for run in range(runs):
                body = copy.deepcopy(pod_claim)
                body["metadata"] = {"name": f"{key}-{run}", "namespace": "bench"}
                api.create(body)
                pod = bench_pod(f"{key}-{run}", f"{key}-{run}")
                del pod["metadata"]["uid"]
                time.sleep(0.5)  # the scheduler's informer has the claim before the pod comes
                start = time.monotonic()
                api.create(pod)
                while True:
                    got = api.get(path_for("Pod", f"{key}-{run}", "bench"))
                    if got["spec"].get("nodeName"):
                        times.append(time.monotonic() - start)
                        chosen = got["spec"]["nodeName"]
                        break
                    if time.monotonic() - start > 120:
                        raise TimeoutError(f"pod {key}-{run} not bound after 120 s")
                    time.sleep(0.005)
                api.delete(path_for("Pod", f"{key}-{run}", "bench"), gracePeriodSeconds="0")
                api.delete(path_for("ResourceClaim", f"{key}-{run}", "bench"))
                while api.get_or_none(path_for("ResourceClaim", f"{key}-{run}", "bench")):
                    time.sleep(0.05)
            rows.append({"case": key, "what": what, "nodes": node_count, "node": chosen,
                         "median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
                         "up_s": up_s, "hold_s": hold_s})
    finally:
        if cluster:
            cluster.down()
        else:
            api.delete(path_for("Namespace", "bench"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--nodes", type=int, default=10000, help="nodes of the simulated decision")
    parser.add_argument("--real-nodes", type=int, default=1000, help="nodes of the local control plane")
    parser.add_argument("--skip-real", action="store_true", help="no local control plane")
    parser.add_argument("--kubeconfig", help="use this cluster, up with --scenario synthetic:<real-nodes>x8")
    parser.add_argument("--skip-node", action="store_true", help="skip the per-node cases")
    parser.add_argument("--skip-decision", action="store_true")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}")

    print("\none node's allocation (median of rounds; Go = structured.NewAllocator + Allocate)")
    print(f"{'case':<40} {'drawb':>12} {'Go':>10} {'ratio':>7}  same devices")
    for row in [] if args.skip_node else per_node(args.runs):
        print(f"({row['case']}) {row['what']:<36} {row['drawb_us']:>9.1f} us {row['go_us']:>7.1f} us "
              f"{row['ratio']:>6.1f}x  {row['same']} {row['devices']}")
    sizes = [] if args.skip_decision else [args.nodes]
    if not args.skip_real and args.real_nodes != args.nodes:
        sizes.append(args.real_nodes)
    decisions = {size: decision(size, args.runs) for size in sizes}
    real = [] if args.skip_real else real_scheduler(args.real_nodes, args.runs, args.kubeconfig)
    for size, rows in decisions.items():
        print(f"\nthe simulated scheduler's decision, {size} nodes, first half fully allocated")
        for row in rows:
            print(f"({row['case']}) {row['what']:<36} median {row['median_ms']:8.1f} ms (min {row['min_ms']:.1f}), "
                  f"first feasible {row['node']} after {row['tried']} nodes")
    if real:
        print(f"\nthe real scheduler, {args.real_nodes} nodes (kwok), pod creation -> binding")
        for row in real:
            print(f"({row['case']}) {row['what']:<36} median {row['median_ms']:8.1f} ms (min {row['min_ms']:.1f}), "
                  f"bound to {row['node']} (cluster up {row['up_s']:.0f}s, claims held in {row['hold_s']:.0f}s)")
        for rows in decisions.values():
            for d, r in zip(rows, real):
                print(f"({d['case']}) drawb at {d['nodes']} nodes / real scheduler at {r['nodes']} nodes: "
                      f"{d['median_ms'] / r['median_ms']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
