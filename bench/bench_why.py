"""``why``, ``preview`` and ``capacity`` end to end, through the command runner, on the 10,000-node
synthetic cluster with half of the devices allocated.

Run: nice -n 5 .venv/bin/python bench/bench_why.py [--nodes 10000] [--runs 5] [--changed]

The session is connected to a simulated cluster made of `synthetic(--nodes, 8)` plus, as seed objects,
one running pod per node of the first half of the nodes (name order) with a claim holding every GPU
device of its node, and the pod ``bench/trainer`` whose claim ``eight`` asks for 8 GPUs of
``gpu.nvidia.com`` with ``matchAttribute: resource.kubernetes.io/pcieRoot``: no node has 8 GPUs under
one PCIe root, so it stays pending and ``why`` names the ``constraints`` stage. The template
``one-gpu`` asks for 1 GPU by class.

The simulated clock stands still (``ManualClock``): after the cluster has settled once (its controllers
and the scheduler's attempt on the trainer pod, timed apart), nothing happens between commands.
Each command runs as the CLI and the magic run it (``drawb.commands.registry.run_line``: parse, read
the cluster through the Cluster protocol, compute, and for preview and capacity the table): the first
call of the session (``first``) and the median of ``--runs`` further calls (``again``). With
``--changed``, each further call follows the deletion of one running pod (its claim is released: the
devices in use change, so what the commands keep for an unchanged cluster is made again).
Anchors in the same run: the simulated scheduler's own decision for the trainer pod
(``Lifecycle.decide``: its PreFilter state, a ``PlanState``, and its filters through
``drawb.alloc.verdicts``, alike nodes allocated once), which reaches the same verdict (no node) with
no explanation; and reading the scheduler's view ``why`` reads (``read_view``: the Cluster protocol's lists and
the ``PlanState`` made of them), the floor of any command; and
importing pandas in a fresh interpreter, which the first command making a table pays once per process
(``why`` makes none: the preview after it pays it in its first call).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import synthetic
from drawb.collector import collection_around_command
from drawb.commands.registry import run_line
from drawb.session import Session

GPU = "gpu.nvidia.com"
NS = "bench"


def _claim(name: str, request: dict, status: dict | None = None, constraints: list | None = None) -> dict:
    devices: dict = {"requests": [request]}
    if constraints:
        devices["constraints"] = constraints
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS},
             "spec": {"devices": devices}}
    if status:
        claim["status"] = status
    return claim


def _pod(name: str, claim: str, node: str | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
           "spec": {"containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}]}}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def cluster(nodes: int) -> SimCluster:
    """The half-allocated synthetic cluster with the pending trainer pod, as a simulated cluster."""
    scenario = synthetic(nodes, 8)
    by_node: dict[str, list[dict]] = {}
    for rs in scenario.resource_slices:
        by_node.setdefault(rs["spec"]["nodeName"], []).append(rs)
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]
    for name in sorted(by_node)[: nodes // 2]:
        results = [{"request": "req", "driver": GPU, "pool": name, "device": d["name"]}
                   for rs in by_node[name] if rs["spec"]["driver"] == GPU for d in rs["spec"]["devices"]]
        request = {"name": "req", "exactly": {"deviceClassName": GPU, "allocationMode": "ExactCount",
                                              "count": len(results)}}
        pod = _pod(f"job-{name}", f"full-{name}", node=name)
        pod["metadata"]["uid"] = f"pod-{name}"
        pod["status"] = {"phase": "Running"}
        objects.append(pod)
        objects.append(_claim(f"full-{name}", request, {
            "allocation": {"devices": {"results": results}},
            "reservedFor": [{"resource": "pods", "name": f"job-{name}", "uid": f"pod-{name}"}]}))
    eight = {"name": "gpus", "exactly": {"deviceClassName": GPU, "allocationMode": "ExactCount", "count": 8}}
    objects.append(_claim("eight", eight, constraints=[{"requests": ["gpus"],
                                                        "matchAttribute": "resource.kubernetes.io/pcieRoot"}]))
    objects.append(_pod("trainer", "eight"))
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": "one-gpu", "namespace": NS},
                    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                        "deviceClassName": GPU, "allocationMode": "ExactCount", "count": 1}}]}}}})
    scenario.objects = objects
    return SimCluster(scenario, workloads=False, clock=ManualClock())  # time stands still: no kubelet steps between calls


def decision(sim: SimCluster) -> str | None:
    """The simulated scheduler's decision for the trainer pod (None: no node), made as its loop makes it."""
    life = sim.lifecycle
    made = life.decide(life.pods[(NS, "trainer")], [life.claims[(NS, "eight")]])
    return made.node if made.scheduled else None


def timed(fn) -> tuple[float, object]:
    """Seconds ``fn`` took, and its value; it runs as a command of a front end runs, with the garbage
    collector's policy the front ends set around each command (``drawb.collector``)."""
    start = time.perf_counter()
    with collection_around_command():
        value = fn()
    return time.perf_counter() - start, value


COMMANDS = {
    "why trainer": f"why trainer -n {NS}",
    "preview template/one-gpu": f"preview template/one-gpu -n {NS}",
    "preview pod/trainer": f"preview pod/trainer -n {NS}",
    "capacity template/one-gpu": f"capacity template/one-gpu -n {NS}",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--only", choices=sorted(COMMANDS), action="append", help="run only these commands")
    parser.add_argument("--changed", action="store_true", help="delete one running pod before each further call")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    built, sim = timed(lambda: cluster(args.nodes))
    session = Session(namespace=NS)
    session._cluster = sim  # the connected cluster, as `%dra connect` leaves it
    settled, _ = timed(lambda: sim.list("Namespace"))  # the cluster's own catch-up: the scheduler tries the trainer pod
    print(f"synthetic({args.nodes}, 8), half allocated: built in {built:.1f} s, settled in {settled:.1f} s")
    running = sorted(p["metadata"]["name"] for p in sim.list("Pod", NS) if p["metadata"]["name"].startswith("job-"))

    def again_once(line: str) -> float:
        if args.changed:
            sim.delete("Pod", running.pop(), NS, force_unmanaged=True)
            sim.list("Namespace")  # the controllers release the claim before the timed call
        return timed(lambda: run_line(session, line, prog="drawb"))[0]

    for label, line in COMMANDS.items():
        if args.only and label not in args.only:
            continue
        first, result = timed(lambda: run_line(session, line, prog="drawb"))
        again = [again_once(line) for _ in range(args.runs)]
        summary = getattr(result, "summary", None) or getattr(result, "sentence", None) or str(result)[:200]
        print(f"| {label} | first {first * 1e3:,.0f} ms | again median {statistics.median(again) * 1e3:,.0f} ms "
              f"(min {min(again) * 1e3:,.0f}) |")
        print(f"    {summary[:300]}")
    from drawb.plan.read import read_view

    reads = [timed(lambda: read_view(session.cluster, session.rules_version, explaining=True))[0]
             for _ in range(max(1, args.runs))]
    print(f"| anchor: read_view (the Cluster protocol's lists, the PlanState made of them) | median "
          f"{statistics.median(reads) * 1e3:,.0f} ms |")
    anchors = [timed(lambda: decision(sim)) for _ in range(max(1, args.runs // 2))]
    print(f"| anchor: simulated scheduler's decision for the trainer pod (node: {anchors[-1][1]}) | median "
          f"{statistics.median(a[0] for a in anchors) * 1e3:,.0f} ms |")
    imports = [pandas_import() for _ in range(3)]
    print(f"| anchor: import pandas in a fresh interpreter (the first table of a process pays it) | median "
          f"{statistics.median(imports) * 1e3:,.0f} ms |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


def pandas_import() -> float:
    """Seconds to import pandas in a new interpreter: part of the first call of the first command that
    makes a table (why makes none, so the next command pays it)."""
    code = "import time; t = time.perf_counter(); import pandas; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


if __name__ == "__main__":
    sys.exit(main())
