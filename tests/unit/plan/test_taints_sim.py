"""Device taints on the simulated cluster: ``taint``'s blast radius against what the simulated
controllers then do (eviction honouring tolerations and tolerationSeconds, the scheduler keeping
new allocations off tainted devices), and ``taints`` listing what each taint reaches."""

from __future__ import annotations

import json

import pytest

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.errors import UsageError
from drawb.session import Session

NODE = "hgx-h200-03"  # 8 whole H200s


def claim(name: str, count: int = 1, tolerations: list | None = None, selector: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": "gpu.nvidia.com", "count": count}
    if tolerations:
        exactly["tolerations"] = tolerations
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def pod(name: str, claim_name: str, node: str | None = NODE, gated: bool = False) -> dict:
    spec: dict = {"resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
                  "containers": [{"name": "c", "image": "cuda", "command": ["sleep", "infinity"],
                                  "resources": {"claims": [{"name": "gpu"}]}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/queue"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


H200 = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H200")'


@pytest.fixture
def cluster() -> SimCluster:
    sim = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version="1.37")
    forever = [{"key": "drawb/taint", "operator": "Exists", "effect": "NoExecute"}]
    for_a_minute = [{"key": "drawb/taint", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    sim.apply([claim("plain", selector=H200), claim("forever", tolerations=forever, selector=H200),
               claim("minute", tolerations=for_a_minute, selector=H200), claim("waiting", 5, selector=H200),
               claim("elsewhere")])
    sim.apply([pod("plain", "plain"), pod("forever", "forever"), pod("minute", "minute")])
    sim.apply([pod("waiting", "waiting", gated=True), pod("elsewhere", "elsewhere", node=None, gated=True)])
    sim.sleep(5)
    return sim


def names(cluster: SimCluster, kind: str = "Pod") -> set[str]:
    return {o["metadata"]["name"] for o in cluster.list(kind, "default")}


def test_noexecute_preview_names_what_the_controllers_then_do(cluster):
    session = Session(_cluster=cluster)
    preview = json.loads(run_line(session, f"taint --driver gpu.nvidia.com --pool {NODE} --effect NoExecute --json"))
    assert preview["claims"] == ["default/forever", "default/minute", "default/plain"]
    assert preview["evicted_pods"] == ["default/minute", "default/plain"]
    assert preview["evictions"] == [{"pod": "default/minute", "after_seconds": 60.0}, {"pod": "default/plain", "after_seconds": 0.0}]
    # the five H200s left fit only on this node: lost; one GPU of any kind fits anywhere: kept
    assert preview["pending_pods_losing_fit"] == ["default/waiting"]
    assert len(preview["devices"]) == 8 and preview["written"] is None
    assert names(cluster) == {"plain", "forever", "minute", "waiting", "elsewhere"}  # a preview writes nothing

    applied = json.loads(run_line(session, f"taint --driver gpu.nvidia.com --pool {NODE} --effect NoExecute --apply --json"))
    assert applied["evicted_pods"] == preview["evicted_pods"] and applied["written"] == "applied"
    cluster.sleep(1)
    assert names(cluster) == {"forever", "minute", "waiting", "elsewhere"}
    cluster.sleep(60)
    assert names(cluster) == {"forever", "waiting", "elsewhere"}
    events = [e for e in cluster.list("Event", "default") if e["reason"] == "DeviceTaintManagerEviction"]
    assert sorted(e["involvedObject"]["name"] for e in events) == ["minute", "plain"]

    for name in ("waiting", "elsewhere"):  # the queue lets them go: the scheduler keeps off the tainted devices
        ungated = pod(name, name, node=NODE if name == "waiting" else None)
        cluster.apply([ungated])
    cluster.sleep(5)
    placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in cluster.list("Pod", "default")}
    assert placed["waiting"] is None
    assert placed["elsewhere"] not in (None, NODE)


def test_taints_lists_each_rule_with_what_it_reaches(cluster):
    session = Session(_cluster=cluster)
    run_line(session, f"taint --device gpu.nvidia.com/{NODE}/gpu-0 --device gpu.nvidia.com/{NODE}/gpu-1 "
                      "--effect NoSchedule --key example.com/maintenance --apply")
    listed = json.loads(run_line(session, "taints --json"))["taints"]
    assert len(listed) == 2 and {t["effect"] for t in listed} == {"NoSchedule"}
    reached = {d: (t["claims"], t["pods"]) for t in listed for d in t["devices"]}
    claims = [c for c, _ in reached.values() if c]
    assert set(reached) == {f"gpu.nvidia.com/{NODE}/gpu-0", f"gpu.nvidia.com/{NODE}/gpu-1"}
    assert all(len(c) == 1 for c in claims) and all(p for _, p in reached.values() if _)
    assert all(t["source"].startswith("DeviceTaintRule/drawb-taint-") for t in listed)
    frame = run_line(session, "taints")
    assert list(frame["effect"]) == ["NoSchedule", "NoSchedule"]


def test_a_slice_taint_is_listed_and_evicts_as_a_rule_does():
    sim = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version="1.37")
    sim.apply([claim("plain", selector=H200)])
    sim.apply([pod("plain", "plain")])
    sim.sleep(5)
    device = sim.get("ResourceClaim", "plain", "default")["status"]["allocation"]["devices"]["results"][0]["device"]
    rs = next(s for s in sim.list("ResourceSlice") if s["spec"]["pool"]["name"] == NODE and s["spec"]["driver"] == "gpu.nvidia.com")
    def publish(effect: str) -> None:  # as the driver republishes its slice
        tainted = json.loads(json.dumps(rs))
        for d in tainted["spec"]["devices"]:
            if d["name"] == device:
                d["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": effect}]
        sim._store(tainted)

    publish("NoSchedule")
    listed = json.loads(run_line(Session(_cluster=sim), "taints --json"))["taints"]
    assert [(t["source"], t["key"], t["devices"], t["pods"]) for t in listed] == [
        (f"ResourceSlice/{rs['metadata']['name']}", "gpu.nvidia.com/xid", [f"gpu.nvidia.com/{NODE}/{device}"], ["default/plain"])]
    sim.sleep(1)
    assert names(sim) == {"plain"}
    publish("NoExecute")
    sim.sleep(1)
    assert names(sim) == set()


BAD_INPUT = {  # a taint command line -> what its refusal says
    "taint --effect NoSchedule": "name the devices",
    f"taint --pool {NODE} --effect PreferNoSchedule": "not a device taint effect",
    f"taint --device gpu.nvidia.com/{NODE}/gpu-9 --effect NoSchedule": "no published device gpu.nvidia.com/hgx-h200-03/gpu-9",
    "taint --device gpu-0 --effect NoSchedule": "is not DRIVER/POOL/DEVICE",
    f"taint --pool {NODE} --effect NoSchedule --key 'not a key'": "--key",
    f"taint --pool {NODE} --effect NoSchedule --dry-run --apply": "exclude each other",
}


def test_bad_input_is_refused_with_what_to_write(cluster):
    session = Session(_cluster=cluster)
    for line, refusal in BAD_INPUT.items():
        with pytest.raises(UsageError, match=refusal):
            run_line(session, line)


def test_effect_none_exists_from_135_and_rules_are_served_where_the_minor_serves_them():
    old = Session(_cluster=SimCluster(workloads=False, clock=ManualClock(), kubernetes_version="1.34"))
    with pytest.raises(UsageError, match="not a device taint effect of Kubernetes 1.34") as refused:
        run_line(old, "taint --pool hgx-h200-03 --effect None")
    assert refused.value.hint == "one of NoSchedule, NoExecute"
    beta = Session(_cluster=SimCluster(workloads=False, clock=ManualClock(), kubernetes_version="1.36"))
    preview = json.loads(run_line(beta, "taint --pool hgx-h200-03 --effect None --json"))
    assert preview["rules"][0]["apiVersion"] == "resource.k8s.io/v1beta2" and preview["evicted_pods"] == []
    with pytest.raises(ClusterError, match="runtime-config=resource.k8s.io/v1beta2=true"):
        run_line(beta, "taint --pool hgx-h200-03 --effect NoExecute --dry-run")
