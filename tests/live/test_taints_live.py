"""``taint`` on the real control plane: a DeviceTaintRule drawb applies evicts exactly the pods its preview
named (observed: kube-controller-manager deletes them), a pod tolerating the taint for a while goes when
its ``tolerationSeconds`` run out, one tolerating it for ever stays, and the pending pods it named stay
pending once their scheduling gate is lifted (the real scheduler keeps off the tainted devices). The
simulated cluster holding the same objects, at the same version and gates, gives the same answers.

The cluster is this module's own (the rule taints a whole node's GPUs), started with what the version
needs to serve and honour DeviceTaintRules (``drawb.versions``: the group version, through
``--runtime-config`` where it is not v1, and the gate).
"""

from __future__ import annotations

import json
import time

import pytest

from drawb import versions
from drawb.alloc.rules import rules_for
from drawb.alloc.versions import flavor
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.session import Session
from drawb.testing.api import path_for
from drawb.testing.build import target_k8s_version
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

NODE = "hgx-h200-03"  # 8 whole H200s in the published scenario
H200 = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H200")'
KEY = "example.com/maintenance"
RULES = versions.rules(target_k8s_version())
GATES = {RULES.kind_gate("DeviceTaintRule"): True, "DRADeviceTaints": True}
# 1.34's allocator leaves the request's tolerations out of its results, and the controller reads the results:
# there a NoExecute taint evicts every pod on its devices at once, tolerations or not.
TOLERATIONS_KEPT = rules_for(flavor(RULES.minor, GATES)).tolerations_in_results


@pytest.fixture(scope="module")
def cluster(start_control_plane):
    version = RULES.kind_versions("DeviceTaintRule")[0]
    cp = start_control_plane({g: v for g, v in GATES.items() if not RULES.gates[g].default},
                             runtime_config="" if version == "v1" else f"resource.k8s.io/{version}=true")
    yield cp
    cp.cluster.down()


def claim(name: str, namespace: str, count: int = 1, seconds: int | None = None, forever: bool = False,
          any_gpu: bool = False) -> dict:
    exactly: dict = {"deviceClassName": "gpu.nvidia.com", "count": count}
    if not any_gpu:
        exactly["selectors"] = [{"cel": {"expression": H200}}]
    if forever or seconds is not None:
        exactly["tolerations"] = [{"key": KEY, "operator": "Exists", "effect": "NoExecute",
                                   **({"tolerationSeconds": seconds} if seconds is not None else {})}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def pod(name: str, namespace: str, pinned: bool = True, gated: bool = False) -> dict:
    spec: dict = {"resourceClaims": [{"name": "gpu", "resourceClaimName": name}], "terminationGracePeriodSeconds": 0,
                  "containers": [{"name": "c", "image": "cuda", "command": ["sleep", "infinity"],
                                  "resources": {"claims": [{"name": "gpu"}]}}],
                  "tolerations": [{"operator": "Exists"}]}
    if pinned:
        spec["nodeSelector"] = {"kubernetes.io/hostname": NODE}
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/queue"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def objects(namespace: str) -> tuple[list[dict], list[dict], list[dict]]:
    """Claims, running pods and gated pods: plain (evicted at once), minute (evicted after 20 s), forever
    (stays); waiting (the five H200s left, only on this node: loses its fit), elsewhere (any GPU: keeps it)."""
    claims = [claim("plain", namespace), claim("minute", namespace, seconds=20), claim("forever", namespace, forever=True),
              claim("waiting", namespace, count=5), claim("elsewhere", namespace, any_gpu=True)]
    running = [pod(n, namespace) for n in ("plain", "minute", "forever")]
    gated = [pod("waiting", namespace, gated=True), pod("elsewhere", namespace, pinned=False, gated=True)]
    return claims, running, gated


def pods_of(api, namespace: str) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in api.get(path_for("Pod", namespace=namespace))["items"]}


def answer(data: dict) -> dict:
    return {k: data[k] for k in ("devices", "claims", "evicted_pods", "pending_pods_losing_fit", "evictions")}


COMMAND = f"taint --driver gpu.nvidia.com --pool {NODE} --effect NoExecute --key {KEY} --json"


def test_an_applied_rule_evicts_exactly_the_pods_its_preview_named(cluster, timings):
    api = cluster.api()
    namespace = cluster.create_namespace("taints")
    claims, running, gated = objects(namespace)
    for obj in [*claims, *running, *gated]:
        api.create(obj)
    wait_for(lambda: all(p["spec"].get("nodeName") == NODE and p["status"].get("phase") == "Running"
                         for n, p in pods_of(api, namespace).items() if n in ("plain", "minute", "forever")),
             timeout=120, what="the three pods running on " + NODE)
    session = Session(kubeconfig=str(cluster.kubeconfig), namespace=namespace)
    start = time.monotonic()
    preview = json.loads(run_line(session, COMMAND))
    timings["taint_preview_live_s"] = time.monotonic() - start
    ours = [f"{namespace}/{n}" for n in ("forever", "minute", "plain")]
    assert preview["claims"] == ours
    evicted = ["minute", "plain"] if TOLERATIONS_KEPT else ["forever", "minute", "plain"]
    assert preview["evicted_pods"] == [f"{namespace}/{n}" for n in evicted]
    assert preview["pending_pods_losing_fit"] == [f"{namespace}/waiting"]
    assert len(preview["devices"]) == 8

    # the simulated cluster with the same objects, version and gates answers the same
    sim = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version=RULES.minor, feature_gates=GATES)
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    sim.apply(claims)
    sim.apply([*running, *gated])
    sim.sleep(5)
    assert answer(json.loads(run_line(Session(_cluster=sim, namespace=namespace), COMMAND))) == answer(preview)

    applied = json.loads(run_line(session, COMMAND.replace("--json", "--apply --json")))
    assert applied["written"] == "applied" and answer(applied) == answer(preview)
    rule_name = applied["rules"][0]["metadata"]["name"]
    if not TOLERATIONS_KEPT:
        wait_for(lambda: not {"plain", "minute", "forever"} & set(pods_of(api, namespace)), timeout=60, what="all evicted")
    else:
        gone = wait_for(lambda: "plain" not in pods_of(api, namespace) or None, timeout=60, what="plain evicted")
        assert gone and {"minute", "forever"} <= set(pods_of(api, namespace))
        wait_for(lambda: "minute" not in pods_of(api, namespace), timeout=90, what="minute evicted after 20 s")
    left = pods_of(api, namespace)
    kept = {"forever"} if TOLERATIONS_KEPT else set()
    assert set(left) == kept | {"waiting", "elsewhere"}
    if TOLERATIONS_KEPT:
        assert left["forever"]["status"].get("phase") == "Running"

    for name in ("waiting", "elsewhere"):  # the queue lets them go
        current = left[name]
        current["spec"]["schedulingGates"] = []
        api.request("PUT", path_for("Pod", name, namespace), current)
    wait_for(lambda: pods_of(api, namespace)["elsewhere"]["spec"].get("nodeName"), timeout=60, what="elsewhere scheduled")
    waiting = wait_for(lambda: next((c for c in pods_of(api, namespace)["waiting"]["status"].get("conditions") or ()
                                     if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"), None),
                       timeout=60, what="waiting unschedulable")
    assert pods_of(api, namespace)["waiting"]["spec"].get("nodeName") is None, waiting
    assert pods_of(api, namespace)["elsewhere"]["spec"]["nodeName"] != NODE

    listed = json.loads(run_line(session, "taints --json"))["taints"]
    mine = [t for t in listed if t["source"] == f"DeviceTaintRule/{rule_name}"]
    assert len(mine) == 1 and len(mine[0]["devices"]) == 8 and mine[0]["pods"] == [f"{namespace}/{n}" for n in sorted(kept)]
    api.delete(path_for("Namespace", namespace))
    if RULES.kind_versions("DeviceTaintRule")[0] == "v1":
        run_line(session, f"delete devicetaintrule {rule_name}")
