"""The opt-in live probe: a labelled claim and pod that the scheduler must serve, removed afterwards.

The dry-run probes prove what the API server keeps; only a real scheduling shows that the
scheduler (and, for Running, the kubelet and the driver) handle DRA. This creates objects for a
few seconds, holds one device meanwhile, and deletes everything it created.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from drawb.cluster.owner import OWNER_ANNOTATION, this_process
from drawb.cluster.protocol import Cluster, ClusterError
from drawb.doctor.checks import GPU_DRIVER
from drawb.doctor.probes import ON, Outcome
from drawb.doctor.report import FAIL, PASS, WARN, Report

PROBE_LABEL = "drawb.dev/doctor-probe"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def _meta(name: str, namespace: str, token: str) -> dict:
    # the process running the probe: `cleanup` removes the probe of a killed doctor
    return {"name": name, "namespace": namespace, "labels": {PROBE_LABEL: token},
            "annotations": {OWNER_ANNOTATION: this_process()}}


def probe_claim(name: str, namespace: str, token: str, prioritized: bool) -> dict:
    """One GPU of class gpu.nvidia.com, through ``firstAvailable`` when the API server keeps it."""
    exact = {"deviceClassName": GPU_DRIVER}
    request = ({"name": "gpu", "firstAvailable": [{"name": "one", **exact}]} if prioritized
               else {"name": "gpu", "exactly": exact})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": _meta(name, namespace, token),
            "spec": {"devices": {"requests": [request]}}}


def probe_pod(name: str, namespace: str, token: str, *, claim: str | None = None,
              extended: str | None = None) -> dict:
    """A pause pod using ``claim``, or asking for one ``extended`` resource; tolerates every taint."""
    container: dict = {"name": "probe", "image": PAUSE_IMAGE}
    spec: dict = {"containers": [container], "terminationGracePeriodSeconds": 0,
                  "tolerations": [{"operator": "Exists"}], "restartPolicy": "Never"}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        container["resources"] = {"claims": [{"name": "gpu"}]}
    if extended:
        container["resources"] = {"limits": {extended: "1"}, "requests": {extended: "1"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(name, namespace, token), "spec": spec}


def _wait(condition: Callable[[], object], timeout: float, interval: float = 0.2) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def _allocation(claim: dict | None) -> str:
    results = (((claim or {}).get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    return ", ".join(f"{r['pool']}/{r['device']}" + (f" (subrequest {r['request']})" if "/" in r["request"] else "")
                     for r in results)


def _extended_class(cluster: Cluster) -> str | None:
    for cls in cluster.list("DeviceClass"):
        if (cls.get("spec") or {}).get("extendedResourceName") and cls["metadata"]["name"] == GPU_DRIVER:
            return cls["spec"]["extendedResourceName"]
    return None


def live_probe(report: Report, cluster: Cluster, namespace: str, outcomes: dict[str, Outcome],
               timeout: float = 60) -> None:
    """Create the probe claim and pod(s), report what the scheduler and kubelet did, remove them."""
    token = secrets.token_hex(3)
    name = f"drawb-doctor-live-{token}"
    prioritized = outcomes.get("DRAPrioritizedList", Outcome("", "")).state == ON
    extended = _extended_class(cluster) if outcomes.get("DRAExtendedResource", Outcome("", "")).state == ON else None
    objects = [probe_claim(name, namespace, token, prioritized), probe_pod(name, namespace, token, claim=name)]
    if extended:
        objects.append(probe_pod(f"{name}-ext", namespace, token, extended=extended))
    try:
        cluster.apply(objects)
    except ClusterError as exc:
        report.add("live: probe objects", FAIL, f"could not create the probe claim and pod in {namespace}: {exc}",
                   "needs `create` and `delete` on resourceclaims and pods there; pick a namespace with -n")
        return
    try:
        _report_claim(report, cluster, name, namespace, prioritized, timeout)
        if extended:
            _report_extended(report, cluster, f"{name}-ext", namespace, extended, timeout)
    finally:
        _remove(report, cluster, objects, namespace, timeout)


def _report_claim(report: Report, cluster: Cluster, name: str, namespace: str, prioritized: bool,
                  timeout: float) -> None:
    claim = _wait(lambda: (c := cluster.get("ResourceClaim", name, namespace)) and _allocation(c) and c, timeout)
    if not claim:
        fix = ("this simulated cluster runs no scheduler; run --live against a real cluster" if report.simulated else
               "check kube-scheduler's DynamicResourceAllocation support and its events "
               f"(`kubectl -n {namespace} describe pod {name}` while it runs)")
        report.add("live: scheduler allocates", FAIL,
                   f"the probe claim {namespace}/{name} was not allocated within {timeout:g} s", fix)
        return
    how = "through firstAvailable, so the scheduler has DRAPrioritizedList on" if prioritized else "(exactly)"
    report.add("live: scheduler allocates", PASS, f"the scheduler allocated {_allocation(claim)} to the probe claim {how}")
    pod = _wait(lambda: (p := cluster.get("Pod", name, namespace)) and (p.get("status") or {}).get("phase") == "Running"
                and p, timeout)
    if pod:
        report.add("live: pod runs", PASS, f"the probe pod ran on {pod['spec'].get('nodeName')}: the kubelet "
                   "prepared the device through the driver")
    else:
        report.add("live: pod runs", WARN, f"the probe pod did not reach Running within {timeout:g} s",
                   "check the kubelet and the DRA driver's kubelet plugin on that node (`kubectl describe pod`)")


def _report_extended(report: Report, cluster: Cluster, name: str, namespace: str, resource: str,
                     timeout: float) -> None:
    def mapped():
        pod = cluster.get("Pod", name, namespace) or {}
        return (pod.get("status") or {}).get("extendedResourceClaimStatus") and pod

    pod = _wait(mapped, timeout)
    if pod:
        claim = pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        report.add("live: extended resource", PASS, f"a pod asking for {resource}: 1 was served through DRA "
                   f"(claim {claim}): the scheduler has DRAExtendedResource on")
    else:
        report.add("live: extended resource", WARN, f"a pod asking for {resource}: 1 was not served through DRA "
                   f"within {timeout:g} s",
                   "set --feature-gates=DRAExtendedResource=true on kube-scheduler and the kubelets too")


def _remove(report: Report, cluster: Cluster, objects: list[dict], namespace: str, timeout: float) -> None:
    problems = []
    for obj in reversed(objects):
        try:
            cluster.delete(obj["kind"], obj["metadata"]["name"], namespace)
        except ClusterError as exc:
            if exc.status != 404:
                problems.append(f"{obj['kind']} {obj['metadata']['name']}: {exc}")
    gone = _wait(lambda: not [o for o in objects if cluster.get(o["kind"], o["metadata"]["name"], namespace)],
                 timeout)
    if problems or not gone:
        still = [f"{o['kind']}/{o['metadata']['name']}" for o in objects
                 if cluster.get(o["kind"], o["metadata"]["name"], namespace)]
        report.add("live: cleanup", FAIL, f"left behind in {namespace}: {', '.join(still + problems)}",
                   f"delete them: `kubectl -n {namespace} delete pods,resourceclaims -l {PROBE_LABEL}`")
    else:
        report.add("live: cleanup", PASS, f"removed the {len(objects)} probe objects from {namespace}")
