"""A Deployment of 1,000 one-GPU replicas on the 10,000-node synthetic cluster: apply to every pod scheduled.

Run: nice -n 5 .venv/bin/python bench/bench_deployment.py [--nodes 10000] [--replicas 1000] [--runs 3]

Each run makes a fresh simulated cluster of ``synthetic(--nodes, 8)`` (its build is not timed) on a clock
that stands still (``ManualClock``: no container starts meanwhile), then times ``apply`` of a namespace, the
ResourceClaimTemplate ``one-gpu`` (one GPU of ``gpu.nvidia.com``) and a Deployment of ``--replicas`` pods
using it, until every pod of the Deployment has a node: the Deployment controller makes the ReplicaSet, the
ReplicaSet controller the pods, the resourceclaim controller their claims, and the scheduler allocates a GPU
to each and binds it. Each figure is the median of ``--runs``, as wall time (``time.perf_counter``: what a
user waits, which a loaded host stretches) and as the process's CPU time (``time.process_time``: the work
done, nearly the wall time on a quiet host); the load average is printed beside them.

Anchor in the same run: the same pods (the same template, claims from the same ResourceClaimTemplate)
applied as ``--replicas`` bare Pods to a fresh cluster of the same size, timed the same way: the scheduler's
and the resourceclaim controller's share, without the workload controllers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import synthetic

NS = "bench"
GPU = "gpu.nvidia.com"


def _template() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]}}}}


def _pod_spec() -> dict:
    return {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            "containers": [{"name": "main", "image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
                            "command": ["sleep", "infinity"], "resources": {"claims": [{"name": "gpu"}]}}]}


def deployment(replicas: int) -> dict:
    """The benchmark's Deployment."""
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainers", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "trainers"}},
                     "template": {"metadata": {"labels": {"app": "trainers"}}, "spec": _pod_spec()}}}


def bare_pods(replicas: int) -> list[dict]:
    """The anchor's pods."""
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"trainer-{i}", "namespace": NS,
                                                             "labels": {"app": "trainers"}}, "spec": _pod_spec()}
            for i in range(replicas)]


def timed_apply(nodes: int, workload: list[dict], replicas: int) -> tuple[float, float]:
    """Wall and CPU seconds from apply to every pod of ``workload`` bound, on a fresh cluster."""
    sim = SimCluster(synthetic(nodes, 8), clock=ManualClock())
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, _template(), *workload]
    start, cpu = time.perf_counter(), time.process_time()
    sim.apply(objects)
    pods = sim.list("Pod", NS)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    bound = sum(1 for p in pods if p["spec"].get("nodeName"))
    if len(pods) != replicas or bound != replicas:
        sys.exit(f"expected {replicas} bound pods, found {len(pods)} pods of which {bound} bound")
    sim.close()
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--replicas", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    deploy, anchor = [], []
    for _ in range(args.runs):
        deploy.append(timed_apply(args.nodes, [deployment(args.replicas)], args.replicas))
        anchor.append(timed_apply(args.nodes, bare_pods(args.replicas), args.replicas))
    print(f"nodes={args.nodes} replicas={args.replicas} runs={args.runs} load average {os.getloadavg()}")
    for label, runs in ((f"Deployment of {args.replicas}", deploy), (f"anchor: {args.replicas} bare pods", anchor)):
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"{label}: apply -> every pod scheduled, median wall {wall * 1000:,.0f} ms, CPU {cpu * 1000:,.0f} ms "
              f"(runs, wall/CPU ms: {[(round(w * 1000), round(c * 1000)) for w, c in runs]})")
    wall, cpu = statistics.median(r[0] for r in deploy), statistics.median(r[1] for r in deploy)
    base = statistics.median(r[1] for r in anchor)
    print(f"CPU ratio to the anchor {cpu / base:.2f}; budget 10,000 ms: wall {'met' if wall <= 10 else 'missed'}, "
          f"CPU {'met' if cpu <= 10 else 'missed'}")


if __name__ == "__main__":
    main()
