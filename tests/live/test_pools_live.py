"""``pools`` on the real control plane with ``DRAResourcePoolStatus`` on (1.36 and later): drawb writes a
ResourcePoolStatusRequest, kube-controller-manager answers it, and every field where the answer differs
from drawb's counts carries its reason (1.36's alpha controller counts no taint; 1.37's counts tainted
allocated devices as unavailable too); the devices per pool agree. The simulated cluster holding the
same objects counts the same.
"""

from __future__ import annotations

import json

import pytest

from drawb import versions
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.session import Session
from drawb.testing.api import path_for
from drawb.testing.build import target_k8s_version
from drawb.testing.waiting import wait_for

RULES = versions.rules(target_k8s_version())

# CI runs it with the every_version tests at the newest release; a minor without the API has nothing to compare
pytestmark = [pytest.mark.live, pytest.mark.every_version,
              pytest.mark.skipif(not RULES.kind_versions("ResourcePoolStatusRequest"),
                                 reason=f"Kubernetes {RULES.minor} serves no ResourcePoolStatusRequest (1.36 and later do)")]
NODE = "hgx-h200-03"
FALLBACKS = ("changed between the two reads",)


@pytest.fixture(scope="module")
def cluster(start_control_plane):
    gates = {"DRAResourcePoolStatus": True, RULES.kind_gate("DeviceTaintRule"): True}
    gates = {g: v for g, v in gates.items() if not RULES.gates[g].locked}
    # kube-scheduler and kube-controller-manager read DeviceTaintRules through the version drawb prefers
    # (1.36: v1beta2); while it is not served they never sync
    rules_version = RULES.kind_versions("DeviceTaintRule")[0]
    extra = "" if rules_version in ("v1", "v1alpha3") else f",resource.k8s.io/{rules_version}=true"
    cp = start_control_plane(gates, runtime_config="resource.k8s.io/v1alpha3=true" + extra)
    yield cp
    cp.cluster.down()


def workload(namespace: str) -> list[dict]:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two", "namespace": namespace},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two", "namespace": namespace},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": NODE}, "terminationGracePeriodSeconds": 0,
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "two"}],
                    "containers": [{"name": "c", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}]}}
    return [claim, pod]


def counts(result: dict) -> dict:
    return {(p["driver"], p["poolName"]): {k: v for k, v in p.items() if k != "generation"} for p in result["status"]["pools"]}


def test_drawbs_pool_counts_beside_the_servers_answer(cluster):
    api = cluster.api()
    namespace = cluster.create_namespace("pools")
    objects = workload(namespace)
    for obj in objects:
        api.create(obj)
    wait_for(lambda: api.get(path_for("Pod", "two", namespace))["spec"].get("nodeName"), timeout=60, what="pod scheduled")
    session = Session(kubeconfig=str(cluster.kubeconfig), namespace=namespace)
    first = json.loads(run_line(session, "pools --json"))
    assert first["server"] is not None, first["note"]
    assert first["differences"] == []  # no taint, no shared device: the same counts
    h200 = counts(first)[("gpu.nvidia.com", NODE)]
    assert (h200["totalDevices"], h200["allocatedDevices"], h200["availableDevices"]) == (8, 2, 6)

    sim = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version=RULES.minor)
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    sim.apply(objects)
    sim.sleep(5)
    assert counts(json.loads(run_line(Session(_cluster=sim), "pools --json"))) == counts(first)

    run_line(session, f"taint --driver gpu.nvidia.com --pool {NODE} --effect NoSchedule --apply")
    second = json.loads(run_line(session, "pools --json"))
    print(run_line(session, "pools --driver gpu.nvidia.com"))  # as the docs show it
    ours = counts(second)[("gpu.nvidia.com", NODE)]
    assert (ours["allocatedDevices"], ours["unavailableDevices"], ours["availableDevices"]) == (2, 6, 0)
    found = {(d["pool"], d["field"]): d for d in second["differences"]}
    assert {pool for pool, _ in found} == {NODE}
    assert all(not any(f in d["why"] for f in FALLBACKS) for d in found.values()), found
    theirs = {(p["driver"], p["poolName"]): p for p in second["server"]["pools"]}[("gpu.nvidia.com", NODE)]
    if RULES.has("pools.counts_taints"):
        assert theirs["unavailableDevices"] == 8 and "allocated device(s) are tainted" in found[(NODE, "unavailableDevices")]["why"]
    else:
        assert theirs["unavailableDevices"] == 0 and "does not look at taints" in found[(NODE, "unavailableDevices")]["why"]
    assert all(d["field"] != "totalDevices" for d in found.values())
    api.delete(path_for("Namespace", namespace))
